"""The ERP family's endpoints: `/integrations/erp/*` for `erp` keys (contract "Authentication and
scope", "Orders")."""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.response import Response

from delivery.schema import errors
from delivery.serializers import optional_body, valid_serializer
from integrations import openapi_examples as examples
from integrations.erp import selectors, services
from integrations.erp.serializers import (
    ErpCancelInput,
    ErpOrderInput,
    ErpOrderOutput,
    ErpOrderSlotOutput,
    ErpSlotAssignInput,
    SlotHoldInput,
    SlotHoldOutput,
)
from tenants.api_bases import IntegrationApiView


class ErpApiView(IntegrationApiView):
    integration = "erp"
    openapi_tags = ["erp"]

    def get_order(self, external_ref: str):
        return selectors.erp_order_get(
            organization_id=self.request.auth.organization_id, external_ref=external_ref
        )


class ErpOrdersApi(ErpApiView):
    @extend_schema(
        summary="Create an ERP order and book its slot",
        request=ErpOrderInput,
        responses={
            201: OpenApiResponse(ErpOrderOutput, description="Order created, slot booked"),
            **errors(400, 401, 403, 404, 409, 413, 415, 429),
        },
        examples=examples.ERP_ORDER_CREATE,
    )
    def post(self, request):
        """Creates an order for the ERP's sales order (`externalRef`) and books the delivery slot
        (`deliverySlotTemplateId` on `deliverySlotDate`, from availability) in one transaction;
        the answer carries `trackingToken` and `trackingUrl`. Pickup fields are optional (the
        slot policy's default pickup address). Checks, in order:
        template exists (404 Slot not found), weekday, cutoff, dropoff inside the zone, zone
        enabled, blackout date (400 Zone <name> takes no deliveries on <date>), capacity (400).
        Emits erp.slot.booked. With holdId, the key's slot hold becomes the booking (no capacity
        check): 404 Slot hold not found (unknown or another key's), 400 Slot hold is for another
        delivery slot or date, 409 Slot hold has already been used, 409 Slot hold has expired; the
        cutoff is judged when the hold was taken. A repeated `externalRef`: 409 `Order with
        externalRef <ref> already exists`."""
        serializer = valid_serializer(ErpOrderInput, request.data)
        order = services.erp_order_create(
            organization_id=request.auth.organization_id,
            platform=request.auth.platform,
            actor=self.actor,
            api_key_id=request.auth.key_id,
            **serializer.service_arguments(),
        )
        return Response(ErpOrderOutput(order, context={"request": request}).data, status=201)


class ErpOrderDetailApi(ErpApiView):
    @extend_schema(
        summary="Read an ERP order",
        responses={200: ErpOrderOutput, **errors(401, 403, 404, 429)},
        examples=examples.ERP_ORDER_READ,
    )
    def get(self, request, external_ref):
        """The ERP order by its `externalRef`: status, booked slot and window (zone time), zone,
        tracking token and page, and `createdAt` (contract: Orders).

        Errors:

        - 404 `Order not found` (unknown, or another organization's reference)"""
        order = self.get_order(external_ref)
        return Response(ErpOrderOutput(order, context={"request": request}).data)


class ErpOrderSlotApi(ErpApiView):
    @extend_schema(
        summary="Move an ERP order to another slot",
        request=ErpSlotAssignInput,
        responses={200: ErpOrderSlotOutput, **errors(400, 401, 403, 404, 409, 415, 429)},
        examples=examples.ERP_ORDER_SLOT,
    )
    def put(self, request, external_ref):
        """Assigns or reassigns the order's slot, when the customer picks another delivery time:
        frees the old one and books the new one in one transaction, with the checks of creation
        and their messages (404 `Slot not found`; 400 weekday, cutoff, dropoff outside the zone,
        disabled zone, blackout date, `Delivery slot is full`). `dropoffLat`/`dropoffLng` move the
        dropoff point too (given together). Errors also: 404 `Order not found`; 409 for an order
        in a terminal status (delivered, failed, cancelled)."""
        order = self.get_order(external_ref)
        serializer = valid_serializer(ErpSlotAssignInput, request.data)
        order = services.erp_order_slot_assign(order=order, **serializer.service_arguments())
        return Response(ErpOrderSlotOutput(order).data)


class ErpOrderCancelApi(ErpApiView):
    @extend_schema(
        summary="Cancel an ERP order",
        request=ErpCancelInput,
        responses={200: ErpOrderOutput, **errors(400, 401, 403, 404, 409, 415, 429)},
        examples=examples.ERP_ORDER_CANCEL,
    )
    def post(self, request, external_ref):
        """Cancels the order (from pending, dispatching or assigned), with an optional `reason`
        (no body, or `null`, is no reason), and frees its place in the slot; emits
        erp.slots.updated. Answers the order as read.

        Errors:

        - 400 for a body that is not an object

        - 404 `Order not found`

        - 409 `Order <ref> cannot be cancelled in status <status>` once it is picked up or
          finished"""
        order = self.get_order(external_ref)
        serializer = valid_serializer(ErpCancelInput, optional_body(request.data))
        reason = serializer.validated_data.get("reason") or ""
        order = services.erp_order_cancel(order=order, actor=self.actor, reason=reason)
        return Response(ErpOrderOutput(order, context={"request": request}).data)


class ErpSlotHoldsApi(ErpApiView):
    @extend_schema(
        summary="Hold a place in a slot during checkout",
        request=SlotHoldInput,
        responses={
            201: OpenApiResponse(SlotHoldOutput, description="One place of the slot held"),
            **errors(400, 401, 403, 404, 413, 415, 429),
        },
        examples=examples.SLOT_HOLD,
    )
    def post(self, request):
        """Holds one place of a slot during a checkout (docs/slot-holds.md), for ttlSeconds (default
        600, 1 to 3600). The checks of an ERP order create, in its order and with its messages: 404
        Slot not found, then 400 for the weekday, the cutoff, a dropoff outside the zone, a disabled
        zone, and Delivery slot is full. A live hold counts as taken in availability and in
        erp.slots.updated / erp.slot.booked; an expired one counts for nothing. Book it with holdId
        on POST /integrations/erp/orders or release it with DELETE. Emits erp.slots.updated."""
        serializer = valid_serializer(SlotHoldInput, request.data)
        result = services.erp_slot_hold_create(
            organization_id=request.auth.organization_id,
            api_key_id=request.auth.key_id,
            **serializer.service_arguments(),
        )
        return Response(SlotHoldOutput(result).data, status=201)


class ErpSlotHoldDetailApi(ErpApiView):
    @extend_schema(
        summary="Release a slot hold",
        request=None,
        responses={
            204: OpenApiResponse(description="Hold released, its place given back"),
            **errors(401, 403, 404, 409, 429),
        },
    )
    def delete(self, request, hold_id):
        """Releases the key's hold: its place goes back to the slot. 404 Slot hold not found for an
        unknown hold or another key's; 409 Slot hold has already been used once it became an order's
        booking (cancel the order instead). Emits erp.slots.updated."""
        services.erp_slot_hold_release(api_key_id=request.auth.key_id, hold_id=hold_id)
        return Response(status=204)
