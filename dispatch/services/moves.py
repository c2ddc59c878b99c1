"""Adjusting a ready plan (contract "Dispatch", "Adjusting a ready plan"): a stop, or an unassigned
order, moves to a route and position; the routes it touches are re-timed, and the route it
joined is answered with the rules the move breaks (a dispatcher may accept them)."""

from dataclasses import dataclass
from datetime import timedelta
from uuid import UUID

from django.db import transaction

from delivery.errors import ValidationFailed
from delivery.fields import parse_uuid
from dispatch import timing
from dispatch.errors import (
    OrderExcluded,
    OrderNotInPlan,
    OrderWithoutCoordinates,
    PlanNotReady,
    RouteNotFound,
)
from dispatch.models import (
    LeftOutReason,
    Plan,
    PlanLeftOut,
    PlanRoute,
    PlanStatus,
    PlanStop,
    StopKind,
)
from dispatch.services.matrices import matrices_for
from integrations import selectors as order_selectors
from integrations.models import DeliveryMethod, ServiceType, TemperatureClass


@dataclass(frozen=True)
class MoveWarning:
    reason: str
    order_id: UUID | None
    external_ref: str | None
    message: str


@dataclass(frozen=True)
class MovedRoute:
    route: PlanRoute
    warnings: list[MoveWarning]


def _seconds(route: PlanRoute, moment) -> int:
    return int((moment - route.shift_start).total_seconds())


#: a route's columns its timing sets (`route_timed`)
ROUTE_TIMES = ["start_at", "end_at", "travel_seconds", "distance_meters"]


def route_retime(*, plan: Plan, route: PlanRoute) -> list[MoveWarning]:
    """Re-times `route` from its stops in sequence (numbering them from 1) and stores the ETAs
    and totals; answers what the route breaks. Seconds count from the route's shift start."""
    stops = list(route.stops.select_related("order").order_by("sequence", "id"))
    timed = route_timed(plan=plan, route=route, stops=stops)
    PlanStop.objects.bulk_update(stops, ["sequence", "eta"])
    route.save(update_fields=ROUTE_TIMES)
    by_order = {str(stop.order_id): stop for stop in stops}
    warnings = [_warning(found, by_order, route) for found in timed.warnings]
    warnings += [
        MoveWarning(
            reason=LeftOutReason.VEHICLE,
            order_id=stop.order_id,
            external_ref=stop.order.external_ref,
            message=f"Order {stop.order.external_ref} needs a {_vehicle_needed(stop)} vehicle",
        )
        for stop in stops
        if _vehicle_needed(stop) and not _fits(stop, route.vehicle_type)
    ]
    return warnings


def route_timed(*, plan: Plan, route: PlanRoute, stops: list[PlanStop]) -> timing.RouteTiming:
    """Times `route` through `stops` in this order, in memory only (storing is the caller's):
    numbers them from 1, sets each one's ETA and the route's ROUTE_TIMES; answers the timing."""
    points = [(route.depot_lat, route.depot_lng), *((stop.lat, stop.lng) for stop in stops)]
    matrices = matrices_for(
        points, speed_kmh=plan.travel_speed_kmh, detour_factor=plan.detour_factor
    )
    timed = timing.route_time(
        stops=[
            timing.TimedStop(
                key=str(stop.order_id),
                location=index,
                kind=stop.kind,
                window_start=_seconds(route, stop.window_start),
                window_end=_seconds(route, stop.window_end),
                service_seconds=stop.service_seconds,
            )
            for index, stop in enumerate(stops, start=1)
        ],
        start_location=0,
        end_location=0,
        durations=matrices.durations,
        distances=matrices.distances,
        shift_start=0,
        shift_end=_seconds(route, route.shift_end),
        capacity=route.capacity,
    )
    origin = route.shift_start
    for sequence, (stop, eta) in enumerate(zip(stops, timed.etas, strict=True), start=1):
        stop.sequence = sequence
        stop.eta = origin + _delta(eta)
    route.start_at = origin + _delta(timed.start)
    route.end_at = origin + _delta(timed.end)
    route.travel_seconds = timed.travel_seconds
    route.distance_meters = timed.distance_meters
    return timed


def _delta(seconds: int) -> timedelta:
    return timedelta(seconds=seconds)


def _vehicle_needed(stop: PlanStop) -> str:
    order = stop.order
    if order.delivery_method:
        return order.delivery_method
    if order.temperature_class in (TemperatureClass.CHILLED, TemperatureClass.FROZEN):
        return DeliveryMethod.REFRIGERATED
    return ""


def _fits(stop: PlanStop, vehicle_type: str) -> bool:
    order = stop.order
    if order.delivery_method and order.delivery_method != vehicle_type:
        return False
    cold = order.temperature_class in (TemperatureClass.CHILLED, TemperatureClass.FROZEN)
    return not cold or vehicle_type == DeliveryMethod.REFRIGERATED


def _warning(found: timing.RouteWarning, by_order: dict, route: PlanRoute) -> MoveWarning:
    if found.reason == "time_window":
        stop = by_order[found.key]
        ref = stop.order.external_ref
        return MoveWarning(
            "time_window",
            stop.order_id,
            ref,
            f"Order {ref} is reached {_minutes(found.amount)} after its window closes",
        )
    if found.reason == "shift":
        return MoveWarning(
            "shift",
            None,
            None,
            f"The route ends {_minutes(found.amount)} after the driver's shift",
        )
    return MoveWarning(
        "capacity",
        None,
        None,
        f"The route carries {found.amount} orders, over the capacity of {route.capacity}",
    )


def _minutes(seconds: int) -> str:
    minutes = -(-seconds // 60)
    return f"{minutes} minute" + ("" if minutes == 1 else "s")


@transaction.atomic
def plan_move(
    *,
    plan: Plan,
    order_id: UUID | str,
    route_id: UUID | str,
    position: int,
) -> MovedRoute:
    """Moves order `order_id` (a stop of the plan, or unassigned) to `position` (from 1) of
    route `route_id`, re-timing that route and the one it left.

    409 `Plan is <status>` unless the plan is `ready`; 404 `Route not found`, `Order not
    found`; 400 `Order <ref> is not in this plan`, `Order <ref> is excluded from routing`,
    `Order <ref> has no coordinates`,
    `position must be between 1 and <n>`.
    """
    plan = Plan.objects.select_for_update().get(pk=plan.pk)
    if plan.status != PlanStatus.READY:
        raise PlanNotReady(plan.status)
    parsed_route = parse_uuid(route_id)
    route = (
        PlanRoute.objects.select_for_update().filter(plan=plan, pk=parsed_route).first()
        if parsed_route
        else None
    )
    if route is None:
        raise RouteNotFound()
    order = order_selectors.order_get(organization_id=plan.organization_id, order_id=order_id)
    stop = PlanStop.objects.filter(plan=plan, order=order).select_related("route").first()
    left_out = None
    if stop is None:
        left_out = PlanLeftOut.objects.filter(plan=plan, order=order).first()
        if left_out is None:
            raise OrderNotInPlan(order.external_ref)
        if left_out.excluded:
            raise OrderExcluded(order.external_ref)
        if order.dropoff_lat is None or order.dropoff_lng is None:
            raise OrderWithoutCoordinates(order.external_ref)

    others = list(route.stops.exclude(order=order).order_by("sequence", "id"))
    if not 1 <= position <= len(others) + 1:
        raise ValidationFailed([f"position must be between 1 and {len(others) + 1}"])
    left_route = stop.route if stop is not None and stop.route_id != route.id else None
    if stop is None:
        stop = PlanStop(
            plan=plan,
            route=route,
            order=order,
            kind=StopKind.PICKUP if order.service_type == ServiceType.RETURN else StopKind.DELIVERY,
            eta=route.shift_start,
            window_start=left_out.window_start or route.shift_start,
            window_end=left_out.window_end or route.shift_end,
            lat=order.dropoff_lat,
            lng=order.dropoff_lng,
            service_seconds=plan.service_seconds,
            order_version=left_out.order_version,
        )
        left_out.delete()
    stop.route = route
    others.insert(position - 1, stop)
    # Sequences beyond any in use first, so the deferred unique check never sees a clash.
    offset = len(others) + 1000
    for sequence, item in enumerate(others, start=1):
        item.sequence = offset + sequence
    if stop.pk is None:
        stop.save()
    for item in others:
        item.save(update_fields=["route", "sequence"])
    warnings = route_retime(plan=plan, route=route)
    if left_route is not None:
        route_retime(plan=plan, route=left_route)
    route.refresh_from_db()
    return MovedRoute(route=route, warnings=warnings)
