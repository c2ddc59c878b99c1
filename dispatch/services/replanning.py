"""Re-planning a day under way (contract "Dispatch"): each driver's started stops (`picked_up`,
`in_transit`) stay first on that driver's route, pinned by our code whatever the solver offers.

The planner (`dispatch.services.planning`) asks `started_orders` for each of its drivers, times
them with `pinned_prefix` from the depot at the shift's start (as a route is re-timed), and gives
the solver a vehicle that starts where and when the last of them is done, with the room the
returns they picked up take. The solver never sees these orders; the stored route is the pinned
stops, then the solver's.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta
from uuid import UUID

from django.db.models import Case, IntegerField, OuterRef, Subquery, Value, When

from dispatch import timing
from dispatch.models import PlanStatus, PlanStop, StopKind
from dispatch.services.matrices import matrices_for
from dispatch.services.orders_of_day import order_window
from integrations.models import Order, OrderStatus, ServiceType

STARTED_STATUSES = (OrderStatus.PICKED_UP, OrderStatus.IN_TRANSIT)


def started_orders(
    *, organization_id: UUID | str, day, driver_ids: list[UUID]
) -> dict[UUID, list[Order]]:
    """Each driver's started orders on its committed route of `day`: in transit first, then in
    the route's order. Orders without coordinates are never on a route, so never here."""
    committed = PlanStop.objects.filter(
        order=OuterRef("pk"), plan__status=PlanStatus.COMMITTED, plan__date=day
    )
    orders = (
        Order.objects.filter(
            organization_id=organization_id,
            driver_id__in=driver_ids,
            status__in=STARTED_STATUSES,
            dropoff_lat__isnull=False,
            dropoff_lng__isnull=False,
        )
        .annotate(
            committed_sequence=Subquery(committed.values("sequence")[:1]),
            in_transit_first=Case(
                When(status=OrderStatus.IN_TRANSIT, then=Value(0)),
                default=Value(1),
                output_field=IntegerField(),
            ),
        )
        .filter(committed_sequence__isnull=False)
        .select_related("zone", "slot_booking__template__zone")
        .order_by("driver_id", "in_transit_first", "committed_sequence", "id")
    )
    started: dict[UUID, list[Order]] = {}
    for order in orders:
        started.setdefault(order.driver_id, []).append(order)
    return started


@dataclass(frozen=True)
class PinnedStop:
    order: Order
    kind: str
    lat: float
    lng: float
    window_start: datetime
    window_end: datetime
    service_seconds: int
    eta: datetime


@dataclass(frozen=True)
class PinnedPrefix:
    """The started stops of one route, timed: the driver is free at `free_at` at (`lat`, `lng`),
    having driven `travel_seconds` and `distance_meters` from the depot; `pickups` ride on."""

    stops: tuple[PinnedStop, ...]
    #: the driver's shift start, the clock the route is timed from
    shift_start: datetime
    start: datetime
    free_at: datetime
    lat: float
    lng: float
    travel_seconds: int
    distance_meters: int
    #: back at the depot after the last pinned stop, for a route with nothing else
    end: datetime
    return_seconds: int
    return_meters: int

    @property
    def pickups(self) -> int:
        return sum(1 for stop in self.stops if stop.kind == StopKind.PICKUP)


def pinned_prefix(
    *,
    orders: list[Order],
    depot: tuple[float, float],
    shift_start: datetime,
    shift_end: datetime,
    service_seconds: int,
    speed_kmh: float,
    detour_factor: float,
) -> PinnedPrefix:
    """Times `orders` (started, in their order) from the depot at `shift_start`."""
    points = [depot, *((order.dropoff_lat, order.dropoff_lng) for order in orders)]
    matrices = matrices_for(points, speed_kmh=speed_kmh, detour_factor=detour_factor)
    windows = []
    for order in orders:
        window = order_window(order)
        windows.append((window.start, window.end) if window else (shift_start, shift_end))

    def seconds(moment: datetime) -> int:
        return int((moment - shift_start).total_seconds())

    kinds = [
        StopKind.PICKUP if order.service_type == ServiceType.RETURN else StopKind.DELIVERY
        for order in orders
    ]
    timed = timing.route_time(
        stops=[
            timing.TimedStop(
                key=str(order.id),
                location=index,
                kind=kind,
                window_start=seconds(window[0]),
                window_end=seconds(window[1]),
                service_seconds=service_seconds,
            )
            for index, (order, kind, window) in enumerate(
                zip(orders, kinds, windows, strict=True), start=1
            )
        ],
        start_location=0,
        end_location=0,
        durations=matrices.durations,
        distances=matrices.distances,
        shift_start=0,
        shift_end=seconds(shift_end),
        # Already on board: what they take is counted by the planner (the pickups), not here.
        capacity=len(orders) + 1,
    )
    last = len(orders)
    return_seconds = int(matrices.durations[last, 0])
    return_meters = int(matrices.distances[last, 0])
    stops = tuple(
        PinnedStop(
            order=order,
            kind=kind,
            lat=order.dropoff_lat,
            lng=order.dropoff_lng,
            window_start=window[0],
            window_end=window[1],
            service_seconds=service_seconds,
            eta=shift_start + timedelta(seconds=eta),
        )
        for order, kind, window, eta in zip(orders, kinds, windows, timed.etas, strict=True)
    )
    free_at = stops[-1].eta + timedelta(seconds=service_seconds)
    return PinnedPrefix(
        stops=stops,
        shift_start=shift_start,
        start=shift_start + timedelta(seconds=timed.start),
        free_at=free_at,
        lat=stops[-1].lat,
        lng=stops[-1].lng,
        travel_seconds=timed.travel_seconds - return_seconds,
        distance_meters=timed.distance_meters - return_meters,
        end=shift_start + timedelta(seconds=timed.end),
        return_seconds=return_seconds,
        return_meters=return_meters,
    )
