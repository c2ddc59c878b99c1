"""Management API of orders (decisions §11, §12): list, detail, status transition."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response

from delivery.schema import errors
from integrations import selectors
from integrations.models import OrderStatus
from integrations.serializers import (
    ManagedOrderDetailOutput,
    OrderListQuery,
    OrderPageOutput,
    OrderTransitionInput,
)
from integrations.services import orders as order_services
from tenants import selectors as tenant_selectors
from tenants.api_bases import ManagementApiView

TAG = ["management"]


class ManagedOrdersApi(ManagementApiView):
    @extend_schema(
        tags=TAG,
        operation_id="manage_organizations_orders_list",
        parameters=[
            OpenApiParameter("status", str, enum=OrderStatus.values),
            OpenApiParameter("date", str, description="YYYY-MM-DD: delivery day, zone time"),
            OpenApiParameter("zoneId", str, description="Zone UUID"),
            OpenApiParameter("page", int, description="From 1 (default 1)"),
            OpenApiParameter("pageSize", int, description="1 to 100 (default 50)"),
        ],
        responses={200: OrderPageOutput, **errors(400, 401, 404)},
        description="Newest first (ties broken by id); two queries whatever the page holds.",
    )
    def get(self, request, org_id):
        organization = self.get_organization()
        serializer = OrderListQuery(data=request.query_params)
        serializer.is_valid(raise_exception=True)
        params = serializer.validated_data
        page = selectors.order_page(
            organization_id=organization.id,
            status=params.get("status"),
            day=params.get("date"),
            zone_id=params.get("zoneId"),
            page=params["page"],
            page_size=params["pageSize"],
        )
        return Response(OrderPageOutput(page).data)


class ManagedOrderDetailApi(ManagementApiView):
    @extend_schema(tags=TAG, responses={200: ManagedOrderDetailOutput, **errors(401, 404)})
    def get(self, request, org_id, order_id):
        order = selectors.order_get_with_history(
            organization_id=self.get_organization().id, order_id=order_id
        )
        return Response(ManagedOrderDetailOutput(order).data)


class ManagedOrderTransitionApi(ManagementApiView):
    @extend_schema(
        tags=TAG,
        request=OrderTransitionInput,
        responses={200: ManagedOrderDetailOutput, **errors(400, 401, 404, 409)},
        description="Moves the order by the status machine of decisions §5; `driverId` is "
        "required for `assigned`.",
    )
    def post(self, request, org_id, order_id):
        organization = self.get_organization()
        serializer = OrderTransitionInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        order = selectors.order_get(organization_id=organization.id, order_id=order_id)
        driver = (
            tenant_selectors.driver_get(organization=organization, driver_id=data["driverId"])
            if data["status"] == OrderStatus.ASSIGNED and data.get("driverId")
            else None
        )
        order_services.order_transition(
            order=order,
            to_status=data["status"],
            actor=request.user.email,
            driver=driver,
            reason=data.get("reason") or "",
        )
        order = selectors.order_get_with_history(organization_id=organization.id, order_id=order.id)
        return Response(ManagedOrderDetailOutput(order).data)
