"""The partner family's endpoints: `/integrations/partner-a/*` and its partner-b/c twins."""

from django.db import transaction
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.response import Response

from delivery.schema import errors, query_date
from delivery.serializers import optional_body, valid_serializer
from integrations import openapi_examples as examples
from integrations.partner import selectors, services
from integrations.partner.serializers import (
    CancelInput,
    DeliveryWindowsQuery,
    PartnerOrderCreatedOutput,
    PartnerOrderInput,
    PartnerOrderOutput,
    PartnerOrderReleasedOutput,
    ZoneWindowsOutput,
)
from integrations.services import idempotency
from tenants.api_bases import IntegrationApiView

IDEMPOTENCY_HEADER = "Idempotency-Key"


def _idempotency_key(request) -> str | None:
    return idempotency.idempotency_key_read(request.headers.get(IDEMPOTENCY_HEADER))


class PartnerOrdersApi(IntegrationApiView):
    @extend_schema(
        summary="Create a partner order",
        parameters=[
            OpenApiParameter(
                IDEMPOTENCY_HEADER,
                # printable ASCII (HTTP trims spaces at either end)
                {
                    "type": "string",
                    "pattern": "^[\\x21-\\x7e](?:[\\x20-\\x7e]{0,253}[\\x21-\\x7e])?$",
                },
                OpenApiParameter.HEADER,
                description="Optional; a repeat within 24 h replays the first response with "
                "`Idempotent-Replayed: true` (contract: Orders)",
            )
        ],
        request=PartnerOrderInput,
        responses={
            201: OpenApiResponse(PartnerOrderCreatedOutput, description="Order created"),
            **errors(400, 401, 403, 404, 409, 413, 415, 422, 429, 503),
        },
        examples=examples.PARTNER_ORDER_CREATE,
    )
    def post(self, request):
        """Creates a delivery order under the partner's `externalRef`, in the zone named by
        `deliveryZone` or else the zone containing the dropoff point, and books the delivery
        window containing `deliveryWindowStart`; sends `order.created` (contract: Orders). The
        answer carries `trackingToken` and `trackingUrl`, the public page of the order. With an
        `Idempotency-Key`, a repeat within 24 hours replays the first answer instead of creating a
        second order. An order whose window starts on a later day is held from dispatch until
        released.

        Errors:

        - 400 listing every problem of the body (`externalRef required`, `packageSize or weightKg
          required`, `dropoffLat/dropoffLng required unless geocodeOnIngest is true`, ...), 400
          `Could not geocode <field>`, `No delivery zone covers the dropoff location`, `No delivery
          window at <start>`, `Delivery window is full`, `Zone <name> takes no deliveries on <date>`

        - 404 `Zone <name> not found`

        - 409 `Order with externalRef <ref> already exists`, `A request with this Idempotency-Key is
          in progress`

        - 422 `Idempotency-Key was already used with a different request body`

        - 503 when the geocoder does not answer"""
        principal = request.auth
        key = _idempotency_key(request)

        def create() -> tuple[int, dict]:
            serializer = valid_serializer(PartnerOrderInput, request.data)
            order = services.partner_order_create(
                organization_id=principal.organization_id,
                platform=principal.platform,
                draft=services.PartnerOrderDraft(**serializer.validated_data),
                actor=self.actor,
                api_key_id=principal.key_id,
            )
            return 201, PartnerOrderCreatedOutput(order, context={"request": request}).data

        if key is None:
            # The request's transaction, as idempotent_run opens one for a keyed request: the
            # service joins it without a savepoint of its own (partner_order_create).
            with transaction.atomic():
                status, body = create()
            return Response(body, status=status)
        result = idempotency.idempotent_run(
            owner_id=principal.key_id,
            key=key,
            fingerprint=idempotency.request_fingerprint(
                method=request.method, path=request.path, body=request.data
            ),
            operation=create,
        )
        headers = {"Idempotent-Replayed": "true"} if result.replayed else {}
        return Response(result.body, status=result.status, headers=headers)


class PartnerOrderDetailApi(IntegrationApiView):
    @extend_schema(
        summary="Read a partner order",
        responses={200: PartnerOrderOutput, **errors(401, 403, 404, 429)},
        examples=examples.PARTNER_ORDER_READ,
    )
    def get(self, request, external_ref):
        """The order by the partner's `externalRef`: its status and partner-facing
        `currentMappingStatus` (`created`, `released`, then the status name), the assigned
        driver (`null` until one is), the delivery window, and the tracking token and page
        (contract: Orders). Partners poll it, or follow the `order.*` webhooks instead.

        Errors:

        - 404 `Order not found` (unknown, or another organization's reference)"""
        order = selectors.partner_order_get(
            organization_id=request.auth.organization_id, external_ref=external_ref
        )
        return Response(PartnerOrderOutput(order, context={"request": request}).data)


class PartnerOrderReleaseApi(IntegrationApiView):
    @extend_schema(
        summary="Release a held order for dispatch",
        request=None,
        responses={200: PartnerOrderReleasedOutput, **errors(401, 403, 404, 409, 429)},
        examples=examples.PARTNER_ORDER_RELEASE,
    )
    def post(self, request, external_ref):
        """Releases an order held for a later delivery day to the couriers now: `pending` becomes
        `dispatching` with `releasedAt` (held orders are released by themselves at 00:00 zone time
        of their delivery day). No body. An order already `dispatching` answers 200 again
        (contract: Orders).

        Errors:

        - 404 `Order not found`

        - 409 `Order <ref> cannot be released in status <status>` for any other status"""
        order = selectors.partner_order_get(
            organization_id=request.auth.organization_id, external_ref=external_ref
        )
        order = services.partner_order_release(order=order, actor=self.actor)
        return Response(PartnerOrderReleasedOutput(order).data)


class PartnerOrderCancelApi(IntegrationApiView):
    @extend_schema(
        summary="Cancel a partner order",
        request=CancelInput,
        responses={200: PartnerOrderOutput, **errors(400, 401, 403, 404, 409, 429)},
        examples=examples.PARTNER_ORDER_CANCEL,
    )
    def post(self, request, external_ref):
        """Cancels the order from `pending`, `dispatching` or `assigned`, with an optional
        `reason` (no body, or `null`, is no reason); frees its place in the delivery window and
        sends `order.cancelled`. Answers the order as read (contract: Orders).

        Errors:

        - 400 for a body that is not an object or a `reason` over 500 characters

        - 404 `Order not found`

        - 409 `Order <ref> cannot be cancelled in status <status>` once it is picked up or
          finished"""
        serializer = valid_serializer(CancelInput, optional_body(request.data))
        order = selectors.partner_order_get(
            organization_id=request.auth.organization_id, external_ref=external_ref
        )
        reason = serializer.validated_data.get("reason") or ""
        order = services.partner_order_cancel(order=order, actor=self.actor, reason=reason)
        return Response(PartnerOrderOutput(order, context={"request": request}).data)


class DeliveryWindowsApi(IntegrationApiView):
    @extend_schema(
        summary="List the delivery windows of a date",
        parameters=[
            OpenApiParameter("zone", str, description="Zone name (or address)"),
            OpenApiParameter("address", str, description="Geocoded (or zone)"),
            query_date("date", required=True, description="YYYY-MM-DD"),
        ],
        responses={
            200: OpenApiResponse(
                ZoneWindowsOutput,
                description="An object for `zone`; an array of them, one per matching zone, "
                "for `address`",
            ),
            **errors(400, 401, 403, 404, 429, 503),
        },
        examples=examples.DELIVERY_WINDOWS,
    )
    def get(self, request):
        """The delivery windows of a date in a zone (by `zone` name, or every zone containing the
        geocoded `address`): 08:00-12:00, 12:00-16:00 and 16:00-20:00 zone time, none on Fridays,
        Saturdays and the zone's blackout days, each with `scheduledCount`, `capacityLimit` and
        `available` (false at capacity). A partner calls it to pick `deliveryWindowStart` for a
        new order (contract: Orders).

        Errors:

        - 400 `date query parameter is required (format: YYYY-MM-DD)`, `zone or address query
          parameter is required`, `Provide either zone or address, not both`

        - 404 `Zone <name> not found`, `No delivery zone found for the given address`

        - 503 when the geocoder does not answer"""
        serializer = valid_serializer(DeliveryWindowsQuery, request.query_params)
        query = serializer.validated_data
        organization_id = request.auth.organization_id
        if query["zone"]:
            found = selectors.windows_by_zone_name(
                organization_id=organization_id, name=query["zone"], day=query["date"]
            )
            return Response(ZoneWindowsOutput(found).data)
        found = selectors.windows_by_address(
            organization_id=organization_id, address=query["address"], day=query["date"]
        )
        return Response(ZoneWindowsOutput(found, many=True).data)
