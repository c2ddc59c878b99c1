"""Where couriers are, and the live ETAs of their remaining stops (contract "Couriers":
`POST /courier/locations`)."""

import json
import math
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import NamedTuple
from uuid import UUID

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from couriers import statements
from couriers.models import LocationPoint
from couriers.services.events import event_time_check
from delivery import retention
from delivery.timezones import zone_tz
from dispatch import timing
from dispatch.matrix import haversine_matrix
from dispatch.models import PlanStatus
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
#: the fields of a point the driver's position keeps
_POINT_FIELDS = ("lat", "lng", "accuracy_m", "speed_mps", "heading", "at")


@dataclass(frozen=True)
class PointDraft:
    lat: float
    lng: float
    at: datetime
    accuracy_m: float | None = None
    speed_mps: float | None = None
    heading: float | None = None


class StopAhead(NamedTuple):
    """A stop still ahead as route_etas_recompute reads it (statements.STOPS_AHEAD): the stop,
    its route's and plan's travel figures, and what `order.eta_updated` says of its order."""

    id: int
    order_id: UUID
    eta: datetime
    window_start: datetime
    window_end: datetime
    service_seconds: int
    kind: str
    lat: float
    lng: float
    depot_lat: float
    depot_lng: float
    shift_end: datetime
    detour_factor: float
    travel_speed_kmh: float
    family: str
    organization_id: UUID
    platform: str
    status: str
    external_ref: str


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
    newest = max(points, key=lambda point: point.at)
    with connection.cursor() as cursor:
        cursor.execute(
            statements.TRAIL_RECORD,
            {
                "driver": driver.id,
                "points": json.dumps([_point_columns(point) for point in points]),
                "cutoff": now - trail_lifetime(),
                **{f"newest_{name}": getattr(newest, name) for name in _POINT_FIELDS},
                "received_at": now,
                "organization": driver.organization_id,
            },
        )
        moved, zone_time = cursor.fetchone()
    if not moved:
        return LocationsRecorded(points=len(points), etas_moved=0)
    # The route of the day the newest point was taken in the driver's zone time.
    day = timezone.localtime(newest.at, zone_tz(zone_time)).date()
    etas_moved = route_etas_recompute(
        driver=driver, day=day, lat=newest.lat, lng=newest.lng, at=newest.at
    )
    return LocationsRecorded(points=len(points), etas_moved=etas_moved)


def _point_columns(point: PointDraft) -> dict:
    return {
        "at": point.at.isoformat(),
        "lat": point.lat,
        "lng": point.lng,
        "accuracy_m": point.accuracy_m,
        "speed_mps": point.speed_mps,
        "heading": point.heading,
    }


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


def route_etas_recompute(*, driver: Driver, day: date, lat: float, lng: float, at: datetime) -> int:
    """Re-times the stops still ahead (assigned, picked up, in transit) of the driver's committed
    route of `day` from a driver at (`lat`, `lng`) at `at`, with dispatch's travel model and the
    plan's figures (never before a window opens); stores the new ETAs and tells partners of an
    ETA moved by 10 minutes or more (`order.eta_updated`, to keys that ask for it). Returns how
    many ETAs changed.

    One read of the stops with what timing needs of their route and plan (locked, in stop
    order), one write of the changed ETAs for the stops and one for their orders."""
    with connection.cursor() as cursor:
        cursor.execute(
            statements.STOPS_AHEAD,
            {
                "driver": driver.id,
                "day": day,
                "committed": PlanStatus.COMMITTED.value,
                "statuses": [status.value for status in REMAINING_STATUSES],
            },
        )
        stops = [StopAhead(*row) for row in cursor.fetchall()]
    if not stops:
        return 0
    first = stops[0]  # the route's and the plan's figures are on every row
    travel = haversine_matrix(
        [(lat, lng), *((stop.lat, stop.lng) for stop in stops), (first.depot_lat, first.depot_lng)],
        detour_factor=first.detour_factor,
        speed_kmh=first.travel_speed_kmh,
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
        shift_end=seconds(first.shift_end),
        capacity=_NO_CAPACITY_LIMIT,
    )
    changed = []  # (stop, its new ETA)
    for stop, eta_seconds in zip(stops, timed.etas, strict=True):
        eta = at + timedelta(seconds=eta_seconds)
        if eta == stop.eta:
            continue
        changed.append((stop, eta))
        if abs(eta - stop.eta) >= ETA_NEWS_THRESHOLD:
            _eta_news_emit(stop, eta=eta)
    if changed:
        with connection.cursor() as cursor:
            cursor.execute(
                statements.STOP_ETAS_SET,
                {"ids": [stop.id for stop, _ in changed], "etas": [eta for _, eta in changed]},
            )
        # The orders' own ETAs follow (partner and ERP reads, tracking: contract "Dispatch").
        order_services.orders_eta_set(etas={stop.order_id: eta for stop, eta in changed})
    return len(changed)


def _eta_news_emit(stop: StopAhead, *, eta: datetime) -> None:
    if stop.family != OrderFamily.PARTNER:
        return
    webhook_events.order_event_emit(
        order_id=stop.order_id,
        organization_id=stop.organization_id,
        platform=stop.platform,
        event=catalog.ORDER_ETA_UPDATED,
        status=stop.status,
        external_ref=stop.external_ref,
        extra={"eta": eta, "previousEta": stop.eta},
    )
