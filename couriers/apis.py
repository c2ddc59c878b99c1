"""The courier API (`/api/courier/...`), drivers' access tokens and the proof reads of the
management and partner APIs (contract "Couriers")."""

from dataclasses import replace

from django.core.files.storage import storages
from django.db import transaction
from django.http import FileResponse
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiRequest,
    OpenApiResponse,
    extend_schema,
)
from rest_framework.exceptions import ParseError, UnsupportedMediaType
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response

from couriers import openapi_examples as examples
from couriers import proof_urls, selectors
from couriers.api_bases import CourierApiView
from couriers.serializers import (
    AccessTokenOutput,
    LocationsInput,
    LocationsOutput,
    PhotoOutput,
    ProofOutput,
    ReattemptInput,
    RouteOutput,
    RouteQuery,
    RouteStopOutput,
    StopEventInput,
    location_drafts,
)
from couriers.services import events as event_services
from couriers.services import locations as location_services
from couriers.services import photos as photo_services
from couriers.services import reattempts as reattempt_services
from couriers.services import tokens as token_services
from delivery.errors import NotFound
from delivery.schema import errors, query_date
from delivery.serializers import valid_serializer
from delivery.throttling import ClientAddressThrottle
from integrations import selectors as order_selectors
from integrations.erp import apis as erp_apis
from integrations.erp.serializers import ErpOrderSlotOutput, ErpSlotAssignInput
from integrations.errors import IdempotencyKeyInvalid, OrderNotFound
from integrations.openapi_examples import ERP_ORDER_SLOT
from integrations.partner import selectors as partner_selectors
from integrations.serializers import ManagedOrderDetailOutput
from integrations.services import idempotency
from tenants import selectors as tenant_selectors
from tenants.api_bases import IntegrationApiView, ManagementApiView, PublicApiView

IDEMPOTENCY_HEADER = "Idempotency-Key"


class DriverAccessTokenApi(ManagementApiView):
    @extend_schema(
        summary="Issue a driver's access token",
        request=None,
        responses={201: AccessTokenOutput, **errors(401, 404)},
        examples=examples.ACCESS_TOKEN_ISSUE,
    )
    def post(self, request, org_id, driver_id):
        """Issues the token the driver's courier app signs in with (`Authorization: Bearer
        <token>` on `/api/courier/...`). The token is shown in this answer only (the service
        keeps a digest of it); a new token ends the driver's previous one at once. It works while
        the driver and the organization are active.

        For an organization admin with a bearer token (401 `Invalid or missing token`).

        Errors:

        - 404 `Organization not found`, `Driver not found`"""
        driver = tenant_selectors.driver_get(
            organization_id=self.get_organization().id, driver_id=driver_id
        )
        issued = token_services.driver_token_issue(driver=driver)
        return Response(AccessTokenOutput(issued).data, status=201)

    @extend_schema(
        summary="End a driver's access token",
        responses={
            204: OpenApiResponse(description="Ended (or there was none)"),
            **errors(401, 404),
        },
    )
    def delete(self, request, org_id, driver_id):
        """Ends the driver's access token at once: the courier app's next request answers 401
        `Invalid or missing token`. Answers 204 whether or not the driver had one.

        For an organization admin with a bearer token (401 `Invalid or missing token`).

        Errors:

        - 404 `Organization not found`, `Driver not found`"""
        driver = tenant_selectors.driver_get(
            organization_id=self.get_organization().id, driver_id=driver_id
        )
        token_services.driver_token_revoke(driver=driver)
        return Response(status=204)


class CourierRouteApi(CourierApiView):
    @extend_schema(
        summary="Read the driver's route of a day",
        parameters=[query_date("date", description="YYYY-MM-DD (default: today, zone time)")],
        responses={200: RouteOutput, **errors(400, 401)},
        examples=examples.ROUTE,
    )
    def get(self, request):
        """The calling driver's committed route of `date` (default: today in the driver's zone
        time): its stops in order with their ETA, window, address, recipient, notes, package,
        cash to collect (`codAmount`) and the barcode the parcel should carry
        (`expectedBarcode`). Times are in the zone's time with their offset. Without a
        committed route that day: `routeId` null and no stops.

        Errors:

        - 400 `date must be a valid date (format: YYYY-MM-DD)`

        - 401 `Invalid or missing token` (unknown or ended token, inactive driver or
          organization)"""
        query = valid_serializer(RouteQuery, request.query_params).validated_data
        route = selectors.driver_route(driver=self.driver, day=query.get("date"))
        return Response(RouteOutput(route, context={"tz": route.tz}).data)


class CourierPhotosApi(CourierApiView):
    parser_classes = [MultiPartParser]

    @extend_schema(
        summary="Upload a proof photo",
        request={
            "multipart/form-data": OpenApiRequest(
                {
                    "type": "object",
                    "properties": {"photo": {"type": "string", "format": "binary"}},
                    "required": ["photo"],
                },
                examples=examples.PHOTO_UPLOAD_REQUEST,
            )
        },
        responses={201: PhotoOutput, **errors(400, 401, 413)},
        examples=examples.PHOTO_UPLOAD,
    )
    def post(self, request):
        """Uploads a photo taken at the door (`multipart/form-data`, field `photo`: a JPEG or
        PNG of at most 5 MB). The service decodes it and stores it encoded again without any
        metadata (EXIF, GPS position included), and answers its `photoId`, which a `delivered`
        or `failed` event then names in `proof.photoIds`. The photo is read back only through
        the proof's signed, expiring URLs.

        Errors:

        - 400 `photo is required (a multipart file field)`, `photo must be at most 5 MB`,
          `photo must be a JPEG or PNG image` (anything that does not decode whole as one)

        - 401 `Invalid or missing token`

        - 413 a body over 6 MiB"""
        try:
            upload = request.FILES.get("photo")
        except (UnsupportedMediaType, ParseError):
            # Not a multipart body, or a broken one: not an image either (contract "Couriers").
            upload = None
        photo = photo_services.photo_upload(driver=self.driver, upload=upload)
        return Response(PhotoOutput(photo).data, status=201)


class CourierOrderEventsApi(CourierApiView):
    @extend_schema(
        summary="Record a stop event",
        parameters=[
            OpenApiParameter(
                IDEMPOTENCY_HEADER,
                {
                    "type": "string",
                    "pattern": "^[\\x21-\\x7e](?:[\\x20-\\x7e]{0,253}[\\x21-\\x7e])?$",
                },
                OpenApiParameter.HEADER,
                description="Optional, per driver; a repeat within 24 h replays the first answer "
                "with `Idempotent-Replayed: true`",
            )
        ],
        request=StopEventInput,
        responses={200: RouteStopOutput, **errors(400, 401, 404, 409, 422)},
        examples=examples.STOP_EVENT,
    )
    def post(self, request, order_id):
        """Records what happened at one of the driver's stops: `picked_up`, `in_transit`,
        `arrived` (recorded, no status change), `delivered` or `failed`. A status change goes
        through the order's status machine and sends the partner's `order.<status>` webhook;
        `delivered` and `failed` keep their proof (`proof`: recipient name, scanned barcode,
        signature as a PNG data URL of at most 200 KB, `photoIds` from `POST
        /api/courier/photos`; `location`; `note`; `cashCollected`). `at` is when it happened
        (default now): an app that was offline sends its queue in the order taken, up to 24
        hours late; each event is checked when it arrives. With an `Idempotency-Key` (per
        driver), a repeat within 24 hours replays the first answer. Answers the stop.

        Errors:

        - 400 listing the body's problems; `failureReason is required for status failed`,
          `Signature is required` and `Photo is required` (the dispatch policy), `Barcode does
          not match` (the order's `expectedBarcode`), `Cash collected is required` (an order
          with `codAmount`), `proof.signature must be a PNG data URL of at most 200 KB`,
          `photoIds has an unknown photo: <id>`, `at must not be more than 24 hours ago`, `at
          must not be more than 2 minutes ahead`

        - 401 `Invalid or missing token`

        - 404 `Order not found` (also another driver's order)

        - 409 `Order <ref> cannot be <verb> in status <status>`; `A request with this
          Idempotency-Key is in progress`

        - 422 `Idempotency-Key was already used with a different request body`"""
        driver = self.driver
        # A body that is not JSON is a 400 whatever the order (contract "Errors"): read it first.
        body = request.data
        header = request.headers.get(IDEMPOTENCY_HEADER)

        def record() -> tuple[int, dict]:
            # The order is read once, with its row lock and its stop, in the event's transaction.
            stop, tz = selectors.driver_order_stop(driver=driver, order_id=order_id, lock=True)
            draft = valid_serializer(StopEventInput, body).draft()
            moved = event_services.stop_event_record(
                driver=driver,
                order=stop.order,
                proof_policy=stop.proof_policy,
                draft=draft,
                actor=self.actor,
            )
            return 200, RouteStopOutput(replace(stop, order=moved), context={"tz": tz}).data

        if header is None:
            with transaction.atomic():
                status, body = record()
            return Response(body, status=status)

        # An unknown order is a 404 whatever the key. A new key's event reads the order anyway
        # (and releases the key on its 404): only a malformed or used key is checked first.
        def order_check() -> None:
            selectors.driver_order_check(driver=driver, order_id=order_id)

        try:
            key = idempotency.idempotency_key_read(header)
        except IdempotencyKeyInvalid:
            order_check()
            raise
        result = idempotency.idempotent_run(
            owner_id=driver.id,
            key=key,
            fingerprint=idempotency.request_fingerprint(
                method=request.method, path=request.path, body=body
            ),
            operation=record,
            scope=event_services.DRIVER_KEYS,
            on_used_key=order_check,
        )
        headers = {"Idempotent-Replayed": "true"} if result.replayed else {}
        return Response(result.body, status=result.status, headers=headers)


class ManagedOrderProofApi(ManagementApiView):
    @extend_schema(
        summary="Read an order's proof of delivery or failure",
        responses={200: ProofOutput, **errors(401, 404)},
        examples=examples.PROOF_READ,
    )
    def get(self, request, org_id, order_id):
        """How the order's delivery ended, as the courier recorded it at the door: status
        (`delivered` or `failed`), when and where, recipient name, scanned barcode, cash
        collected, failure reason, note, and signed URLs of the signature and photos, each
        valid for 10 minutes (read the proof again for fresh ones). An outcome an admin set by
        hand has no courier proof: its fields are null and its URLs absent.

        For an organization admin with a bearer token (401 `Invalid or missing token`).

        Errors:

        - 404 `Organization not found`, `Order not found`, `Proof not found` (the order is
          neither delivered nor failed)"""
        order = order_selectors.order_get(
            organization_id=self.get_organization().id, order_id=order_id
        )
        shown = selectors.order_proof(order=order)
        return Response(ProofOutput(shown, context={"request": request}).data)


class PartnerOrderProofApi(IntegrationApiView):
    @extend_schema(
        summary="Read an order's proof of delivery or failure",
        responses={200: ProofOutput, **errors(401, 403, 404, 429)},
        examples=examples.PROOF_READ,
    )
    def get(self, request, external_ref):
        """The proof of the partner's order by `externalRef` once it is delivered or failed,
        for answering the partner's customer: when and where, who received it, the barcode
        scanned, the failure reason, and signed URLs of the signature and photos that expire
        after 10 minutes. Only orders of this key's platform.

        Errors:

        - 404 `Order not found` (unknown, another platform's or another organization's), `Proof
          not found` (neither delivered nor failed yet)"""
        principal = request.auth
        order = partner_selectors.partner_order_get(
            organization_id=principal.organization_id, external_ref=external_ref
        )
        if order.platform != principal.platform:
            raise OrderNotFound()
        shown = selectors.order_proof(order=order)
        return Response(ProofOutput(shown, context={"request": request}).data)


@extend_schema(exclude=True)
class ProofFileApi(PublicApiView):
    """A proof file by its signed URL (couriers/proof_urls.py): the signature is the credential,
    so no key or token; limited per client address."""

    throttle_classes = [ClientAddressThrottle]
    rate_limit_group = "proof-files"
    rate_limit_setting = "PROOF_FILE_RATE_LIMIT"

    def get(self, request, token):
        name = proof_urls.proof_file_name(token)
        try:
            handle = storages["proofs"].open(name)
        except (FileNotFoundError, OSError):
            raise NotFound() from None
        response = FileResponse(handle, content_type=proof_urls.proof_file_content_type(name))
        response["Cache-Control"] = f"private, max-age={proof_urls.URL_LIFETIME_SECONDS}"
        response["X-Content-Type-Options"] = "nosniff"
        response["Content-Security-Policy"] = "default-src 'none'"
        return response


class CourierLocationsApi(CourierApiView):
    @extend_schema(
        summary="Send a batch of positions",
        request=LocationsInput,
        responses={202: LocationsOutput, **errors(400, 401)},
        examples=examples.LOCATIONS,
    )
    def post(self, request):
        """The courier app's positions since its last batch (1 to 100 points, each with when it
        was taken, `at`, up to 24 hours late and never more than 2 minutes ahead). The service
        keeps the newest as the driver's position and 24 hours of trail, and re-times the
        driver's remaining stops of the day from the newest point (the plan's travel model;
        never before a window opens); an ETA that moves by 10 minutes or more sends
        `order.eta_updated` to partners whose key asks for it. Answers how many points were
        kept and how many ETAs changed. Recipients never see the position.

        Errors:

        - 400 listing the body's problems (`points must hold 1 to 100 points`, a coordinate out
          of range), `points[<i>].at must not be more than 24 hours ago`, `points[<i>].at must
          not be more than 2 minutes ahead`

        - 401 `Invalid or missing token`"""
        drafts = location_drafts(request.data)
        recorded = location_services.driver_locations_record(driver=self.driver, points=drafts)
        return Response(LocationsOutput(recorded).data, status=202)


class ManagedOrderReattemptApi(ManagementApiView):
    @extend_schema(
        summary="Re-attempt a failed delivery",
        request=ReattemptInput,
        responses={200: ManagedOrderDetailOutput, **errors(400, 401, 404, 409, 415)},
        examples=examples.ORDER_REATTEMPT,
    )
    def post(self, request, org_id, order_id):
        """Books a `failed` order on a new slot (ERP orders: `deliverySlotTemplateId`,
        `deliverySlotDate`) or window (partner orders: `deliveryWindowStart`) with the checks of
        creation, and moves it back to `pending` with `attempt` + 1, up to the dispatch
        policy's `maxAttempts`. Answers the order with its whole history (the failed attempt's
        status changes stay). No event: entering `pending` emits none.

        For an organization admin with a bearer token (401 `Invalid or missing token`).

        Errors:

        - 400 a slot and a window together, neither, the other family's booking, and the
          booking's own (weekday, cutoff, dropoff outside the zone, disabled zone, blackout,
          no window at that time, `Delivery slot is full`, `Delivery window is full`)

        - 404 `Organization not found`, `Order not found`, `Slot not found`

        - 409 `Order <ref> cannot be re-attempted in status <status>` (only a failed order),
          `Order has no attempts left`"""
        organization = self.get_organization()
        # The order first: an unknown id is a 404 whatever the body.
        order = order_selectors.order_get(organization_id=organization.id, order_id=order_id)
        serializer = valid_serializer(ReattemptInput, request.data)
        reattempt_services.order_reattempt(
            order=order, booking=serializer.booking(), actor=request.user.email
        )
        order = order_selectors.order_get_with_history(
            organization_id=organization.id, order_id=order.id
        )
        return Response(ManagedOrderDetailOutput(order).data)


class ErpOrderSlotApi(erp_apis.ErpOrderSlotApi):
    """The ERP's PUT delivery-slot (integrations), with a `failed` order re-attempted on the
    slot (contract "Couriers", "Re-attempts")."""

    @extend_schema(
        summary="Move an ERP order to another slot",
        request=ErpSlotAssignInput,
        responses={200: ErpOrderSlotOutput, **errors(400, 401, 403, 404, 409, 415, 429)},
        examples=ERP_ORDER_SLOT,
    )
    def put(self, request, external_ref):
        """Assigns or reassigns the order's slot, when the customer picks another delivery time:
        frees the old one and books the new one in one transaction, with the checks of creation
        and their messages (404 `Slot not found`; 400 weekday, cutoff, dropoff outside the zone,
        disabled zone, blackout date, `Delivery slot is full`). `dropoffLat`/`dropoffLng` move the
        dropoff point too (given together). A `failed` order is re-attempted on the new slot:
        back to `pending` with `attempt` + 1, up to the dispatch policy's `maxAttempts` (409
        `Order has no attempts left`). Errors also: 404 `Order not found`; 409 for a delivered or
        cancelled order."""
        order = self.get_order(external_ref)
        serializer = valid_serializer(ErpSlotAssignInput, request.data)
        order = reattempt_services.erp_order_slot_put(
            order=order, actor=self.actor, **serializer.service_arguments()
        )
        return Response(ErpOrderSlotOutput(order).data)
