"""Reads on slots: templates, availability and the `erp.slots.updated` payload (decisions §6).

Every function takes the organization (or a zone already scoped to it). Availability costs a
fixed number of queries whatever the number of days, templates and orders: one for the
templates of the zone, one for the booking counters of the range (`SlotDay`, one row per
template and date, so the orders themselves are never counted row by row).
"""

from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from django.db.models import QuerySet
from django.utils import timezone

from slots.errors import NoSlotZoneForPoint, SlotNotFound
from slots.models import SlotBooking, SlotDay, SlotTemplate
from slots.occurrences import (
    Occurrence,
    dates_between,
    day_of_week,
    hh_mm,
    minutes_of,
    occurrence,
    zone_tz,
)
from tenants.selectors import parse_uuid
from zones import selectors as zone_selectors
from zones.errors import ZoneNotFound
from zones.models import SLOT_PURPOSES, Zone

#: how many days of availability `erp.slots.updated` carries, from today (zone time)
EVENT_AVAILABILITY_DAYS = 14


def slot_template_list(*, organization_id, zone_id=None) -> QuerySet[SlotTemplate]:
    """The organization's live templates by zone, weekday and start; optionally of one zone."""
    templates = SlotTemplate.objects.filter(organization_id=organization_id, deleted_at=None)
    if zone_id is not None:
        templates = templates.filter(zone_id=zone_id)
    return templates.order_by("zone__name", "zone_id", "day_of_week", "start_time", "id")


def slot_template_get(*, organization_id, template_id) -> SlotTemplate:
    """The organization's live template `template_id` with its zone; 404 `Slot not found`
    when unknown, deleted, of another organization or malformed (decisions §1, §2)."""
    parsed = parse_uuid(template_id)
    template = (
        SlotTemplate.objects.select_related("zone")
        .filter(organization_id=organization_id, pk=parsed, deleted_at=None)
        .first()
        if parsed
        else None
    )
    if template is None:
        raise SlotNotFound()
    return template


def slot_booking_of_order(*, order) -> SlotBooking | None:
    """The order's slot booking (active or released), if it ever had one."""
    return SlotBooking.objects.filter(order_id=order.pk).first()


def template_occurrence(
    *, template: SlotTemplate, day: date, zone: Zone | None = None
) -> Occurrence:
    zone = zone or template.zone
    return occurrence(
        day=day,
        start_time=template.start_time,
        duration_minutes=template.duration_minutes,
        cutoff_minutes=template.cutoff_minutes,
        tz=zone_tz(zone.timezone),
    )


# ----- availability -----


def availability_zone_get(
    *,
    organization_id,
    zone_id: str | None = None,
    lat: float | None = None,
    lng: float | None = None,
) -> Zone:
    """The zone availability is asked for (decisions §6).

    `zone_id` wins when given: the organization's zone of purpose `slot` or `both` (404 `Zone
    not found` otherwise). Else the smallest enabled slot zone containing (lat, lng) (404 `No
    active zones found for the given coordinates` when there is none).
    """
    if zone_id is not None:
        zone = zone_selectors.zone_get(organization_id=organization_id, zone_id=zone_id)
        if zone.purpose not in SLOT_PURPOSES:
            raise ZoneNotFound()
        return zone
    zone = zone_selectors.zone_containing_point(
        organization_id=organization_id, lat=lat, lng=lng, purposes=SLOT_PURPOSES
    )
    if zone is None:
        raise NoSlotZoneForPoint()
    return zone


@dataclass(frozen=True)
class SlotAvailability:
    """One entry of the interface's "Slot availability entry"."""

    template: SlotTemplate
    occurrence: Occurrence
    capacity: int
    booked: int
    bookable: bool

    @property
    def available(self) -> int:
        # Rule 4; never below zero when a template's capacity was lowered under its bookings.
        return max(0, self.capacity - self.booked)


@dataclass(frozen=True)
class DayAvailability:
    date: date
    slots: list[SlotAvailability]


def _live_templates(zone: Zone) -> list[SlotTemplate]:
    return list(
        SlotTemplate.objects.filter(zone_id=zone.id, deleted_at=None)
        .only(
            "id",
            "zone_id",
            "day_of_week",
            "start_time",
            "duration_minutes",
            "cutoff_minutes",
            "vehicle_capacity",
        )
        .order_by("start_time", "duration_minutes", "id")
    )


def _booked_counts(templates: list[SlotTemplate], first: date, last: date) -> dict:
    if not templates:
        return {}
    rows = SlotDay.objects.filter(
        template_id__in=[template.id for template in templates], date__range=(first, last)
    ).values_list("template_id", "date", "booked")
    return {(template_id, day): booked for template_id, day, booked in rows}


def zone_availability(
    *, zone: Zone, first: date, last: date, now: datetime | None = None
) -> list[DayAvailability]:
    """Every date from `first` to `last` (both included) with its slots ascending by start.

    Capacity rules 1-4; `bookable` when something is available, the cutoff is in the future
    and the zone is enabled (decisions §6). Two queries, whatever the range and the bookings.
    """
    now = now or timezone.now()
    templates = _live_templates(zone)
    booked = _booked_counts(templates, first, last)
    by_weekday: dict[int, list[SlotTemplate]] = defaultdict(list)
    for template in templates:
        by_weekday[template.day_of_week].append(template)
    tz = zone_tz(zone.timezone)
    days = []
    for day in dates_between(first, last):
        entries = []
        for template in by_weekday.get(day_of_week(day), ()):
            slot = occurrence(
                day=day,
                start_time=template.start_time,
                duration_minutes=template.duration_minutes,
                cutoff_minutes=template.cutoff_minutes,
                tz=tz,
            )
            capacity = template.capacity
            count = booked.get((template.id, day), 0)
            entries.append(
                SlotAvailability(
                    template=template,
                    occurrence=slot,
                    capacity=capacity,
                    booked=count,
                    bookable=capacity - count > 0 and slot.cutoff_at > now and zone.enabled,
                )
            )
        days.append(DayAvailability(date=day, slots=entries))
    return days


def zone_today(*, zone: Zone, now: datetime | None = None) -> date:
    return (now or timezone.now()).astimezone(zone_tz(zone.timezone)).date()


# ----- erp.slots.updated -----


def template_times(template: SlotTemplate) -> tuple[str, str]:
    """(`startTime`, `endTime`) of a template as `HH:MM`; a slot ending at midnight ends at
    `00:00`."""
    start = minutes_of(template.start_time)
    return hh_mm(start), hh_mm(start + template.duration_minutes)


def template_event_item(template: SlotTemplate) -> dict:
    """A template as the `slots[]` items of `erp.slots.updated` (interface "ERP events"),
    with its `dayOfWeek` as well."""
    start_time, end_time = template_times(template)
    return {
        "id": str(template.id),
        "dayOfWeek": template.day_of_week,
        "startTime": start_time,
        "endTime": end_time,
        "durationMinutes": template.duration_minutes,
        "cutoffMinutes": template.cutoff_minutes,
        "vehicleCapacity": template.vehicle_capacity,
        "capacity": template.capacity,
    }


def slots_updated_payload(*, zone: Zone, now: datetime | None = None) -> tuple[list, list]:
    """`slots[]` (the zone's live templates) and `availability[]` (each slot of the next 14
    days from today in zone time: `date`, `templateId`, `capacity`, `booked`, `available`)."""
    today = zone_today(zone=zone, now=now)
    days = zone_availability(
        zone=zone, first=today, last=today + timedelta(days=EVENT_AVAILABILITY_DAYS - 1), now=now
    )
    templates = sorted(
        {entry.template.id: entry.template for day in days for entry in day.slots}.values(),
        key=lambda template: (template.day_of_week, template.start_time, str(template.id)),
    )
    # Templates of weekdays outside the 14 days cannot exist (14 days cover every weekday).
    slots = [template_event_item(template) for template in templates]
    availability = [
        {
            "date": day.date.isoformat(),
            "templateId": str(entry.template.id),
            "capacity": entry.capacity,
            "booked": entry.booked,
            "available": entry.available,
        }
        for day in days
        for entry in day.slots
    ]
    return slots, availability
