"""The ERP family's endpoints: `/integrations/erp/*` for `erp` keys (decisions §2, §5)."""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.response import Response

from delivery.schema import errors
from integrations.erp import selectors, services
from integrations.erp.serializers import (
    ErpCancelInput,
    ErpOrderInput,
    ErpOrderOutput,
    ErpOrderSlotOutput,
    ErpSlotAssignInput,
)
from tenants.api_bases import IntegrationApiView

TAG = ["erp"]


def actor_of(request) -> str:
    return f"api-key {request.auth.name} ({request.auth.platform})"


class ErpApiView(IntegrationApiView):
    integration = "erp"

    def get_order(self, external_ref: str):
        return selectors.erp_order_get(
            organization_id=self.request.auth.organization_id, external_ref=external_ref
        )


class ErpOrdersApi(ErpApiView):
    @extend_schema(
        tags=TAG,
        request=ErpOrderInput,
        responses={
            201: OpenApiResponse(ErpOrderOutput, description="Order created, slot booked"),
            **errors(400, 401, 403, 404, 409, 413, 415, 429),
        },
        description="Creates an order and books its delivery slot in one transaction. Checks, "
        "in order: template exists (404 Slot not found), weekday, cutoff, dropoff inside the "
        "zone, zone enabled, blackout date (400 Zone <name> takes no deliveries on <date>), "
        "capacity (400). Emits erp.slot.booked.",
    )
    def post(self, request):
        serializer = ErpOrderInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        order = services.erp_order_create(
            organization_id=request.auth.organization_id,
            platform=request.auth.platform,
            actor=actor_of(request),
            **serializer.service_arguments(),
        )
        return Response(ErpOrderOutput(order).data, status=201)


class ErpOrderDetailApi(ErpApiView):
    @extend_schema(tags=TAG, responses={200: ErpOrderOutput, **errors(401, 403, 404, 429)})
    def get(self, request, external_ref):
        return Response(ErpOrderOutput(self.get_order(external_ref)).data)


class ErpOrderSlotApi(ErpApiView):
    @extend_schema(
        tags=TAG,
        request=ErpSlotAssignInput,
        responses={200: ErpOrderSlotOutput, **errors(400, 401, 403, 404, 409, 415, 429)},
        description="Assigns or reassigns the order's slot: frees the old one and books the "
        "new one in one transaction, with the checks of creation. Terminal status: 409.",
    )
    def put(self, request, external_ref):
        order = self.get_order(external_ref)
        serializer = ErpSlotAssignInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        order = services.erp_order_slot_assign(order=order, **serializer.service_arguments())
        return Response(ErpOrderSlotOutput(order).data)


class ErpOrderCancelApi(ErpApiView):
    @extend_schema(
        tags=TAG,
        request=ErpCancelInput,
        responses={200: ErpOrderOutput, **errors(400, 401, 403, 404, 409, 415, 429)},
        description="Cancels the order (from pending, dispatching or assigned) and frees its "
        "slot; emits erp.slots.updated.",
    )
    def post(self, request, external_ref):
        order = self.get_order(external_ref)
        serializer = ErpCancelInput(data=request.data or {})
        serializer.is_valid(raise_exception=True)
        order = services.erp_order_cancel(
            order=order,
            actor=actor_of(request),
            reason=serializer.validated_data.get("reason") or "",
        )
        return Response(ErpOrderOutput(order).data)
