"""Reads on slots: templates, availability and the `erp.slots.updated` payload (contract "Slots and
windows").

Every function takes the organization (or a zone already scoped to it). Availability costs a
fixed number of queries whatever the number of days, templates and orders: the zone, then one
for the zone's templates with their booking counters of the range (`SlotDay`, one row per
template and date, so the orders themselves are never counted row by row).
"""

import json
import uuid
from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from enum import StrEnum
from uuid import UUID

from django.db import connection
from django.db.models import F, Model, QuerySet
from django.utils import timezone

from delivery.fields import parse_uuid
from slots import statements
from slots.errors import NoSlotZoneForPoint, SlotNotFound
from slots.models import SlotBooking, SlotHold, SlotTemplate, vehicle_capacity_total
from slots.occurrences import (
    Occurrence,
    dates_between,
    day_of_week,
    hh_mm,
    minutes_of,
    occurrence,
    occurrence_cached,
    zone_tz,
)
from zones import selectors as zone_selectors
from zones.errors import ZoneNotFound
from zones.models import SLOT_PURPOSES, Zone

#: how many days of availability `erp.slots.updated` carries, from today (zone time)
EVENT_AVAILABILITY_DAYS = 14


def slot_template_list(
    *, organization_id: UUID | str, zone_id: UUID | str | None = None
) -> QuerySet[SlotTemplate]:
    """The organization's live templates by zone, weekday and start; optionally of one zone."""
    templates = SlotTemplate.objects.filter(organization_id=organization_id, deleted_at=None)
    if zone_id is not None:
        templates = templates.filter(zone_id=zone_id)
    return templates.order_by("zone__name", "zone_id", "day_of_week", "start_time", "id")


def slot_template_get(
    *, organization_id: UUID | str, template_id: UUID | str, with_pickup: bool = False
) -> SlotTemplate:
    """The organization's live template `template_id` with its zone; 404 `Slot not found`
    when unknown, deleted, of another organization or malformed (contract "Errors", "Authentication
    and scope"). Its zone comes from the kept zone index when this process keeps one (the
    template is read alone), else it is read when first used.
    `with_pickup` reads the slot policy's default pickup address in the same query, as
    `template.policy_pickup_address` (None when the organization has no policy yet)."""
    parsed = parse_uuid(template_id)
    if parsed is None:
        raise SlotNotFound()
    templates = SlotTemplate.objects.all()
    if with_pickup:
        # One column, not the organization's and policy's rows: a lighter query to build.
        pickup = F("organization__slot_policy__default_pickup_address")
        templates = templates.annotate(policy_pickup_address=pickup)
    try:
        # get() reads the one row without ORDER BY (the model's ordering would cost a sort).
        template = templates.get(organization_id=organization_id, pk=parsed, deleted_at=None)
    except SlotTemplate.DoesNotExist:
        raise SlotNotFound() from None
    zone = zone_selectors.zone_kept(organization_id=organization_id, zone_id=template.zone_id)
    if zone is not None:
        template.zone = zone
    return template


def slot_live_hold_count(*, template_id: UUID | str, day: date, now: datetime | None = None) -> int:
    """How many holds of `template` on `day` are live at `now` (docs/slot-holds.md): unused and
    not expired. Each takes a place of the slot, as a booking does."""
    params = {"template": template_id, "date": day, "now": now or timezone.now()}
    with connection.cursor() as cursor:
        cursor.execute(statements.LIVE_HOLD_COUNT, params)
        return cursor.fetchone()[0]


def slot_live_hold_expiries(*, template_id: UUID | str, day: date) -> list[datetime]:
    """When each hold of `template` on `day` live now expires, soonest first."""
    return list(
        SlotHold.objects.filter(
            template_id=template_id, date=day, used_at=None, expires_at__gt=timezone.now()
        )
        .order_by("expires_at")
        .values_list("expires_at", flat=True)
    )


def slot_booking_of_order(*, order: Model) -> SlotBooking | None:
    """The slot booking (active or released) of `order` (an `integrations.Order`: slots stands
    below integrations, so it is typed as a `Model`), if it ever had one."""
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
        cutoff_day_before_at=template.cutoff_day_before_at,
    )


# ----- availability -----


@dataclass(frozen=True, slots=True)
class ZoneFacts:
    """The zone fields availability shows and needs."""

    id: uuid.UUID
    name: str
    purpose: str
    enabled: bool
    timezone: str


@dataclass(frozen=True, slots=True)
class TemplateFacts:
    """What availability needs of a template, computed once per request (not per date)."""

    id: uuid.UUID
    day_of_week: int
    start_time: time
    duration_minutes: int
    cutoff_minutes: int | None
    cutoff_day_before_at: time | None
    vehicle_capacity: list
    capacity: int
    id_text: str
    start_text: str
    end_text: str
    #: booked count by date, for the dates asked
    booked_by_date: dict


class UnbookableReason(StrEnum):
    """Why an availability entry is not bookable. When several hold, the first in this order
    is given (`UNBOOKABLE_PRECEDENCE`): from the one nothing can undo to the one that changes
    most often. `past` (the window has started), `template_inactive` (the zone is disabled:
    none of its slots is bookable), `blackout` (the zone takes no deliveries that date),
    `cutoff_passed` (booking closed, the window not started yet), `full` (no place left)."""

    PAST = "past"
    TEMPLATE_INACTIVE = "template_inactive"
    BLACKOUT = "blackout"
    CUTOFF_PASSED = "cutoff_passed"
    FULL = "full"


UNBOOKABLE_PRECEDENCE = tuple(UnbookableReason)


def unbookable_reason(
    *,
    now: datetime,
    slot: Occurrence,
    zone_enabled: bool,
    blackout: bool,
    available: int,
) -> UnbookableReason | None:
    """The reason an entry is not bookable, in the order of `UnbookableReason`; None when it
    is bookable."""
    if now >= slot.window_start:
        return UnbookableReason.PAST
    if not zone_enabled:
        return UnbookableReason.TEMPLATE_INACTIVE
    if blackout:
        return UnbookableReason.BLACKOUT
    if slot.cutoff_passed(now):
        return UnbookableReason.CUTOFF_PASSED
    if available <= 0:
        return UnbookableReason.FULL
    return None


@dataclass(frozen=True, slots=True)
class SlotAvailability:
    """One entry of the contract's "Slot availability entry"."""

    template: TemplateFacts
    occurrence: Occurrence
    capacity: int
    booked: int
    bookable: bool
    unbookable_reason: UnbookableReason | None = None

    @property
    def available(self) -> int:
        # Rule 4; never below zero when a template's capacity was lowered under its bookings.
        return max(0, self.capacity - self.booked)


@dataclass(frozen=True, slots=True)
class DayAvailability:
    date: date
    slots: list[SlotAvailability]


@dataclass(frozen=True, slots=True)
class ZoneAvailability:
    zone: ZoneFacts
    days: list[DayAvailability]
    #: the zone's blackout dates in the range asked
    blackout_dates: frozenset = frozenset()


def _slot_calendar(
    *, organization_id, zone_id, first: date, last: date, now: datetime
) -> tuple[ZoneFacts, list[TemplateFacts], frozenset]:
    """The zone (of purpose `slot` or `both`, else 404 `Zone not found`), its templates
    ascending by start, with their taken places (bookings and holds live at `now`) from
    `first` to `last`, and the zone's blackout dates from `first` to `last`. One query.

    Hand-written SQL on purpose (`slots/statements.py`): this is the hottest read of the
    service, and the ORM's query building cost as much as the query itself (docs/performance.md
    target: half the rate of a primary-key read).
    """
    parsed = parse_uuid(zone_id)
    if parsed is None:
        raise ZoneNotFound()
    with connection.cursor() as cursor:
        cursor.execute(
            statements.CALENDAR, [first, last, now, first, last, str(organization_id), parsed]
        )
        rows = cursor.fetchall()
    if not rows or rows[0][2] not in SLOT_PURPOSES:
        raise ZoneNotFound()
    zone_id, name, purpose, enabled, timezone_name = rows[0][:5]
    zone = ZoneFacts(
        id=zone_id, name=name, purpose=purpose, enabled=enabled, timezone=timezone_name
    )
    templates = []
    for row in rows:
        template_id, weekday, start, duration, cutoff, vehicles, dates, counts = row[5:13]
        cutoff_day_before_at = row[13]
        if template_id is None:
            continue  # a zone without templates: the LEFT JOIN's one empty row
        if isinstance(vehicles, str):  # Django reads jsonb as text, then decodes it
            vehicles = json.loads(vehicles)
        start_minutes = minutes_of(start)
        templates.append(
            TemplateFacts(
                id=template_id,
                day_of_week=weekday,
                start_time=start,
                duration_minutes=duration,
                cutoff_minutes=cutoff,
                cutoff_day_before_at=cutoff_day_before_at,
                vehicle_capacity=vehicles,
                capacity=vehicle_capacity_total(vehicles),
                id_text=str(template_id),
                start_text=hh_mm(start_minutes),
                end_text=hh_mm(start_minutes + duration),
                booked_by_date=dict(zip(dates, counts, strict=True)) if dates else {},
            )
        )
    blackouts = frozenset(rows[0][14] or ())
    return zone, templates, blackouts


def availability_zone_id(
    *,
    organization_id: UUID | str,
    zone_id: str | None = None,
    lat: float | None = None,
    lng: float | None = None,
) -> UUID | str:
    """The id of the zone availability is asked for (contract "Slots and windows"): `zone_id` when
    given (it
    wins over lat/lng; `availability_get` checks it), else the smallest enabled slot zone
    containing (lat, lng), found in the in-memory zone index (404 `No active zones found for
    the given coordinates` when there is none)."""
    if zone_id is not None:
        return zone_id
    zone = zone_selectors.zone_containing_point(
        organization_id=organization_id, lat=lat, lng=lng, purposes=SLOT_PURPOSES
    )
    if zone is None:
        raise NoSlotZoneForPoint()
    return zone.id


def availability_get(
    *,
    organization_id: UUID | str,
    zone_id: UUID | str,
    first: date,
    last: date,
    now: datetime | None = None,
) -> ZoneAvailability:
    """Every date from `first` to `last` (both included) with its slots ascending by start,
    for the organization's slot zone `zone_id` (404 `Zone not found` for an unknown zone,
    another organization's, or one of purpose `dispatch`).

    Capacity rules 1-4; `bookable` when something is available, the cutoff is in the future
    and the zone is enabled (contract "Slots and windows"). One query, whatever the range and the
    bookings.
    """
    now = now or timezone.now()
    zone, templates, blackouts = _slot_calendar(
        organization_id=organization_id, zone_id=zone_id, first=first, last=last, now=now
    )
    by_weekday: dict[int, list[TemplateFacts]] = defaultdict(list)
    for template in templates:
        by_weekday[template.day_of_week].append(template)
    days = []
    for day in dates_between(first, last):
        entries = []
        for template in by_weekday.get(day_of_week(day), ()):
            slot = occurrence_cached(
                day,
                template.start_time,
                template.duration_minutes,
                template.cutoff_minutes,
                zone.timezone,
                template.cutoff_day_before_at,
            )
            count = template.booked_by_date.get(day, 0)
            reason = unbookable_reason(
                now=now,
                slot=slot,
                zone_enabled=zone.enabled,
                blackout=day in blackouts,
                available=template.capacity - count,
            )
            entries.append(
                SlotAvailability(
                    template=template,
                    occurrence=slot,
                    capacity=template.capacity,
                    booked=count,
                    bookable=reason is None,
                    unbookable_reason=reason,
                )
            )
        days.append(DayAvailability(date=day, slots=entries))
    return ZoneAvailability(zone=zone, days=days, blackout_dates=blackouts)


def zone_availability(
    *, zone: Zone, first: date, last: date, now: datetime | None = None
) -> list[DayAvailability]:
    """`availability_get` for a zone at hand."""
    return availability_get(
        organization_id=zone.organization_id, zone_id=zone.id, first=first, last=last, now=now
    ).days


def zone_today(*, zone: Zone, now: datetime | None = None) -> date:
    return (now or timezone.now()).astimezone(zone_tz(zone.timezone)).date()


# ----- erp.slots.updated -----


def template_times(template: SlotTemplate) -> tuple[str, str]:
    """(`startTime`, `endTime`) of a template as `HH:MM`; a slot ending at midnight ends at
    `00:00`."""
    start = minutes_of(template.start_time)
    return hh_mm(start), hh_mm(start + template.duration_minutes)


def template_cutoff_day_before_text(template: SlotTemplate) -> str | None:
    """`cutoffDayBeforeAt` as `HH:MM`, or None for a template with `cutoffMinutes`."""
    at = template.cutoff_day_before_at
    return None if at is None else hh_mm(minutes_of(at))


def template_event_item(template: SlotTemplate) -> dict:
    """A template as the `slots[]` items of `erp.slots.updated` (contract "Webhooks"),
    with its `dayOfWeek` as well."""
    start_time, end_time = template_times(template)
    # A day-before template says so (its cutoffMinutes is null); the items of the others stay
    # exactly as the contract lists them.
    day_before = (
        {"cutoffDayBeforeAt": text} if (text := template_cutoff_day_before_text(template)) else {}
    )
    return {
        "id": str(template.id),
        "dayOfWeek": template.day_of_week,
        "startTime": start_time,
        "endTime": end_time,
        "durationMinutes": template.duration_minutes,
        "cutoffMinutes": template.cutoff_minutes,
        "vehicleCapacity": template.vehicle_capacity,
        "capacity": template.capacity,
        **day_before,
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
