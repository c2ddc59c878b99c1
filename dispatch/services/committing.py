"""Committing a ready plan: its routes become the day's, each order assigned to its driver with its
route, sequence and ETA (contract "Dispatch", "Commit").

One transaction, locks taken in one order by every writer of a day's routes, so two commits, a
commit and a manual assignment, or a commit and a cancel never interleave:

1. the day's `DispatchDay` row (`day_lock`): commits and manual assignments of one date go one
   after the other;
2. the plan and the committed plans of its date, in id order (a move of the plan waits, then
   finds it committed);
3. the orders concerned (the plan's and those on the routes it supersedes), in id order; a
   cancel (`order_transition`) takes the same row lock, so it happens wholly before or after.

Each order is checked again under its lock and skipped (reported, never overwritten) when it is
no longer what the plan saw: `cancelled`, `failed`, `delivered`, `started` (picked up, on another
driver's route), `reassigned` (its driver changed since planning: assigned or unassigned by
hand), `rescheduled` (its zone, slot or window changed), or when the route's driver is
`driver_inactive` or has a route that day in a committed plan of other zones (`driver_busy`).

The plan supersedes the committed plans of its date whose zones overlap its own. Orders still
under way on their routes and not placed by this plan (started stops, assignments made by hand
since planning, orders of the superseded plans' other zones) keep their driver: they are carried
onto that driver's route of this plan, started stops first, the others last. A started stop is
never moved to another driver and always comes first on its own driver's route.

Set-based: the orders are read once, with their locks; each check and each move is decided in
Python (the status machine's own rule, `order_services.orders_transition`), and written in a
few statements whatever the number of orders (docs/performance.md "Query paths").
"""

from collections import defaultdict
from dataclasses import dataclass, field
from uuid import UUID

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from delivery.fields import parse_uuid
from dispatch.errors import PlanNotFound, PlanNotReady
from dispatch.models import (
    DispatchDay,
    Plan,
    PlanLeftOut,
    PlanRoute,
    PlanStatus,
    PlanStop,
)
from dispatch.services.moves import ROUTE_TIMES, route_timed
from dispatch.services.order_versions import order_version, version_change
from integrations.models import Order, OrderStatus
from integrations.services import orders as order_services
from zones.models import Zone

#: statuses in which an order is on its driver's route and must stay there
STARTED_STATUSES = (OrderStatus.PICKED_UP, OrderStatus.IN_TRANSIT)
ON_ROUTE_STATUSES = (OrderStatus.ASSIGNED, *STARTED_STATUSES)
WAITING_STATUSES = (OrderStatus.PENDING, OrderStatus.DISPATCHING)
COMMIT_ACTOR = "dispatch"


class SkipReason:
    CANCELLED = "cancelled"
    FAILED = "failed"
    DELIVERED = "delivered"
    STARTED = "started"
    REASSIGNED = "reassigned"
    RESCHEDULED = "rescheduled"
    DRIVER_INACTIVE = "driver_inactive"
    DRIVER_BUSY = "driver_busy"
    ALL = (
        CANCELLED,
        FAILED,
        DELIVERED,
        STARTED,
        REASSIGNED,
        RESCHEDULED,
        DRIVER_INACTIVE,
        DRIVER_BUSY,
    )


@dataclass(frozen=True)
class Skipped:
    order_id: UUID
    reason: str


@dataclass
class CommitResult:
    plan: Plan
    assigned: int = 0
    skipped: list[Skipped] = field(default_factory=list)


def day_lock(*, organization_id: UUID | str, day) -> None:
    """Takes the lock of the organization's `day` (its `DispatchDay` row, made the first time)
    until the caller's transaction ends."""
    DispatchDay.objects.bulk_create(
        [DispatchDay(organization_id=organization_id, date=day)], ignore_conflicts=True
    )
    DispatchDay.objects.select_for_update().get(organization_id=organization_id, date=day)


def _plan_of(organization_id: UUID | str, plan_id: UUID | str) -> Plan:
    parsed = parse_uuid(plan_id)
    plan = (
        Plan.objects.filter(organization_id=organization_id, pk=parsed).first() if parsed else None
    )
    if plan is None:
        raise PlanNotFound()
    return plan


def _skip_reason(order: Order, stop: PlanStop, busy_drivers: set[UUID]) -> str | None:
    """Why `stop` cannot be committed as planned (None: it can)."""
    if order.status == OrderStatus.CANCELLED:
        return SkipReason.CANCELLED
    if order.status == OrderStatus.FAILED:
        return SkipReason.FAILED
    if order.status == OrderStatus.DELIVERED:
        return SkipReason.DELIVERED
    route_driver = stop.route.driver
    if order.status not in (*WAITING_STATUSES, OrderStatus.ASSIGNED):
        # Picked up or later: it stays with its driver; on that driver's own route it is kept.
        return None if order.driver_id == route_driver.id else SkipReason.STARTED
    change = version_change(stop.order_version, order)
    if change is not None:
        return SkipReason.REASSIGNED if change.driver_changed else SkipReason.RESCHEDULED
    if not route_driver.is_active:
        return SkipReason.DRIVER_INACTIVE
    if route_driver.id in busy_drivers:
        return SkipReason.DRIVER_BUSY
    return None


def _started_first(stops: list[PlanStop], orders: dict[UUID, Order]) -> list[PlanStop]:
    """The stops with the started ones (picked up, in transit) first, each group in order."""
    started = [stop for stop in stops if orders[stop.order_id].status in STARTED_STATUSES]
    rest = [stop for stop in stops if orders[stop.order_id].status not in STARTED_STATUSES]
    return started + rest


def _route_for(plan: Plan, template: PlanRoute, routes: dict[UUID, PlanRoute]) -> PlanRoute:
    """The plan's route of `template`'s driver, made like `template` when the plan has none."""
    route = routes.get(template.driver_id)
    if route is None:
        route = PlanRoute.objects.create(
            plan=plan,
            driver=template.driver,
            date=plan.date,
            zone=template.zone,
            vehicle_type=template.vehicle_type,
            capacity=template.capacity,
            shift_start=template.shift_start,
            shift_end=template.shift_end,
            depot_lat=template.depot_lat,
            depot_lng=template.depot_lng,
        )
        routes[template.driver_id] = route
    return route


def routes_renumber(sequences: dict[PlanRoute, list[PlanStop]]) -> None:
    """Stores each route's stops in the given order, numbered from 1. Sequences go past any in
    use first, so the deferred unique check of (route, sequence) never sees two alike."""
    for route, stops in sequences.items():
        offset = len(stops) + 1000
        for index, stop in enumerate(stops, start=1):
            stop.route = route
            stop.sequence = offset + index
            stop.save()
        for index, stop in enumerate(stops, start=1):
            stop.sequence = index
        PlanStop.objects.bulk_update(stops, ["sequence"])


def plan_commit(*, organization_id: UUID | str, plan_id: UUID | str) -> CommitResult:
    """Commits the organization's ready plan `plan_id` (contract "Dispatch", "Commit").

    404 `Plan not found` for an unknown, malformed or another organization's id; 409 `Plan is
    <status>` unless the plan is `ready`.
    """
    plan = _plan_of(organization_id, plan_id)
    if plan.status == PlanStatus.PLANNING:
        raise PlanNotReady(plan.status)  # at once, rather than after the solve's lock
    with transaction.atomic():
        day_lock(organization_id=plan.organization_id, day=plan.date)
        # The plan and the committed plans of its date, in id order; never a plan planning
        # (its solve holds its row for seconds), which a commit neither needs nor supersedes.
        locked = {
            item.pk: item
            for item in Plan.objects.select_for_update()
            .filter(organization_id=plan.organization_id, date=plan.date)
            .filter(Q(pk=plan.pk) | Q(status=PlanStatus.COMMITTED))
            .order_by("pk")
        }
        plan = locked[plan.pk]
        if plan.status != PlanStatus.READY:
            raise PlanNotReady(plan.status)
        superseded = [
            item
            for item in locked.values()
            if item.pk != plan.pk
            and item.status == PlanStatus.COMMITTED
            and set(item.zone_ids) & set(plan.zone_ids)
        ]
        return _commit(plan, superseded)


def _commit(plan: Plan, superseded: list[Plan]) -> CommitResult:
    commit = _Commit(plan, superseded)
    commit.lock_orders()
    commit.place_planned_stops()
    commit.carry_superseded_stops()
    sequences = commit.store_routes()
    commit.move_orders(sequences)

    Plan.objects.filter(pk__in=[item.pk for item in superseded]).update(
        status=PlanStatus.SUPERSEDED
    )
    plan.status = PlanStatus.COMMITTED
    plan.committed_at = timezone.now()
    plan.save(update_fields=["status", "committed_at", "zone_ids"])
    commit.result.skipped.sort(key=lambda item: str(item.order_id))
    return commit.result


#: rows per statement of the commit's bulk writes (PostgreSQL takes at most 65,535 parameters)
BULK_BATCH = 1000


class _Commit:
    """One commit's state, step by step (`_commit` runs them in order)."""

    def __init__(self, plan: Plan, superseded: list[Plan]):
        self.plan = plan
        self.result = CommitResult(plan=plan)
        self.stops = _with_routes(
            PlanStop.objects.filter(plan=plan).order_by("route_id", "sequence", "id"),
            PlanRoute.objects.filter(plan=plan).select_related("driver"),
        )
        #: each stored stop's place as read, so only the stops that move are written
        self.stored = {stop.pk: (stop.route_id, stop.sequence, stop.eta) for stop in self.stops}
        self.left_out = {
            row.order_id: row for row in PlanLeftOut.objects.filter(plan=plan, excluded=False)
        }
        self.old_stops = _with_routes(
            PlanStop.objects.filter(plan__in=superseded).order_by(
                "plan__committed_at", "route_id", "sequence", "id"
            ),
            PlanRoute.objects.filter(plan__in=superseded).select_related("driver", "zone"),
        )
        self.busy_drivers = set(
            PlanRoute.objects.filter(
                plan__organization_id=plan.organization_id,
                plan__status=PlanStatus.COMMITTED,
                date=plan.date,
            )
            .exclude(plan__in=[plan, *superseded])
            .values_list("driver_id", flat=True)
        )
        self.orders: dict[UUID, Order] = {}
        self.routes: dict[UUID, PlanRoute] = {}
        self.kept: dict[UUID, list[PlanStop]] = defaultdict(list)
        self.carried: dict[UUID, list[PlanStop]] = defaultdict(list)
        self.placed: set[UUID] = set()
        #: what leaves the plan: skipped stops, left-out rows of orders carried onto a route
        self.dropped_stops: list[int] = []
        self.dropped_left_out: list[int] = []

    def lock_orders(self) -> None:
        order_ids = sorted(
            {stop.order_id for stop in self.stops}
            | set(self.left_out)
            | {stop.order_id for stop in self.old_stops}
        )
        # Locked in id order: the order every commit takes them in (a cancel takes one of them).
        self.orders = {
            order.pk: order
            for order in Order.objects.select_for_update(of=("self",))
            .filter(pk__in=order_ids)
            .select_related("slot_booking")
            .order_by("pk")
        }
        # Their few zones once (the partner's ETA is shown in its zone's time), not per order.
        zones = Zone.objects.in_bulk({order.zone_id for order in self.orders.values()} - {None})
        for order in self.orders.values():
            if order.zone_id is not None:
                order.zone = zones[order.zone_id]

    def place_planned_stops(self) -> None:
        """Keeps each stop the plan can still make; a skipped one leaves the route."""
        for stop in self.stops:
            self.routes[stop.route.driver_id] = stop.route
            reason = _skip_reason(self.orders[stop.order_id], stop, self.busy_drivers)
            if reason is None:
                self.kept[stop.route.driver_id].append(stop)
                self.placed.add(stop.order_id)
            else:
                self.result.skipped.append(Skipped(stop.order_id, reason))
                self.dropped_stops.append(stop.pk)

    def carry_superseded_stops(self) -> None:
        """What the superseded routes still carry and this plan does not place stays with its
        driver, on that driver's route of this plan."""
        for old in self.old_stops:
            order = self.orders[old.order_id]
            if old.order_id in self.placed or order.status not in ON_ROUTE_STATUSES:
                continue
            if order.driver_id != old.route.driver_id:
                continue  # moved to another driver since: it is on that driver's route
            row = self.left_out.get(old.order_id)
            if row is not None and version_change(row.order_version, order) is None:
                continue  # the plan leaves it unassigned knowing it as it is: unassigned below
            if row is not None:
                self.dropped_left_out.append(row.pk)
                del self.left_out[old.order_id]
            route = _route_for(self.plan, old.route, self.routes)
            self.carried[route.driver_id].append(_stop_copy(old, self.plan, route, order))
            self.placed.add(old.order_id)
            if order.zone_id and order.zone_id not in self.plan.zone_ids:
                self.plan.zone_ids = sorted([*self.plan.zone_ids, order.zone_id], key=str)

    def store_routes(self) -> dict[PlanRoute, list[PlanStop]]:
        """Each route's stops, started ones first, numbered and re-timed; empty routes go.
        Timed in memory, then written at once: only the stops that moved, the carried ones,
        and the routes' times (the unique (route, sequence) is checked at commit: deferred)."""
        PlanStop.objects.filter(pk__in=self.dropped_stops).delete()
        PlanLeftOut.objects.filter(pk__in=self.dropped_left_out).delete()
        sequences: dict[PlanRoute, list[PlanStop]] = {}
        empty: list[UUID] = []
        for driver_id, route in self.routes.items():
            stops = _started_first(self.kept[driver_id] + self.carried[driver_id], self.orders)
            if stops:
                sequences[route] = stops
            else:
                empty.append(route.pk)
        PlanRoute.objects.filter(pk__in=empty).delete()
        moved: list[PlanStop] = []
        new: list[PlanStop] = []
        for route, stops in sequences.items():
            for stop in stops:
                stop.route = route
            route_timed(plan=self.plan, route=route, stops=stops)
            for stop in stops:
                if stop.pk is None or stop.pk not in self.stored:
                    new.append(stop)
                elif self.stored[stop.pk] != (stop.route_id, stop.sequence, stop.eta):
                    moved.append(stop)
        PlanStop.objects.bulk_update(moved, ["route", "sequence", "eta"], batch_size=BULK_BATCH)
        PlanStop.objects.bulk_create(new, batch_size=BULK_BATCH)
        PlanRoute.objects.bulk_update(list(sequences), ROUTE_TIMES, batch_size=BULK_BATCH)
        return sequences

    def move_orders(self, sequences: dict[PlanRoute, list[PlanStop]]) -> None:
        """Each order on a route assigned to its driver with its stop's ETA (route by route, in
        sequence); each the plan leaves unassigned, assigned when planned and unchanged since,
        waits for a driver again, as the plan shows. One bulk move through the machine."""
        carried = {stop.order_id for stops in self.carried.values() for stop in stops}
        unassigned: list[order_services.OrderMove] = []
        assigned: list[order_services.OrderMove] = []
        eta_moved: list[Order] = []
        for route, stops in sequences.items():
            for stop in stops:
                order = self.orders[stop.order_id]
                if order.status not in (*WAITING_STATUSES, OrderStatus.ASSIGNED):
                    continue  # under way: it keeps its place, never moved through the machine
                if stop.order_id not in carried:
                    self.result.assigned += 1
                if order.status == OrderStatus.ASSIGNED and order.driver_id == route.driver_id:
                    # Same driver: the partner already knows; only the ETA (and place) move.
                    if order.eta != stop.eta:
                        order.eta = stop.eta
                        eta_moved.append(order)
                    continue
                if order.status == OrderStatus.ASSIGNED:
                    # Another driver: unassigned, then assigned again, so the partner hears the
                    # new driver.
                    unassigned.append(_unassign(order, "Re-planned to another driver"))
                assigned.append(
                    order_services.OrderMove(
                        order=order,
                        to_status=OrderStatus.ASSIGNED,
                        driver=route.driver,
                        eta=stop.eta,
                    )
                )
        for row in self.left_out.values():
            order = self.orders[row.order_id]
            if (
                order.status == OrderStatus.ASSIGNED
                and version_change(row.order_version, order) is None
            ):
                unassigned.append(_unassign(order, "Not on any route of the committed plan"))
        if eta_moved:
            order_services.orders_eta_set(etas={order.pk: order.eta for order in eta_moved})
        order_services.orders_transition(moves=unassigned + assigned, actor=COMMIT_ACTOR)


def _with_routes(stops, routes) -> list[PlanStop]:
    """The stops, each with its route (read once, not once per stop)."""
    by_id = {route.pk: route for route in routes}
    stops = list(stops)
    for stop in stops:
        stop.route = by_id[stop.route_id]
    return stops


def _unassign(order: Order, reason: str) -> order_services.OrderMove:
    return order_services.OrderMove(order=order, to_status=OrderStatus.DISPATCHING, reason=reason)


def _stop_copy(old: PlanStop, plan: Plan, route: PlanRoute, order: Order) -> PlanStop:
    """A superseded route's stop on `route` of `plan` (unsaved: numbered when stored)."""
    return PlanStop(
        plan=plan,
        route=route,
        order=order,
        sequence=0,
        kind=old.kind,
        eta=old.eta,
        window_start=old.window_start,
        window_end=old.window_end,
        lat=old.lat,
        lng=old.lng,
        service_seconds=old.service_seconds,
        order_version=order_version(order),
    )
