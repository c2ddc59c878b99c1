"""Plans: a day's orders turned into driver routes (contract "Dispatch").

`plan_request` (the POST) checks the request, inserts the plan `planning` and queues the
`dispatch.solve_plan` task; `plan_solve` (the task) builds the solver's `Problem`, calls
`dispatch.solver.solve`, re-times every route with `dispatch.timing` (never taking the
solver's word) and stores routes, stops, unassigned and excluded orders. Every order the plan
considered ends up exactly once: on a route, unassigned with a reason, or excluded.

Times: the solver counts seconds from the plan's `origin`, midnight of the date in the
earliest of its zones' time zones, so zones of different time zones share one clock.
"""

import dataclasses
import hashlib
import logging
import time as clock
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from uuid import UUID

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from kombu.exceptions import KombuError
from redis.exceptions import RedisError

from delivery.celery import app as celery_app
from delivery.errors import ApplicationError
from delivery.timezones import zone_tz
from dispatch import solver, timing
from dispatch.errors import NoOrdersToPlan, ZoneHasNoDepot
from dispatch.models import (
    DriverZone,
    LeftOutReason,
    Plan,
    PlanLeftOut,
    PlanRoute,
    PlanStatus,
    PlanStop,
    StopKind,
)
from dispatch.services import replanning
from dispatch.services.matrices import matrices_for
from dispatch.services.order_versions import order_version
from dispatch.services.orders_of_day import order_window, orders_of_day
from dispatch.services.policy import dispatch_policy_get_or_create
from integrations.errors import DriverInactive
from integrations.models import DeliveryMethod, Order, ServiceType, TemperatureClass
from integrations.services.sandbox import SANDBOX_VEHICLE_TYPE
from slots.occurrences import local_moment
from slots.services.templates import slot_policy_get_or_create
from tenants import selectors as tenant_selectors
from tenants.models import Driver
from zones import geocoding
from zones import selectors as zone_selectors
from zones.models import Zone

logger = logging.getLogger(__name__)

SOLVE_TASK = "dispatch.solve_plan"
#: contract "Dispatch": a driver's capacity when neither the driver nor the slot policy says
DEFAULT_CAPACITY = 20
#: temperature classes that need a refrigerated vehicle
COLD_CLASSES = (TemperatureClass.CHILLED, TemperatureClass.FROZEN)


# ----- the request -----


@dataclass(frozen=True)
class Depot:
    lat: float
    lng: float
    address: str


def zone_depot(*, zone: Zone, fallback: Depot | None) -> Depot:
    """The zone's depot, else the slot policy's default pickup address (`fallback`, geocoded);
    400 `Zone <name> has no depot` without either."""
    if zone.has_depot:
        return Depot(zone.depot_lat, zone.depot_lng, zone.depot_address)
    if fallback is None:
        raise ZoneHasNoDepot(zone.name)
    return fallback


def default_depot(*, organization_id: UUID | str) -> Depot | None:
    """The slot policy's `defaultPickupAddress`, geocoded; None when unset or not found."""
    address = slot_policy_get_or_create(organization_id=organization_id).default_pickup_address
    if not address:
        return None
    found = geocoding.geocode(organization_id=organization_id, address=address)
    return None if found is None else Depot(found.lat, found.lng, address)


def _request_key(zone_ids: list[UUID] | None, driver_ids: list[UUID] | None) -> str:
    """Names a request by what it asked for: the same zones and drivers (in any order) are the
    same request; not asking is `*`."""
    zones = ",".join(sorted(map(str, zone_ids))) if zone_ids else "*"
    drivers = ",".join(sorted(map(str, driver_ids))) if driver_ids else "*"
    return hashlib.sha256(f"{zones}|{drivers}".encode()).hexdigest()


def _zones_requested(*, organization_id, zone_ids: Iterable) -> list[Zone]:
    zones = {}
    for zone_id in zone_ids:
        zone = zone_selectors.zone_get(organization_id=organization_id, zone_id=zone_id)
        zones[zone.id] = zone
    return sorted(zones.values(), key=lambda zone: (zone.name, str(zone.id)))


def _drivers_requested(*, organization_id, driver_ids: Iterable) -> list[Driver]:
    drivers = {}
    for driver_id in driver_ids:
        driver = tenant_selectors.driver_get(organization_id=organization_id, driver_id=driver_id)
        if not driver.is_active or driver.vehicle_type == SANDBOX_VEHICLE_TYPE:
            raise DriverInactive()
        drivers[driver.id] = driver
    return list(drivers.values())


def plan_zones(*, organization_id, day: date, zone_ids: list | None) -> list[Zone]:
    """The zones asked for (each the organization's: 404 `Zone not found` otherwise), or every
    zone with orders on `day`, by name."""
    if zone_ids:
        return _zones_requested(organization_id=organization_id, zone_ids=zone_ids)
    every_zone = list(zone_selectors.zone_list(organization_id=organization_id))
    with_orders = set(
        orders_of_day(organization_id=organization_id, day=day, zones=every_zone).values_list(
            "zone_id", flat=True
        )
    )
    return [zone for zone in every_zone if zone.id in with_orders]


def plan_request(
    *,
    organization_id: UUID | str,
    day: date,
    zone_ids: list | None = None,
    driver_ids: list | None = None,
) -> tuple[Plan, bool]:
    """A plan of `day` `planning`, its solve queued; `(plan, False)` when the same request is
    already planning (that plan, no second solve).

    400 `Zone <name> has no depot`, `No orders to plan on <date>`, `driverId must name an
    active driver`; 404 `Zone not found`, `Driver not found` for ids not the organization's.
    """
    zones = plan_zones(organization_id=organization_id, day=day, zone_ids=zone_ids)
    drivers = _drivers_requested(organization_id=organization_id, driver_ids=driver_ids or [])
    key = _request_key(zone_ids, driver_ids)
    planning = _planning_plan(organization_id=organization_id, day=day, key=key)
    if planning is not None:
        return planning, False
    fallback = default_depot(organization_id=organization_id)
    for zone in zones:
        zone_depot(zone=zone, fallback=fallback)
    if (
        not zones
        or not orders_of_day(organization_id=organization_id, day=day, zones=zones).exists()
    ):
        raise NoOrdersToPlan(day)
    try:
        with transaction.atomic():
            plan = Plan.objects.create(
                organization_id=organization_id,
                date=day,
                zone_ids=[zone.id for zone in zones],
                zones_requested=bool(zone_ids),
                requested_driver_ids=[driver.id for driver in drivers],
                request_key=key,
            )
    except IntegrityError:
        # The same request raced us past the check: the partial unique constraint let one in.
        planning = _planning_plan(organization_id=organization_id, day=day, key=key)
        if planning is None:
            raise
        return planning, False
    _queue(plan)
    return plan, True


def _planning_plan(*, organization_id, day: date, key: str) -> Plan | None:
    return Plan.objects.filter(
        organization_id=organization_id, date=day, request_key=key, status=PlanStatus.PLANNING
    ).first()


def _queue(plan: Plan) -> None:
    """Queues the solve; a broker that cannot be reached fails the plan, saying so."""
    try:
        celery_app.send_task(SOLVE_TASK, args=[str(plan.id)], retry=False)
    except (KombuError, RedisError, OSError) as exc:
        logger.error("plan %s could not be queued: %s", plan.id, exc)
        Plan.objects.filter(pk=plan.pk, status=PlanStatus.PLANNING).update(
            status=PlanStatus.FAILED, error="The plan could not be queued (task broker unavailable)"
        )
        plan.refresh_from_db()


# ----- the solve -----


@dataclass
class _Stop:
    """An order as a job of the problem, with what storing it needs."""

    order: Order
    job: solver.Job
    lat: float
    lng: float
    window_start: datetime
    window_end: datetime


@dataclass
class _Vehicle:
    driver: Driver
    zone: Zone
    depot: Depot
    vehicle: solver.Vehicle
    #: the plan's zones this driver serves
    zone_ids: set[UUID]
    #: the driver's started stops, first on its route; `vehicle` then starts after them
    pinned: replanning.PinnedPrefix | None = None


@dataclass
class _Built:
    """A plan's problem and what maps it back to orders and drivers."""

    origin: datetime
    points: list[tuple[float, float]] = field(default_factory=list)
    vehicles: list[_Vehicle] = field(default_factory=list)
    stops: dict[str, _Stop] = field(default_factory=dict)
    #: order id -> (order, reason, excluded, window)
    left_out: dict[str, tuple] = field(default_factory=dict)


def plan_solve(*, plan_id: UUID | str) -> Plan | None:
    """Solves a `planning` plan (the task); None when there is none to solve.

    The plan row is locked for the whole solve, so a second message for it waits, then finds it
    no longer planning and does nothing. A solve that raises marks the plan `failed` with
    `error`; a worker that dies rolls back with the plan still planning, for the redelivered
    message to solve.
    """
    try:
        return _plan_solve(plan_id)
    except Exception as exc:
        logger.exception("plan %s failed", plan_id)
        message = exc.message if isinstance(exc, ApplicationError) else "The solve failed"
        if isinstance(message, list):
            message = "; ".join(message)
        Plan.objects.filter(pk=plan_id, status=PlanStatus.PLANNING).update(
            status=PlanStatus.FAILED, error=message, solved_at=timezone.now()
        )
        raise


@transaction.atomic
def _plan_solve(plan_id) -> Plan | None:
    plan = (
        Plan.objects.select_for_update(skip_locked=True)
        .filter(pk=plan_id, status=PlanStatus.PLANNING)
        .first()
    )
    if plan is None:
        return None
    steps = _Steps()
    policy = dispatch_policy_get_or_create(organization_id=plan.organization_id)
    plan.service_seconds = policy.service_minutes * 60
    plan.travel_speed_kmh = policy.travel_speed_kmh
    plan.detour_factor = policy.detour_factor

    built = _problem_build(plan)
    steps.done("reading")
    matrices = matrices_for(
        built.points, speed_kmh=plan.travel_speed_kmh, detour_factor=plan.detour_factor
    )
    steps.done("matrix")
    jobs = tuple(stop.job for stop in built.stops.values())
    problem = solver.Problem(
        durations=matrices.durations,
        distances=matrices.distances,
        vehicles=tuple(item.vehicle for item in built.vehicles),
        jobs=jobs,
        seed=1,
        time_limit_seconds=settings.DISPATCH_SOLVER_TIME_LIMIT_SECONDS,
        max_iterations=settings.DISPATCH_SOLVER_MAX_ITERATIONS,
    )
    solution = solver.solve(problem) if jobs and built.vehicles else _nothing_solved(jobs)
    steps.done("solving")
    _solution_store(plan, built, problem, solution)
    plan.routing = matrices.routing
    plan.solver_ms = solution.solver_ms
    plan.status = PlanStatus.READY
    plan.solved_at = timezone.now()
    plan.origin = built.origin
    # The plan's own row is the last write; its time is too small to matter.
    steps.done("writing")
    plan.timings = steps.milliseconds
    plan.save()
    logger.info("plan %s solved: %s ms", plan.id, plan.timings)
    return plan


class _Steps:
    """Milliseconds of each step of a solve, each from the end of the one before."""

    def __init__(self) -> None:
        self.milliseconds: dict[str, int] = {}
        self._since = clock.perf_counter()

    def done(self, step: str) -> None:
        now = clock.perf_counter()
        self.milliseconds[step] = round((now - self._since) * 1000)
        self._since = now


def _nothing_solved(jobs) -> solver.Solution:
    return solver.Solution(routes=(), unassigned=tuple(job.key for job in jobs), solver_ms=0)


def plan_origin(zones: list[Zone], day: date) -> datetime:
    """Midnight of `day` in the earliest of the zones' time zones."""
    return min(local_moment(day, time(0), zone_tz(zone.timezone)) for zone in zones).astimezone(UTC)


def seconds_from(origin: datetime, moment: datetime) -> int:
    return int((moment - origin).total_seconds())


def moment_at(origin: datetime, seconds: int) -> datetime:
    return origin + timedelta(seconds=seconds)


def driver_capacity(driver: Driver, vehicle_capacity: list[dict]) -> int:
    """contract "Dispatch": the driver's own, else `maxOrdersPerVehicle` of the slot policy's
    `defaultVehicleCapacity` entry of the driver's vehicle type, else 20."""
    if driver.capacity is not None:
        return driver.capacity
    for entry in vehicle_capacity:
        if entry.get("vehicleType") == driver.vehicle_type:
            return int(entry["maxOrdersPerVehicle"])
    return DEFAULT_CAPACITY


def plan_drivers(plan: Plan, zones: list[Zone]) -> dict[UUID, tuple[Driver, list[Zone]]]:
    """The plan's drivers (asked for, or every active driver serving one of its zones; never the
    sandbox driver), each with the plan's zones it serves, less the drivers who have a route that
    day in a committed plan of other zones."""
    drivers = Driver.objects.filter(organization_id=plan.organization_id, is_active=True).exclude(
        vehicle_type=SANDBOX_VEHICLE_TYPE
    )
    if plan.requested_driver_ids:
        drivers = drivers.filter(pk__in=plan.requested_driver_ids)
    busy = PlanRoute.objects.filter(
        plan__organization_id=plan.organization_id,
        plan__status=PlanStatus.COMMITTED,
        date=plan.date,
    ).exclude(plan__zone_ids__overlap=plan.zone_ids)
    drivers = drivers.exclude(pk__in=busy.values("driver_id")).order_by("name", "id")
    served: dict[UUID, set[UUID]] = {}
    for driver_id, zone_id in DriverZone.objects.filter(driver__in=drivers).values_list(
        "driver_id", "zone_id"
    ):
        served.setdefault(driver_id, set()).add(zone_id)
    chosen = {}
    for driver in drivers:
        own = served.get(driver.id)
        zones_served = [zone for zone in zones if own is None or zone.id in own]
        if zones_served:
            chosen[driver.id] = (driver, zones_served)
    return chosen


def _problem_build(plan: Plan) -> _Built:
    zones = list(Zone.objects.filter(pk__in=plan.zone_ids).order_by("name", "id"))
    built = _Built(origin=plan_origin(zones, plan.date))
    fallback = default_depot(organization_id=plan.organization_id)
    depots = {zone.id: zone_depot(zone=zone, fallback=fallback) for zone in zones}
    vehicle_capacity = slot_policy_get_or_create(
        organization_id=plan.organization_id
    ).default_vehicle_capacity

    for driver, zones_served in plan_drivers(plan, zones).values():
        # A driver serving several zones starts from the first one's depot (by zone name).
        home = zones_served[0]
        depot = depots[home.id]
        location = len(built.points)
        built.points.append((depot.lat, depot.lng))
        tz = zone_tz(home.timezone)
        built.vehicles.append(
            _Vehicle(
                driver=driver,
                zone=home,
                depot=depot,
                vehicle=solver.Vehicle(
                    key=str(driver.id),
                    capacity=driver_capacity(driver, vehicle_capacity),
                    start_location=location,
                    end_location=location,
                    shift_start=seconds_from(
                        built.origin, local_moment(plan.date, driver.shift_start, tz)
                    ),
                    shift_end=seconds_from(
                        built.origin, local_moment(plan.date, driver.shift_end, tz)
                    ),
                ),
                zone_ids={zone.id for zone in zones_served},
            )
        )
    _started_stops_pin(built, plan)
    orders = orders_of_day(organization_id=plan.organization_id, day=plan.date, zones=zones)
    for order in orders:
        _order_add(built, plan, order)
    return built


def _started_stops_pin(built: _Built, plan: Plan) -> None:
    """contract "Dispatch": a re-plan keeps each driver's started stops first on its route
    (`dispatch.services.replanning`). The solver's vehicle starts where and when the last of
    them is done, with the room the returns picked up take; the solver never sees them."""
    started = replanning.started_orders(
        organization_id=plan.organization_id,
        day=plan.date,
        driver_ids=[item.driver.id for item in built.vehicles],
    )
    for item in built.vehicles:
        orders = started.get(item.driver.id)
        if not orders:
            continue
        prefix = replanning.pinned_prefix(
            orders=orders,
            depot=(item.depot.lat, item.depot.lng),
            shift_start=moment_at(built.origin, item.vehicle.shift_start),
            shift_end=moment_at(built.origin, item.vehicle.shift_end),
            service_seconds=plan.service_seconds,
            speed_kmh=plan.travel_speed_kmh,
            detour_factor=plan.detour_factor,
        )
        location = len(built.points)
        built.points.append((prefix.lat, prefix.lng))
        item.pinned = prefix
        item.vehicle = dataclasses.replace(
            item.vehicle,
            start_location=location,
            shift_start=max(seconds_from(built.origin, prefix.free_at), item.vehicle.shift_start),
            capacity=max(item.vehicle.capacity - prefix.pickups, 0),
        )


def _fits(order: Order, vehicle_type: str) -> bool:
    """contract "Dispatch", "Vehicle fit"."""
    if order.delivery_method and vehicle_type != order.delivery_method:
        return False
    return order.temperature_class not in COLD_CLASSES or (
        vehicle_type == DeliveryMethod.REFRIGERATED
    )


def _order_add(built: _Built, plan: Plan, order: Order) -> None:
    window = order_window(order)
    key = str(order.id)
    if order.service_type == ServiceType.CLICK_COLLECT:
        built.left_out[key] = (order, LeftOutReason.CLICK_COLLECT, True, window)
        return
    if order.dropoff_lat is None or order.dropoff_lng is None:
        built.left_out[key] = (order, LeftOutReason.NO_COORDINATES, False, window)
        return
    serving = [item for item in built.vehicles if order.zone_id in item.zone_ids]
    if not serving:
        built.left_out[key] = (order, LeftOutReason.NO_DRIVER_FOR_ZONE, False, window)
        return
    allowed = [item for item in serving if _fits(order, item.driver.vehicle_type)]
    if not allowed:
        built.left_out[key] = (order, LeftOutReason.VEHICLE, False, window)
        return
    if window is None:
        # Without a window of its own, the order may be served whenever a driver works.
        start = min(item.vehicle.shift_start for item in allowed)
        end = max(item.vehicle.shift_end for item in allowed)
        window_start, window_end = moment_at(built.origin, start), moment_at(built.origin, end)
    else:
        window_start, window_end = window.start, window.end
        start, end = (
            seconds_from(built.origin, window.start),
            seconds_from(built.origin, window.end),
        )
    location = len(built.points)
    built.points.append((order.dropoff_lat, order.dropoff_lng))
    job = solver.Job(
        key=key,
        location=location,
        kind="pickup" if order.service_type == ServiceType.RETURN else "delivery",
        window_start=start,
        window_end=end,
        service_seconds=plan.service_seconds,
        allowed_vehicles=None
        if len(allowed) == len(built.vehicles)
        else frozenset(item.vehicle.key for item in allowed),
    )
    built.stops[key] = _Stop(
        order, job, order.dropoff_lat, order.dropoff_lng, window_start, window_end
    )


def _timed(problem: solver.Problem, vehicle: solver.Vehicle, stops: list[_Stop]):
    return timing.route_time(
        stops=[
            timing.TimedStop(
                key=stop.job.key,
                location=stop.job.location,
                kind=stop.job.kind,
                window_start=stop.job.window_start,
                window_end=stop.job.window_end,
                service_seconds=stop.job.service_seconds,
            )
            for stop in stops
        ],
        start_location=vehicle.start_location,
        end_location=vehicle.end_location,
        durations=problem.durations,
        distances=problem.distances,
        shift_start=vehicle.shift_start,
        shift_end=vehicle.shift_end,
        capacity=vehicle.capacity,
    )


def _route_checked(problem, item: _Vehicle, stops: list[_Stop], unassigned: dict[str, str]):
    """Re-times the solver's route with our own timing and takes off every stop that breaks a
    rule (the first late stop, the last stop past the shift's end, the last delivery over
    capacity) into `unassigned`, so what is stored keeps every window, shift and capacity."""
    while True:
        timed = _timed(problem, item.vehicle, stops)
        if not timed.warnings:
            return stops, timed
        broken = timed.warnings[0]
        if broken.reason == "time_window":
            position = next(i for i, stop in enumerate(stops) if stop.job.key == broken.key)
        elif broken.reason == "shift":
            position = len(stops) - 1
        else:
            deliveries = [i for i, stop in enumerate(stops) if stop.job.kind == "delivery"]
            position = deliveries[-1] if deliveries else len(stops) - 1
        unassigned[stops.pop(position).job.key] = broken.reason


def _solution_store(plan: Plan, built: _Built, problem, solution: solver.Solution) -> None:
    vehicles = {item.vehicle.key: item for item in built.vehicles}
    unassigned: dict[str, str] = {}
    stored_routes = []
    for route in solution.routes:
        if not route.job_keys:
            continue
        item = vehicles[route.vehicle_key]
        stops, timed = _route_checked(
            problem, item, [built.stops[key] for key in route.job_keys], unassigned
        )
        if stops:
            stored_routes.append((item, stops, timed))
    routed = {item.vehicle.key for item, _, _ in stored_routes}
    # A driver with started stops has its route even when the solver gave it nothing more.
    stored_routes += [
        (item, [], None)
        for item in built.vehicles
        if item.pinned and item.vehicle.key not in routed
    ]
    on_routes = {stop.job.key for _, stops, _ in stored_routes for stop in stops}
    for key in built.stops:
        if key not in on_routes and key not in unassigned:
            unassigned[key] = _left_out_reason(key, solution)

    for item, stops, timed in stored_routes:
        _route_store(plan, built, item, stops, timed)
    left_out = [
        PlanLeftOut(
            plan=plan,
            order=order,
            reason=reason,
            excluded=excluded,
            window_start=None if window is None else window.start,
            window_end=None if window is None else window.end,
            order_version=order_version(order),
        )
        for order, reason, excluded, window in built.left_out.values()
    ]
    for key, reason in unassigned.items():
        stop = built.stops[key]
        left_out.append(
            PlanLeftOut(
                plan=plan,
                order=stop.order,
                reason=reason,
                window_start=stop.window_start,
                window_end=stop.window_end,
                order_version=order_version(stop.order),
            )
        )
    PlanLeftOut.objects.bulk_create(left_out)


def _route_store(plan: Plan, built: _Built, item: _Vehicle, stops: list[_Stop], timed) -> None:
    """Stores one route: the pinned started stops first (when the driver has any), then the
    solver's stops as re-timed (`timed` None: none)."""
    pinned = item.pinned
    shift_start = (
        pinned.shift_start if pinned else moment_at(built.origin, item.vehicle.shift_start)
    )
    if timed is None:
        start, end = pinned.start, pinned.end
        travel = pinned.travel_seconds + pinned.return_seconds
        distance = pinned.distance_meters + pinned.return_meters
    else:
        start = pinned.start if pinned else moment_at(built.origin, timed.start)
        end = moment_at(built.origin, timed.end)
        travel = timed.travel_seconds + (pinned.travel_seconds if pinned else 0)
        distance = timed.distance_meters + (pinned.distance_meters if pinned else 0)
    route = PlanRoute.objects.create(
        plan=plan,
        driver=item.driver,
        date=plan.date,
        zone=item.zone,
        vehicle_type=item.driver.vehicle_type,
        capacity=item.vehicle.capacity + (pinned.pickups if pinned else 0),
        shift_start=shift_start,
        shift_end=moment_at(built.origin, item.vehicle.shift_end),
        depot_lat=item.depot.lat,
        depot_lng=item.depot.lng,
        start_at=start,
        end_at=end,
        travel_seconds=travel,
        distance_meters=distance,
    )
    rows = [
        PlanStop(
            plan=plan,
            route=route,
            order=stop.order,
            sequence=sequence,
            kind=stop.kind,
            eta=stop.eta,
            window_start=stop.window_start,
            window_end=stop.window_end,
            lat=stop.lat,
            lng=stop.lng,
            service_seconds=stop.service_seconds,
            order_version=order_version(stop.order),
        )
        for sequence, stop in enumerate(pinned.stops if pinned else (), start=1)
    ]
    rows += [
        PlanStop(
            plan=plan,
            route=route,
            order=stop.order,
            sequence=sequence,
            kind=StopKind.PICKUP if stop.job.kind == "pickup" else StopKind.DELIVERY,
            eta=moment_at(built.origin, eta),
            window_start=stop.window_start,
            window_end=stop.window_end,
            lat=stop.lat,
            lng=stop.lng,
            service_seconds=stop.job.service_seconds,
            order_version=order_version(stop.order),
        )
        for sequence, (stop, eta) in enumerate(
            zip(stops, timed.etas if timed else (), strict=True), start=len(rows) + 1
        )
    ]
    PlanStop.objects.bulk_create(rows)


def _left_out_reason(key: str, solution: solver.Solution) -> str:
    """Why the solver left a job out: its own reason when it gives one of ours, else capacity
    (each could be served alone, the fleet could not serve them all)."""
    reason = solution.reasons.get(key)
    return reason if reason in LeftOutReason.values else LeftOutReason.CAPACITY
