"""Management API of dispatch (contract "Dispatch"): the dispatch policy, drivers with the zones
they serve, plans and moves. For an organization admin with a bearer token."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response

from delivery.schema import errors, page_parameters, query_date
from delivery.serializers import valid_serializer
from dispatch import openapi_examples as examples
from dispatch import selectors
from dispatch import serializers as dispatch_serializers
from dispatch.models import PlanStatus
from dispatch.serializers import (
    DispatchDriverInput,
    DispatchDriverOutput,
    DispatchPolicyInput,
    DispatchPolicyOutput,
    MovedRouteOutput,
    PlanCreateInput,
    PlanListQuery,
    PlanMoveInput,
    PlanOutput,
    PlanPageOutput,
)
from dispatch.services import drivers as driver_services
from dispatch.services import moves, planning
from dispatch.services.policy import dispatch_policy_get_or_create, dispatch_policy_update
from tenants import selectors as tenant_selectors
from tenants.api_bases import ManagementApiView


class DispatchPolicyApi(ManagementApiView):
    @extend_schema(
        summary="Read the dispatch policy",
        responses={200: DispatchPolicyOutput, **errors(401, 404)},
        examples=examples.POLICY_READ,
    )
    def get(self, request, org_id):
        """The organization's dispatch settings: time at each stop (`serviceMinutes`), the
        straight-line travel model (`travelSpeedKmh`, `detourFactor`), auto-dispatch and proof of
        delivery. Created with the defaults the first time it is read.

        For an organization admin with a bearer token (401 `Invalid or missing token`); another
        organization: 404 `Organization not found`."""
        policy = dispatch_policy_get_or_create(organization_id=self.get_organization().id)
        return Response(DispatchPolicyOutput(policy).data)

    @extend_schema(
        summary="Update the dispatch policy",
        request=DispatchPolicyInput,
        responses={200: DispatchPolicyOutput, **errors(400, 401, 404)},
        examples=examples.POLICY_UPDATE,
    )
    def put(self, request, org_id):
        """Replaces the fields given and keeps the others; answers the whole policy. Ranges:
        `serviceMinutes` 0 to 240, `travelSpeedKmh` 1 to 200, `detourFactor` 1 to 5,
        `autoDispatch` `off` or `at_cutoff`, `autoDispatchLeadMinutes` 0 to 1440, `maxAttempts`
        1 to 10. Plans made before keep the figures they were made with.

        For an organization admin with a bearer token (401 `Invalid or missing token`).

        Errors:

        - 400 naming each invalid field (`serviceMinutes: must be between 0 and 240`, ...)

        - 404 `Organization not found`"""
        organization = self.get_organization()
        serializer = valid_serializer(DispatchPolicyInput, request.data)
        policy = dispatch_policy_update(
            organization_id=organization.id, **serializer.service_arguments()
        )
        return Response(DispatchPolicyOutput(policy).data)


def _driver_shown(organization, driver):
    return DispatchDriverOutput(
        selectors.drivers_with_dispatch(organization_id=organization.id, drivers=[driver])[0]
    ).data


class DriversApi(ManagementApiView):
    @extend_schema(
        summary="List the organization's drivers",
        responses={200: DispatchDriverOutput(many=True), **errors(401, 404)},
        examples=examples.DRIVER_SHOWN,
    )
    def get(self, request, org_id):
        """Every driver of the organization, inactive ones included, for choosing whom to assign
        an order to (`orders/:orderId/transition` with `driverId`), with the dispatch fields:
        `capacity` (orders per route; `null`: the vehicle default, which `effectiveCapacity`
        shows), `shiftStart`, `shiftEnd` (HH:MM zone time) and `zoneIds` (empty: every zone).

        Called by an organization admin with a bearer token.

        Errors: 401 `Invalid or missing token`; 404 `Organization not found`."""
        organization = self.get_organization()
        drivers = selectors.drivers_with_dispatch(
            organization_id=organization.id,
            drivers=list(tenant_selectors.driver_list(organization_id=organization.id)),
        )
        return Response(DispatchDriverOutput(drivers, many=True).data)

    @extend_schema(
        summary="Add a driver",
        request=DispatchDriverInput,
        responses={201: DispatchDriverOutput, **errors(400, 401, 404)},
        examples=examples.DRIVER_CREATE,
    )
    def post(self, request, org_id):
        """Adds a driver to the organization: `name` required; `phone` (normalized: `+` optional,
        then 7 to 15 digits), `vehicleType` and `isActive` (default true) optional. Tracking shows
        recipients only the driver's first name. Dispatch fields: `capacity` (1 to 10000, default
        `null`: the slot policy's `maxOrdersPerVehicle` for the driver's vehicle type, else 20),
        `shiftStart` and `shiftEnd` (HH:MM zone time, default 08:00 and 20:00, the end after the
        start), `zoneIds` (the zones served; default empty: every zone).

        Called by an organization admin with a bearer token.

        Errors: 400 `name is required`, a phone that is not a phone number, `shiftEnd must be
        after shiftStart`; 401 `Invalid or missing token`; 404 `Organization not found`, `Zone
        not found` (a `zoneIds` entry not the organization's)."""
        organization = self.get_organization()
        serializer = valid_serializer(DispatchDriverInput, request.data)
        driver = driver_services.driver_create(
            organization_id=organization.id, **serializer.validated_data
        )
        return Response(_driver_shown(organization, driver), status=201)


class DriverDetailApi(ManagementApiView):
    @extend_schema(
        summary="Read a driver",
        responses={200: DispatchDriverOutput, **errors(401, 404)},
        examples=examples.DRIVER_SHOWN,
    )
    def get(self, request, org_id, driver_id):
        """One driver of the organization, as listed.

        Called by an organization admin with a bearer token.

        Errors: 401 `Invalid or missing token`; 404 `Organization not found`, `Driver not found`
        (also for another organization's driver)."""
        organization = self.get_organization()
        driver = tenant_selectors.driver_get(organization_id=organization.id, driver_id=driver_id)
        return Response(_driver_shown(organization, driver))

    @extend_schema(
        summary="Change a driver",
        request=DispatchDriverInput,
        responses={200: DispatchDriverOutput, **errors(400, 401, 404)},
        examples=examples.DRIVER_UPDATE,
    )
    def patch(self, request, org_id, driver_id):
        """Changes any of name, phone, vehicleType, isActive (an inactive driver cannot be
        assigned new orders), capacity (`null`: back to the vehicle default), shiftStart,
        shiftEnd and zoneIds (replaces the zones served; `[]`: every zone); fields left out keep
        their value.

        Called by an organization admin with a bearer token.

        Errors: 400 a blank name, a phone that is not a phone number, `shiftEnd must be after
        shiftStart`; 401 `Invalid or missing token`; 404 `Organization not found`, `Driver not
        found`, `Zone not found`."""
        organization = self.get_organization()
        driver = tenant_selectors.driver_get(organization_id=organization.id, driver_id=driver_id)
        serializer = valid_serializer(DispatchDriverInput, request.data, partial=True)
        driver = driver_services.driver_update(driver=driver, **serializer.validated_data)
        return Response(_driver_shown(organization, driver))


class PlansApi(ManagementApiView):
    @extend_schema(
        operation_id="manage_organizations_dispatch_plans_list",
        summary="List dispatch plans",
        parameters=[
            query_date("date", description="YYYY-MM-DD: the plans of that day"),
            OpenApiParameter("status", str, enum=PlanStatus.values),
            *page_parameters(
                max_page_size=dispatch_serializers.MAX_PAGE_SIZE,
                default_page_size=dispatch_serializers.DEFAULT_PAGE_SIZE,
            ),
        ],
        responses={200: PlanPageOutput, **errors(400, 401, 404)},
        examples=examples.PLAN_LIST,
    )
    def get(self, request, org_id):
        """The organization's plans, newest first, a page at a time (`items`, `page`,
        `pageSize`, `total`), each as `dispatch/plans/:planId` answers it; filtered by `date` and
        `status`.

        For an organization admin with a bearer token (401 `Invalid or missing token`).

        Errors:

        - 400 naming each invalid filter (`date must be a valid date (format: YYYY-MM-DD)`,
          `status must be one of: ...`, a `pageSize` outside 1 to 100)

        - 404 `Organization not found`"""
        organization = self.get_organization()
        params = valid_serializer(PlanListQuery, request.query_params).validated_data
        page = selectors.plan_page(
            organization_id=organization.id,
            day=params.get("date"),
            status=params.get("status"),
            page=params["page"],
            page_size=params["pageSize"],
        )
        return Response(PlanPageOutput(page).data)

    @extend_schema(
        summary="Plan a day's routes",
        request=PlanCreateInput,
        responses={202: PlanOutput, 200: PlanOutput, **errors(400, 401, 404)},
        examples=examples.PLAN_CREATE,
    )
    def post(self, request, org_id):
        """Starts a plan of `date`'s orders over `zoneIds` (default: every zone with orders that
        day) and `driverIds` (default: every active driver serving one of them, less drivers
        routed that day by a committed plan of other zones); answers 202 with the plan
        `planning` while a worker solves it (read it back at `dispatch/plans/:planId` until it
        is `ready` or `failed`). The same `{date, zoneIds, driverIds}` while that plan is still
        planning answers it again with 200 and solves nothing twice.

        For an organization admin with a bearer token (401 `Invalid or missing token`).

        Errors:

        - 400 `date is required`, `date must be a valid date (format: YYYY-MM-DD)`, `Zone
          <name> has no depot` (no depot and no geocodable `defaultPickupAddress` in the slot
          policy), `No orders to plan on <date>`, `driverId must name an active driver`

        - 404 `Organization not found`, `Zone not found`, `Driver not found` (an id in the body
          that is not the organization's)"""
        organization = self.get_organization()
        data = valid_serializer(PlanCreateInput, request.data).validated_data
        plan, created = planning.plan_request(
            organization_id=organization.id,
            day=data["date"],
            zone_ids=data.get("zoneIds"),
            driver_ids=data.get("driverIds"),
        )
        plan = selectors.plan_get(organization_id=organization.id, plan_id=plan.id)
        return Response(PlanOutput(plan).data, status=202 if created else 200)


class PlanDetailApi(ManagementApiView):
    @extend_schema(
        summary="Read a dispatch plan",
        responses={200: PlanOutput, **errors(401, 404)},
        examples=examples.PLAN_READ,
    )
    def get(self, request, org_id, plan_id):
        """One plan: its status (`planning`, `ready`, `committed`, `superseded`, `failed` with
        `error`), the routing used, a `summary`, each driver's route with its stops in order
        (`eta` the arrival, never before the window opens), the orders left `unassigned` with
        their reason (`no_driver_for_zone`, `capacity`, `time_window`, `shift`, `vehicle`,
        `no_coordinates`) and the `excluded` ones (`click_collect`).

        For an organization admin with a bearer token (401 `Invalid or missing token`).

        Errors: 404 `Organization not found`, `Plan not found` (unknown, malformed or another
        organization's)."""
        plan = selectors.plan_get(organization_id=self.get_organization().id, plan_id=plan_id)
        return Response(PlanOutput(plan).data)


class PlanMovesApi(ManagementApiView):
    @extend_schema(
        summary="Move a stop of a ready plan",
        request=PlanMoveInput,
        responses={200: MovedRouteOutput, **errors(400, 401, 404, 409)},
        examples=examples.MOVE,
    )
    def post(self, request, org_id, plan_id):
        """Moves an order of the plan (a stop, or an unassigned order) to `position` (from 1) of
        route `routeId`; re-times that route and the one it left, and answers the route with
        `warnings` naming each window (`time_window`), `shift`, `capacity` or `vehicle` rule it
        now breaks. A dispatcher may accept them: the move is kept either way.

        For an organization admin with a bearer token (401 `Invalid or missing token`).

        Errors:

        - 400 `orderId is required`, `routeId is required`, `position is required`, `position
          must be between 1 and <n>`, `Order <ref> is not in this plan`, `Order <ref> is
          excluded from routing`, `Order <ref> has no coordinates`

        - 404 `Organization not found`, `Plan not found`, `Route not found`, `Order not found`

        - 409 `Plan is <status>` (only a `ready` plan moves)"""
        organization = self.get_organization()
        plan = selectors.plan_get(organization_id=organization.id, plan_id=plan_id)
        data = valid_serializer(PlanMoveInput, request.data).validated_data
        moved = moves.plan_move(
            plan=plan, order_id=data["orderId"], route_id=data["routeId"], position=data["position"]
        )
        moved = moves.MovedRoute(
            route=selectors.route_get(plan=plan, route_id=moved.route.id), warnings=moved.warnings
        )
        return Response(MovedRouteOutput(moved).data)
