"""A driver's route of a day, and assigning an order by hand onto it (contract "Dispatch", "Manual
assignment").

The day's routes are the routes of its committed plans (at most one per driver). Assigning an
order by hand (the management API's transition to `assigned`, or the admin's) appends it to the
end of the driver's route of the order's delivery day, creating the route when the driver has
none (in the committed plan of the order's zone, or in a plan of its own), re-times the route and
gives the order that ETA. It takes the day's lock first, as a commit does, so a commit and a
manual assignment of one day happen one after the other.

An order that cannot be timed (no dropoff coordinates, no zone, a zone without a depot) or that
never enters a plan (a test key's, the sandbox driver) is assigned without a route and without an
ETA, as before dispatch.
"""

from datetime import date

from django.db import transaction
from django.utils import timezone

from delivery.errors import ApplicationError
from delivery.timezones import zone_tz
from dispatch.models import Plan, PlanRoute, PlanStatus, PlanStop, StopKind
from dispatch.services import planning
from dispatch.services.committing import day_lock, routes_renumber
from dispatch.services.moves import route_retime
from dispatch.services.order_versions import order_version
from dispatch.services.orders_of_day import order_window
from dispatch.services.policy import dispatch_policy_get_or_create
from integrations.models import Order, OrderStatus, ServiceType
from integrations.services import orders as order_services
from integrations.services.sandbox import SANDBOX_VEHICLE_TYPE
from slots.occurrences import local_moment
from slots.services.templates import slot_policy_get_or_create
from tenants.models import Driver

#: a plan made by a manual assignment (not a solve); its `request_key`
MANUAL_REQUEST_KEY = "manual"


def order_day(order: Order) -> date:
    """The order's delivery day: its slot's date, else its window's day, else today (zone time)."""
    tz = zone_tz(order.zone.timezone) if order.zone_id else zone_tz("UTC")
    window = order_window(order)
    booking = getattr(order, "slot_booking", None)
    if booking is not None and booking.released_at is None:
        return booking.date
    if window is not None:
        return window.start.astimezone(tz).date()
    return timezone.now().astimezone(tz).date()


def committed_route(*, driver: Driver, day: date) -> PlanRoute | None:
    """The driver's route of `day` in a committed plan (at most one)."""
    return (
        PlanRoute.objects.filter(driver=driver, date=day, plan__status=PlanStatus.COMMITTED)
        .select_related("plan", "zone")
        .order_by("plan__committed_at", "id")
        .last()
    )


def _routable(order: Order, driver: Driver) -> bool:
    return (
        driver.organization_id == order.organization_id
        and driver.is_active
        and order.zone_id is not None
        and order.dropoff_lat is not None
        and order.dropoff_lng is not None
        and not (order.api_key_id and order.api_key.test)
        and driver.vehicle_type != SANDBOX_VEHICLE_TYPE
    )


def _plan_for(order: Order, day: date) -> Plan:
    """The committed plan of `day` that covers the order's zone, else a new committed plan of
    that zone made for manual assignments."""
    plan = (
        Plan.objects.select_for_update()
        .filter(
            organization_id=order.organization_id,
            date=day,
            status=PlanStatus.COMMITTED,
            zone_ids__contains=[order.zone_id],
        )
        .order_by("committed_at", "id")
        .last()
    )
    if plan is not None:
        return plan
    policy = dispatch_policy_get_or_create(organization_id=order.organization_id)
    now = timezone.now()
    return Plan.objects.create(
        organization_id=order.organization_id,
        date=day,
        zone_ids=[order.zone_id],
        zones_requested=True,
        request_key=MANUAL_REQUEST_KEY,
        status=PlanStatus.COMMITTED,
        origin=planning.plan_origin([order.zone], day),
        service_seconds=policy.service_minutes * 60,
        travel_speed_kmh=policy.travel_speed_kmh,
        detour_factor=policy.detour_factor,
        solver_ms=0,
        solved_at=now,
        committed_at=now,
    )


def _route_create(order: Order, driver: Driver, day: date) -> PlanRoute:
    plan = _plan_for(order, day)
    zone = order.zone
    depot = planning.zone_depot(
        zone=zone, fallback=planning.default_depot(organization_id=order.organization_id)
    )
    tz = zone_tz(zone.timezone)
    capacity = planning.driver_capacity(
        driver,
        slot_policy_get_or_create(organization_id=order.organization_id).default_vehicle_capacity,
    )
    return PlanRoute.objects.create(
        plan=plan,
        driver=driver,
        date=day,
        zone=zone,
        vehicle_type=driver.vehicle_type,
        capacity=capacity,
        shift_start=local_moment(day, driver.shift_start, tz),
        shift_end=local_moment(day, driver.shift_end, tz),
        depot_lat=depot.lat,
        depot_lng=depot.lng,
    )


def _leave_other_routes(order: Order, day: date) -> None:
    """Takes the order off any committed route of `day` (it had another driver, or none now),
    re-timing that route."""
    for stop in PlanStop.objects.filter(
        order=order, plan__status=PlanStatus.COMMITTED, route__date=day
    ).select_related("plan", "route"):
        route, plan = stop.route, stop.plan
        stop.delete()
        rest = list(route.stops.order_by("sequence", "id"))
        routes_renumber({route: rest})
        route_retime(plan=plan, route=route)


def order_route_append(*, order: Order, driver: Driver) -> PlanStop | None:
    """Appends `order` to the end of `driver`'s route of its day (made when missing) and re-times
    the route; answers the new stop (with its ETA), or None when the order cannot be routed
    (see the module's docstring). In the caller's transaction, after `day_lock`."""
    if not _routable(order, driver):
        return None
    day = order_day(order)
    try:
        route = committed_route(driver=driver, day=day) or _route_create(order, driver, day)
    except ApplicationError:
        return None  # a zone without a depot: assigned without a route, as before dispatch
    plan = route.plan
    if order.zone_id not in plan.zone_ids:
        plan.zone_ids = sorted([*plan.zone_ids, order.zone_id], key=str)
        plan.save(update_fields=["zone_ids"])
    _leave_other_routes(order, day)
    window = order_window(order)
    last = route.stops.order_by("-sequence").values_list("sequence", flat=True).first() or 0
    stop = PlanStop.objects.create(
        plan=plan,
        route=route,
        order=order,
        sequence=last + 1,
        kind=StopKind.PICKUP if order.service_type == ServiceType.RETURN else StopKind.DELIVERY,
        eta=route.shift_start,
        window_start=window.start if window else route.shift_start,
        window_end=window.end if window else route.shift_end,
        lat=order.dropoff_lat,
        lng=order.dropoff_lng,
        service_seconds=plan.service_seconds,
        order_version=order_version(order),
    )
    route_retime(plan=plan, route=route)
    stop.refresh_from_db()
    return stop


def order_assign(*, order: Order, driver: Driver, actor: str = "", reason: str = "") -> Order:
    """Assigns `order` to `driver` by hand (contract "Dispatch", "Manual assignment"): the status
    machine's transition to `assigned` (its checks, errors and `order.assigned`, now with the
    ETA), the order appended to the end of the driver's route of its day.

    Locks in a commit's order: the day (read from the order without a lock), then the order."""
    day = order_day(Order.objects.select_related("zone", "slot_booking").get(pk=order.pk))
    with transaction.atomic():
        day_lock(organization_id=order.organization_id, day=day)
        locked = (
            Order.objects.select_for_update(of=("self",))
            .select_related("zone", "api_key", "slot_booking__template__zone")
            .get(pk=order.pk)
        )
        stop = None
        if OrderStatus.ASSIGNED in order_services.ALLOWED_TRANSITIONS[locked.status]:
            stop = order_route_append(order=locked, driver=driver)
        # The machine checks the move and the driver (409, 404, 400), undoing the route's change.
        return order_services.order_transition(
            order=locked,
            to_status=OrderStatus.ASSIGNED,
            actor=actor,
            driver=driver,
            reason=reason,
            eta=stop.eta if stop is not None else None,
        )


def order_unassign(*, order: Order, to_status: str, actor: str = "", reason: str = "") -> Order:
    """Takes an assigned order back to `dispatching` or `pending` by hand (the status machine's
    checks and errors) and off its driver's route of the day, re-timing that route."""
    day = order_day(Order.objects.select_related("zone", "slot_booking").get(pk=order.pk))
    with transaction.atomic():
        day_lock(organization_id=order.organization_id, day=day)
        moved = order_services.order_transition(
            order=order, to_status=to_status, actor=actor, reason=reason
        )
        _leave_other_routes(moved, day)
        return moved


def order_move(
    *,
    order: Order,
    to_status: str,
    actor: str,
    driver: Driver | None,
    reason: str,
    failure_reason: str = "",
) -> None:
    """A status change asked by hand (management `transition`, the orders' admin): assigning
    puts the order at the end of its driver's route of the day, unassigning takes it off;
    every other change is the status machine's alone."""
    if to_status == OrderStatus.ASSIGNED and driver is not None:
        order_assign(order=order, driver=driver, actor=actor, reason=reason)
    elif to_status in (OrderStatus.DISPATCHING, OrderStatus.PENDING):
        order_unassign(order=order, to_status=to_status, actor=actor, reason=reason)
    else:
        order_services.order_transition(
            order=order,
            to_status=to_status,
            actor=actor,
            driver=driver,
            reason=reason,
            failure_reason=failure_reason,
        )
