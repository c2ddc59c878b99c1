"""Management API of orders (contract "Management API", "Orders"): list, detail, status transition,
and the lifecycle sandbox."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.response import Response

from delivery.schema import errors, page_parameters, query_date
from delivery.serializers import valid_serializer
from integrations import openapi_examples as examples
from integrations import selectors
from integrations import serializers as order_serializers
from integrations.models import OrderStatus
from integrations.serializers import (
    ManagedOrderDetailOutput,
    OrderListQuery,
    OrderPageOutput,
    OrderSimulationInput,
    OrderSimulationOutput,
    OrderTransitionInput,
)
from integrations.services import orders as order_services
from integrations.services import sandbox
from tenants import selectors as tenant_selectors
from tenants.api_bases import ManagementApiView


class ManagedOrdersApi(ManagementApiView):
    @extend_schema(
        operation_id="manage_organizations_orders_list",
        summary="List the organization's orders",
        parameters=[
            OpenApiParameter("status", str, enum=OrderStatus.values),
            query_date("date", description="YYYY-MM-DD: delivery day, zone time"),
            OpenApiParameter("zoneId", OpenApiTypes.UUID, description="Zone UUID"),
            *page_parameters(
                max_page_size=order_serializers.MAX_PAGE_SIZE,
                default_page_size=order_serializers.DEFAULT_PAGE_SIZE,
            ),
        ],
        responses={200: OrderPageOutput, **errors(400, 401, 404)},
        examples=examples.ORDER_LIST,
    )
    def get(self, request, org_id):
        """The orders of both families (partner and ERP), newest first, a page at a time
        (`items`, `page`, `pageSize`, `total`), filtered by `status`, delivery `date` (the zone's
        calendar) and `zoneId`. An operations dashboard calls it to follow the day's work.

        For an organization admin with a bearer token (401 `Invalid or missing token`).

        Errors:

        - 400 naming each invalid filter (`status must be one of: ...`, `zoneId must be a UUID`, a
          `pageSize` outside 1 to 100)

        - 404 `Organization not found`"""
        organization = self.get_organization()
        serializer = valid_serializer(OrderListQuery, request.query_params)
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
    @extend_schema(
        summary="Read an order with its status history",
        responses={200: ManagedOrderDetailOutput, **errors(401, 404)},
        examples=examples.ORDER_READ,
    )
    def get(self, request, org_id, order_id):
        """One order of either family with every field the organization holds (addresses,
        recipient, package, zone, window, driver) and its `statusHistory`, oldest first, each
        change with who made it and why.

        For an organization admin with a bearer token (401 `Invalid or missing token`).

        Errors:

        - 404 `Organization not found`, 404 `Order not found` (unknown, malformed or another
          organization's id)"""
        order = selectors.order_get_with_history(
            organization_id=self.get_organization().id, order_id=order_id
        )
        return Response(ManagedOrderDetailOutput(order).data)


class ManagedOrderTransitionApi(ManagementApiView):
    @extend_schema(
        summary="Move an order to another status",
        request=OrderTransitionInput,
        responses={200: ManagedOrderDetailOutput, **errors(400, 401, 404, 409)},
        examples=examples.ORDER_TRANSITION,
    )
    def post(self, request, org_id, order_id):
        """Moves the order by the status machine (contract: Orders): assigning a driver, pickup,
        transit, delivery, failure or cancellation, as a dispatcher does by hand. `driverId` is
        required for `assigned`; `failureReason` (`recipient_absent`, `address_not_found`,
        `refused`, `damaged`, `access_denied`, `other`) for `failed`; `reason` goes into the
        history. The change sends the partner's
        `order.<status>` webhook and shows on the tracking page; cancelled and failed orders free
        their window or slot. Answers the order with its history.

        For an organization admin with a bearer token (401 `Invalid or missing token`).

        Errors:

        - 400 `status required`, `driverId is required for status assigned`, `driverId must name an
          active driver`, `failureReason is required for status failed`

        - 404 `Organization not found`, `Order not found`, `Driver not found`

        - 409 `Order <ref> cannot be <verb> in status <status>` for a move the status machine does
          not allow"""
        organization = self.get_organization()
        serializer = valid_serializer(OrderTransitionInput, request.data)
        data = serializer.validated_data
        order = selectors.order_get(organization_id=organization.id, order_id=order_id)
        driver = (
            tenant_selectors.driver_get(organization_id=organization.id, driver_id=data["driverId"])
            if data["status"] == OrderStatus.ASSIGNED and data.get("driverId")
            else None
        )
        self.order_move(
            order=order,
            to_status=data["status"],
            actor=request.user.email,
            driver=driver,
            reason=data.get("reason") or "",
            failure_reason=data.get("failureReason") or "",
        )
        order = selectors.order_get_with_history(organization_id=organization.id, order_id=order.id)
        return Response(ManagedOrderDetailOutput(order).data)

    def order_move(
        self,
        *,
        order,
        to_status: str,
        actor: str,
        driver,
        reason: str,
        failure_reason: str = "",
    ) -> None:
        """The move itself; dispatch serves this path with a view that also puts an assigned
        order on its driver's route of the day (dispatch.commit_apis)."""
        order_services.order_transition(
            order=order,
            to_status=to_status,
            actor=actor,
            driver=driver,
            reason=reason,
            failure_reason=failure_reason,
        )


class ManagedOrderSimulateApi(ManagementApiView):
    @extend_schema(
        summary="Simulate a test order's delivery",
        request=OrderSimulationInput,
        responses={
            202: OpenApiResponse(OrderSimulationOutput, description="Simulation scheduled"),
            **errors(400, 401, 404, 409, 415, 503),
        },
        examples=examples.ORDER_SIMULATION,
    )
    def post(self, request, org_id, order_id):
        """Sandbox: moves an order created with a test key through assigned, picked_up, in_transit
        to `outcome` (delivered or failed), one status every `stepSeconds` (1 to 300, default 5; the
        first at once), with the organization's sandbox driver, through the status machine: the same
        webhooks and tracking changes as a real fleet. An integrator calls it before going live to
        see every webhook and the tracking page change.

        For an organization admin with a bearer token (401 `Invalid or missing token`).

        Errors:

        - 400 `outcome is required`, a `stepSeconds` outside 1 to 300

        - 404 `Organization not found`, `Order not found`

        - 409 `Order <ref> was not created with a test key`

        - 409 with the status machine's message for a terminal order

        - 409 `Order <ref> is already being simulated` while another simulation of the order runs

        - 503 when the task queue cannot take the first step"""
        organization = self.get_organization()
        serializer = valid_serializer(OrderSimulationInput, request.data)
        data = serializer.validated_data
        simulation = sandbox.order_simulation_start(
            organization_id=organization.id,
            order_id=order_id,
            outcome=data["outcome"],
            step_seconds=data["stepSeconds"],
            actor=f"sandbox ({request.user.email})",
        )
        return Response(OrderSimulationOutput(simulation).data, status=202)
