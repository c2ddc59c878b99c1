"""Which orders a plan of a day routes (contract "Dispatch", "Which orders"), and each order's
time window.

An order belongs to the plan's date when its slot is booked on that date, else when its
delivery window starts on that date in its zone's time zone, else (neither slot nor window)
when it was created on or before that date and is not already on a committed route of
another day. Only `pending`, `dispatching` and `assigned` orders count (a held order of the
day too: a plan is the decision to dispatch the day); orders of test keys never do.
"""

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from uuid import UUID

from django.db.models import Exists, OuterRef, Q, QuerySet

from delivery.timezones import zone_tz
from dispatch.models import PlanStatus, PlanStop
from integrations.models import Order, OrderStatus
from slots.occurrences import local_moment, occurrence
from zones.models import Zone

PLANNABLE_STATUSES = (OrderStatus.PENDING, OrderStatus.DISPATCHING, OrderStatus.ASSIGNED)


def day_bounds(day: date, zone: Zone) -> tuple[datetime, datetime]:
    """Midnight to midnight of `day` in the zone's time zone, as aware instants."""
    tz = zone_tz(zone.timezone)
    return local_moment(day, time(0), tz), local_moment(day + timedelta(days=1), time(0), tz)


def orders_of_day(*, organization_id: UUID | str, day: date, zones: list[Zone]) -> QuerySet[Order]:
    """The orders a plan of `day` over `zones` considers, by external reference, with their
    slot booking, template and zone joined."""
    slot_day = Q(slot_booking__released_at__isnull=True, slot_booking__date=day)
    no_slot = Q(slot_booking__isnull=True) | Q(slot_booking__released_at__isnull=False)
    window_day = Q()
    undated = Q()
    for zone in zones:
        start, end = day_bounds(day, zone)
        window_day |= Q(zone=zone, delivery_window_start__gte=start, delivery_window_start__lt=end)
        undated |= Q(zone=zone, created_at__lt=end)
    on_committed_route_of_other_day = Exists(
        PlanStop.objects.filter(order=OuterRef("pk"), plan__status=PlanStatus.COMMITTED).exclude(
            plan__date=day
        )
    )
    undated &= Q(delivery_window_start__isnull=True) & ~on_committed_route_of_other_day
    return (
        Order.objects.filter(
            organization_id=organization_id,
            zone__in=zones,
            status__in=PLANNABLE_STATUSES,
        )
        .exclude(api_key__test=True)
        .filter(slot_day | (no_slot & (window_day | undated)))
        .select_related("zone", "slot_booking__template")
        .order_by("external_ref", "id")
        .distinct()
    )


@dataclass(frozen=True)
class Window:
    start: datetime
    end: datetime


def order_window(order: Order) -> Window | None:
    """The order's slot on its booked date (template times in the zone's time zone), else its
    delivery window; None when it has neither (the driver's shift is then its window)."""
    booking = getattr(order, "slot_booking", None)
    if booking is not None and booking.released_at is None:
        template = booking.template
        slot = occurrence(
            day=booking.date,
            start_time=template.start_time,
            duration_minutes=template.duration_minutes,
            cutoff_minutes=template.cutoff_minutes,
            cutoff_day_before_at=template.cutoff_day_before_at,
            tz=zone_tz(template.zone.timezone if order.zone is None else order.zone.timezone),
        )
        return Window(slot.window_start, slot.window_end)
    if order.delivery_window_start is not None and order.delivery_window_end is not None:
        return Window(order.delivery_window_start, order.delivery_window_end)
    return None
