"""Where couriers are, and the live ETAs of their remaining stops (contract "Couriers":
`POST /courier/locations`)."""

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from couriers import selectors
from couriers.models import DriverPosition, LocationPoint
from couriers.services.events import event_time_check
from delivery import retention
from dispatch import timing
from dispatch.matrix import haversine_matrix
from dispatch.models import PlanRoute, PlanStop
from integrations.models import OrderFamily, OrderStatus
from integrations.services import orders as order_services
from tenants.models import Driver
from webhooks import catalog
from webhooks import events as webhook_events

#: contract "Couriers": an ETA that moves this much is news for the partner (`order.eta_updated`)
ETA_NEWS_THRESHOLD = timedelta(minutes=10)
#: the stops still ahead of the driver
REMAINING_STATUSES = (OrderStatus.ASSIGNED, OrderStatus.PICKED_UP, OrderStatus.IN_TRANSIT)
#: timing checks capacity too; a live re-timing reports ETAs only
_NO_CAPACITY_LIMIT = 1_000_000


@dataclass(frozen=True)
class PointDraft:
    lat: float
    lng: float
    at: datetime
    accuracy_m: float | None = None
    speed_mps: float | None = None
    heading: float | None = None


@dataclass(frozen=True)
class LocationsRecorded:
    points: int
    etas_moved: int


@transaction.atomic
def driver_locations_record(*, driver: Driver, points: list[PointDraft]) -> LocationsRecorded:
    """Keeps a batch of the driver's positions (contract "Couriers"): each point at most 24
    hours late and 2 minutes ahead (400 naming it); the trail keeps 24 hours; the newest point
    becomes the driver's position, when it is newer than the one known, and re-times the
    remaining stops of the driver's route of that day from there."""
    now = timezone.now()
    for index, point in enumerate(points):
        event_time_check(point.at, now=now, field_name=f"points[{index}].at")
    LocationPoint.objects.bulk_create(
        LocationPoint(
            driver=driver,
            at=point.at,
            lat=point.lat,
            lng=point.lng,
            accuracy_m=point.accuracy_m,
            speed_mps=point.speed_mps,
            heading=point.heading,
        )
        for point in points
    )
    LocationPoint.objects.filter(driver=driver, at__lt=now - trail_lifetime()).delete()
    newest = max(points, key=lambda point: point.at)
    if not _position_move(driver, newest, now=now):
        return LocationsRecorded(points=len(points), etas_moved=0)
    day = selectors.driver_today(driver=driver, now=newest.at)
    route = selectors.committed_route(driver=driver, day=day)
    moved = route_etas_recompute(route=route, lat=newest.lat, lng=newest.lng, at=newest.at)
    return LocationsRecorded(points=len(points), etas_moved=moved)


def trail_lifetime() -> timedelta:
    """How long trail points are kept (COURIER_TRAIL_RETENTION_HOURS; the contract's 24 hours)."""
    return timedelta(hours=settings.COURIER_TRAIL_RETENTION_HOURS)


def trails_prune(
    *, now: datetime | None = None, batch_size: int | None = None, until: float | None = None
) -> int:
    """Deletes every trail point older than the trail's lifetime, also of drivers who stopped
    sending (a driver's own batch prunes only their trail), in batches that keep no request
    waiting (delivery/retention.py); how many."""
    old = LocationPoint.objects.filter(at__lt=(now or timezone.now()) - trail_lifetime())
    return retention.delete_in_batches(
        old, order_by="at", batch_size=batch_size, until=until
    ).removed


def _position_move(driver: Driver, point: PointDraft, *, now: datetime) -> bool:
    """The driver's position becomes `point` unless a newer one is known; whether it did."""
    fields = {
        "lat": point.lat,
        "lng": point.lng,
        "accuracy_m": point.accuracy_m,
        "speed_mps": point.speed_mps,
        "heading": point.heading,
        "at": point.at,
        "received_at": now,
    }
    # A conditional UPDATE: of two batches racing, the one with the newer point stays.
    if DriverPosition.objects.filter(driver=driver, at__lt=point.at).update(**fields):
        return True
    _, created = DriverPosition.objects.get_or_create(driver=driver, defaults=fields)
    return created


def route_etas_recompute(*, route: PlanRoute | None, lat: float, lng: float, at: datetime) -> int:
    """Re-times the route's stops still ahead (assigned, picked up, in transit) from a driver at
    (`lat`, `lng`) at `at`, with dispatch's travel model and the plan's figures (never before a
    window opens); stores the new ETAs and tells partners of an ETA moved by 10 minutes or more
    (`order.eta_updated`, to keys that ask for it). Returns how many ETAs changed."""
    if route is None:
        return 0
    stops = list(
        PlanStop.objects.select_for_update(of=("self",))
        .filter(route=route, order__status__in=REMAINING_STATUSES)
        .select_related("order", "plan")
        .order_by("sequence")
    )
    if not stops:
        return 0
    plan = stops[0].plan
    travel = haversine_matrix(
        [(lat, lng), *((stop.lat, stop.lng) for stop in stops), (route.depot_lat, route.depot_lng)],
        detour_factor=plan.detour_factor,
        speed_kmh=plan.travel_speed_kmh,
    )

    def seconds(moment: datetime, *, rounding=math.floor) -> int:
        return rounding((moment - at).total_seconds())

    timed = timing.route_time(
        stops=[
            timing.TimedStop(
                key=str(stop.id),
                location=index,
                kind=stop.kind,
                # Whole seconds from a point's `at` (with its fraction): rounded inwards, so
                # an ETA is never a fraction of a second before its window opens.
                window_start=seconds(stop.window_start, rounding=math.ceil),
                window_end=seconds(stop.window_end),
                service_seconds=stop.service_seconds,
            )
            for index, stop in enumerate(stops, start=1)
        ],
        start_location=0,
        end_location=len(stops) + 1,
        durations=travel.durations,
        distances=travel.distances,
        shift_start=0,
        shift_end=seconds(route.shift_end),
        capacity=_NO_CAPACITY_LIMIT,
    )
    changed = []
    for stop, eta_seconds in zip(stops, timed.etas, strict=True):
        eta = at + timedelta(seconds=eta_seconds)
        if eta == stop.eta:
            continue
        previous, stop.eta = stop.eta, eta
        changed.append(stop)
        if abs(eta - previous) >= ETA_NEWS_THRESHOLD:
            _eta_news_emit(stop, previous=previous)
    PlanStop.objects.bulk_update(changed, ["eta"])
    # The orders' own ETAs follow (partner and ERP reads, tracking: contract "Dispatch").
    for stop in changed:
        stop.order.eta = stop.eta
    order_services.orders_eta_set(orders=[stop.order for stop in changed])
    return len(changed)


def _eta_news_emit(stop: PlanStop, *, previous: datetime) -> None:
    order = stop.order
    if order.family != OrderFamily.PARTNER:
        return
    webhook_events.order_event_emit(
        order_id=order.id,
        organization_id=order.organization_id,
        platform=order.platform,
        event=catalog.ORDER_ETA_UPDATED,
        status=order.status,
        external_ref=order.external_ref,
        extra={"eta": stop.eta, "previousEta": previous},
    )
