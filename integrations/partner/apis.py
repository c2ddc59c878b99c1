"""The partner family's endpoints: `/integrations/partner-a/*` and its partner-b/c twins."""

from django.db import transaction
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.response import Response

from delivery.schema import errors
from delivery.serializers import optional_body, valid_serializer
from integrations.errors import IdempotencyKeyInvalid
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
MAX_IDEMPOTENCY_KEY_LENGTH = 255


def _idempotency_key(request) -> str | None:
    key = request.headers.get(IDEMPOTENCY_HEADER)
    if key is None:
        return None
    if (
        not 1 <= len(key) <= MAX_IDEMPOTENCY_KEY_LENGTH
        or not key.isascii()
        or not key.isprintable()
    ):
        raise IdempotencyKeyInvalid()
    return key


class PartnerOrdersApi(IntegrationApiView):
    @extend_schema(
        parameters=[
            OpenApiParameter(
                IDEMPOTENCY_HEADER,
                str,
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
    )
    def post(self, request):
        """Creates an order; books the delivery window containing deliveryWindowStart; sends
        order.created (contract: Orders)."""
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
            api_key_id=principal.key_id,
            key=key,
            fingerprint=idempotency.request_fingerprint(
                method=request.method, path=request.path, body=request.data
            ),
            operation=create,
        )
        headers = {"Idempotent-Replayed": "true"} if result.replayed else {}
        return Response(result.body, status=result.status, headers=headers)


class PartnerOrderDetailApi(IntegrationApiView):
    @extend_schema(responses={200: PartnerOrderOutput, **errors(401, 403, 404, 429)})
    def get(self, request, external_ref):
        order = selectors.partner_order_get(
            organization_id=request.auth.organization_id, external_ref=external_ref
        )
        return Response(PartnerOrderOutput(order, context={"request": request}).data)


class PartnerOrderReleaseApi(IntegrationApiView):
    @extend_schema(
        request=None, responses={200: PartnerOrderReleasedOutput, **errors(401, 403, 404, 409, 429)}
    )
    def post(self, request, external_ref):
        """pending → dispatching with releasedAt; already dispatching answers 200 again; any other
        status 409 (contract: Orders)."""
        order = selectors.partner_order_get(
            organization_id=request.auth.organization_id, external_ref=external_ref
        )
        order = services.partner_order_release(order=order, actor=self.actor)
        return Response(PartnerOrderReleasedOutput(order).data)


class PartnerOrderCancelApi(IntegrationApiView):
    @extend_schema(
        request=CancelInput,
        responses={200: PartnerOrderOutput, **errors(400, 401, 403, 404, 409, 429)},
    )
    def post(self, request, external_ref):
        """Allowed from pending, dispatching, assigned; frees the window place; sends
        order.cancelled (contract: Orders)."""
        serializer = valid_serializer(CancelInput, optional_body(request.data))
        order = selectors.partner_order_get(
            organization_id=request.auth.organization_id, external_ref=external_ref
        )
        reason = serializer.validated_data.get("reason") or ""
        order = services.partner_order_cancel(order=order, actor=self.actor, reason=reason)
        return Response(PartnerOrderOutput(order, context={"request": request}).data)


class DeliveryWindowsApi(IntegrationApiView):
    @extend_schema(
        parameters=[
            OpenApiParameter("zone", str, description="Zone name (or address)"),
            OpenApiParameter("address", str, description="Geocoded (or zone)"),
            OpenApiParameter("date", str, required=True, description="YYYY-MM-DD"),
        ],
        responses={
            200: OpenApiResponse(
                ZoneWindowsOutput,
                description="An object for `zone`; an array of them, one per matching zone, "
                "for `address`",
            ),
            **errors(400, 401, 403, 404, 429, 503),
        },
    )
    def get(self, request):
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
