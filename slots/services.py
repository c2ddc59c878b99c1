"""Writes on slots: the policy, templates and seeding, and booking under row locks.

Templates (contract "Slots and windows", "Management API"): `endTime` or `durationMinutes` may be
given, the other is derived; missing values come from the organization's slot policy. Every template
change and every seed emits `erp.slots.updated` for the zone, in the same transaction.

Bookings (contract "Orders", "Slots and windows"): bookings of one template and date are serialized
on that slot's
`SlotDay` row (`SELECT ... FOR UPDATE`), so capacity is never exceeded. Locks are always taken
in one order: the order row (by the caller), then its booking, then `SlotDay` rows sorted by
(template id, date). Two requests moving orders between the same two slots in opposite
directions therefore queue instead of deadlocking. The `order` they take is an
`integrations.Order`, typed as a `Model`: slots stands below integrations (docs/architecture.md).
"""

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from functools import cache
from uuid import UUID

from django.db import IntegrityError, transaction
from django.db.models import F, Model
from django.utils import timezone
from shapely.geometry import Point

from delivery import metrics
from delivery.errors import ValidationFailed
from delivery.fields import parse_uuid
from delivery.queries import CompiledInsert, column, rows_insert, table
from slots import counters, selectors
from slots.errors import (
    DropoffOutsideZone,
    SlotCutoffPassed,
    SlotDayMismatch,
    SlotFull,
    SlotHoldExpired,
    SlotHoldMismatch,
    SlotHoldNotFound,
    SlotHoldUsed,
    SlotTemplateTaken,
    SlotZoneDisabled,
    ZoneNotForSlots,
)
from slots.models import SlotBooking, SlotDay, SlotHold, SlotPolicy, SlotTemplate
from slots.occurrences import (
    MINUTES_PER_DAY,
    Occurrence,
    day_of_week,
    hh_mm,
    minutes_of,
)
from webhooks import events as webhook_events
from zones import selectors as zone_selectors
from zones.geometry import polygon_from_geodata
from zones.models import SLOT_PURPOSES, Zone

_UNSET = object()

#: contract "Management API": `slot-templates/seed` defaults
SEED_DAYS_OF_WEEK = (0, 1, 2, 3, 4)
SEED_FIRST_START = time(8, 0)
SEED_LAST_END_MINUTES = 20 * 60


# ----- policy -----


def slot_policy_get_or_create(*, organization_id: UUID | str) -> SlotPolicy:
    """The organization's slot policy, created with the defaults of contract "Slots and windows"
    when it has
    none yet (concurrent first calls create one row: the one-to-one key decides)."""
    policy = SlotPolicy.objects.filter(organization_id=organization_id).first()
    if policy is not None:
        return policy
    try:
        with transaction.atomic():
            return SlotPolicy.objects.create(organization_id=organization_id)
    except IntegrityError:
        return SlotPolicy.objects.get(organization_id=organization_id)


@transaction.atomic
def slot_policy_update(
    *,
    organization_id: UUID | str,
    timezone_name: str = _UNSET,
    default_duration_minutes: int = _UNSET,
    default_cutoff_minutes: int = _UNSET,
    default_vehicle_capacity: list[dict] = _UNSET,
    default_pickup_address: str = _UNSET,
) -> SlotPolicy:
    """Changes the given fields of the policy (the others keep their values)."""
    slot_policy_get_or_create(organization_id=organization_id)
    policy = SlotPolicy.objects.select_for_update().get(organization_id=organization_id)
    changes = {
        "timezone": timezone_name,
        "default_duration_minutes": default_duration_minutes,
        "default_cutoff_minutes": default_cutoff_minutes,
        "default_vehicle_capacity": default_vehicle_capacity,
        "default_pickup_address": default_pickup_address,
    }
    for name, value in changes.items():
        if value is not _UNSET:
            setattr(policy, name, value if value is not None else "")
    policy.updated_at = timezone.now()
    policy.save()
    return policy


# ----- templates -----


def slot_duration_derive(
    *, start: time, end_time: time | None, duration_minutes: int | None, default: int
) -> int:
    """The slot's duration from `endTime` or `durationMinutes` (contract "Slots and windows"); an
    `endTime` of
    00:00 is midnight at the end of the day. A slot ends on its own day."""
    start_minutes = minutes_of(start)
    from_end = None
    if end_time is not None:
        end_minutes = minutes_of(end_time) or MINUTES_PER_DAY
        from_end = end_minutes - start_minutes
        if from_end <= 0:
            raise ValidationFailed(["endTime must be after startTime"])
    if from_end is not None and duration_minutes is not None and from_end != duration_minutes:
        raise ValidationFailed(
            ["durationMinutes must equal the minutes from startTime to endTime when both are given"]
        )
    duration = from_end if from_end is not None else duration_minutes
    if duration is None:
        duration = default
    if start_minutes + duration > MINUTES_PER_DAY:
        raise ValidationFailed(["durationMinutes: a slot must end by midnight of its day"])
    return duration


def _check_zone(zone: Zone) -> None:
    if zone.purpose not in SLOT_PURPOSES:
        raise ZoneNotForSlots()


def _save_template(template: SlotTemplate, *, creating: bool) -> None:
    try:
        with transaction.atomic():
            template.save(force_insert=creating)
    except IntegrityError:
        # The partial unique index: a live template of this zone already starts then.
        raise SlotTemplateTaken(
            day_of_week=template.day_of_week, start_time=hh_mm(minutes_of(template.start_time))
        ) from None


def slot_zone_changed(*, zone: Zone) -> None:
    """Emits `erp.slots.updated` for the zone (hour-bucketed and coalesced, contract "Webhooks")
    with
    its templates and the availability of the next 14 days, in the caller's transaction."""
    slots, availability = selectors.slots_updated_payload(zone=zone)
    webhook_events.slots_updated_emit(zone=zone, slots=slots, availability=availability)


def _check_one_cutoff(cutoff_minutes: int | None, cutoff_day_before_at: time | None) -> None:
    if cutoff_minutes is not None and cutoff_day_before_at is not None:
        raise ValidationFailed(["Provide either cutoffMinutes or cutoffDayBeforeAt, not both"])


@transaction.atomic
def slot_template_create(
    *,
    organization_id: UUID | str,
    zone: Zone,
    day_of_week: int,
    start_time: time,
    end_time: time | None = None,
    duration_minutes: int | None = None,
    cutoff_minutes: int | None = None,
    vehicle_capacity: list[dict] | None = None,
    cutoff_day_before_at: time | None = None,
) -> SlotTemplate:
    """A new template of `zone` (purpose `slot` or `both`, else 400); values not given come
    from the organization's slot policy. 409 when a live template of the zone already starts
    at that weekday and time. The cutoff is `cutoff_minutes` or `cutoff_day_before_at`, never
    both (400); with neither, the policy's default minutes."""
    if str(zone.organization_id) != str(organization_id):
        raise ValueError("zone of another organization")
    _check_one_cutoff(cutoff_minutes, cutoff_day_before_at)
    _check_zone(zone)
    policy = slot_policy_get_or_create(organization_id=organization_id)
    now = timezone.now()
    template = SlotTemplate(
        organization_id=zone.organization_id,
        zone=zone,
        day_of_week=day_of_week,
        start_time=start_time,
        duration_minutes=slot_duration_derive(
            start=start_time,
            end_time=end_time,
            duration_minutes=duration_minutes,
            default=policy.default_duration_minutes,
        ),
        cutoff_minutes=(
            None
            if cutoff_day_before_at is not None
            else cutoff_minutes
            if cutoff_minutes is not None
            else policy.default_cutoff_minutes
        ),
        cutoff_day_before_at=cutoff_day_before_at,
        vehicle_capacity=(
            vehicle_capacity if vehicle_capacity is not None else policy.default_vehicle_capacity
        ),
        created_at=now,
        updated_at=now,
    )
    _save_template(template, creating=True)
    slot_zone_changed(zone=zone)
    return template


@transaction.atomic
def slot_template_update(
    *,
    template: SlotTemplate,
    zone: Zone = _UNSET,
    day_of_week: int = _UNSET,
    start_time: time = _UNSET,
    end_time: time | None = None,
    duration_minutes: int | None = None,
    cutoff_minutes: int | None = None,
    vehicle_capacity: list[dict] = _UNSET,
    cutoff_day_before_at: time | None = None,
) -> SlotTemplate:
    """Changes the given fields (PATCH). A new `startTime` alone keeps the duration; `endTime`
    or `durationMinutes` set the duration. Existing bookings keep their slot. A new
    `cutoff_minutes` replaces a day-before cutoff and a new `cutoff_day_before_at` replaces
    cutoff minutes; both at once: 400. `None` for any of these four is the same as not giving
    it: none of them can be cleared."""
    _check_one_cutoff(cutoff_minutes, cutoff_day_before_at)
    locked = (
        SlotTemplate.objects.select_for_update(of=("self",))
        .select_related("zone")
        .get(pk=template.pk)
    )
    old_zone = locked.zone
    if zone is not _UNSET:
        if zone.organization_id != locked.organization_id:
            raise ValueError("zone of another organization")
        _check_zone(zone)
        locked.zone = zone
    if day_of_week is not _UNSET:
        locked.day_of_week = day_of_week
    if start_time is not _UNSET:
        locked.start_time = start_time
    locked.duration_minutes = slot_duration_derive(
        start=locked.start_time,
        end_time=end_time,
        duration_minutes=duration_minutes,
        default=locked.duration_minutes,
    )
    if cutoff_minutes is not None:
        locked.cutoff_minutes, locked.cutoff_day_before_at = cutoff_minutes, None
    elif cutoff_day_before_at is not None:
        locked.cutoff_minutes, locked.cutoff_day_before_at = None, cutoff_day_before_at
    if vehicle_capacity is not _UNSET:
        locked.vehicle_capacity = vehicle_capacity
    locked.updated_at = timezone.now()
    _save_template(locked, creating=False)
    slot_zone_changed(zone=locked.zone)
    if locked.zone.id != old_zone.id:
        slot_zone_changed(zone=old_zone)
    return locked


@transaction.atomic
def slot_template_delete(*, template: SlotTemplate) -> None:
    """Takes the template out of use (orders booked on it keep their slot) and emits
    `erp.slots.updated` without it."""
    SlotTemplate.objects.filter(pk=template.pk, deleted_at=None).update(deleted_at=timezone.now())
    slot_zone_changed(zone=template.zone)


def _seed_starts(*, first_start: time, last_end_minutes: int, duration: int) -> list[time]:
    starts, minutes = [], minutes_of(first_start)
    while minutes + duration <= last_end_minutes:
        starts.append(time(minutes // 60, minutes % 60))
        minutes += duration
    return starts


@transaction.atomic
def slot_templates_seed(
    *,
    organization_id: UUID | str,
    zones: list[Zone] | None = None,
    days_of_week: list[int] | None = None,
    first_start: time | None = None,
    last_end: time | None = None,
) -> list[SlotTemplate]:
    """Creates templates from the slot policy (contract "Management API"): for each zone
    (default: every zone of purpose `slot` or `both`), each weekday (default 0-4, Sunday to
    Thursday), slots of the policy's duration back to back from `first_start` (08:00) until
    `last_end` (20:00; 00:00 is midnight). Slots that already exist (zone, weekday, start) are
    left alone, so seeding twice creates nothing new. Returns the templates created."""
    policy = slot_policy_get_or_create(organization_id=organization_id)
    if zones is None:
        zones = list(
            Zone.objects.filter(
                organization_id=organization_id, purpose__in=SLOT_PURPOSES
            ).order_by("name", "id")
        )
    for zone in zones:
        if zone.organization_id != organization_id:
            raise ValueError("zone of another organization")
        _check_zone(zone)
    first_start = first_start or SEED_FIRST_START
    last_end_minutes = (
        (minutes_of(last_end) or MINUTES_PER_DAY) if last_end else SEED_LAST_END_MINUTES
    )
    if minutes_of(first_start) >= last_end_minutes:
        raise ValidationFailed(["firstStart must be before lastEnd"])
    days = sorted(set(days_of_week if days_of_week is not None else SEED_DAYS_OF_WEEK))
    starts = _seed_starts(
        first_start=first_start,
        last_end_minutes=last_end_minutes,
        duration=policy.default_duration_minutes,
    )
    existing = set(
        SlotTemplate.objects.filter(
            zone__in=zones, deleted_at=None, day_of_week__in=days
        ).values_list("zone_id", "day_of_week", "start_time")
    )
    created: list[SlotTemplate] = []
    now = timezone.now()
    # What every seeded template shares: the policy's values, and the moment of the seed.
    shared = {
        "duration_minutes": policy.default_duration_minutes,
        "cutoff_minutes": policy.default_cutoff_minutes,
        "vehicle_capacity": policy.default_vehicle_capacity,
        "created_at": now,
        "updated_at": now,
    }
    for zone in zones:
        created_here = 0
        for day in days:
            for start in starts:
                if (zone.id, day, start) in existing:
                    continue
                template = SlotTemplate(
                    organization_id=organization_id,
                    zone=zone,
                    day_of_week=day,
                    start_time=start,
                    **shared,
                )
                try:
                    with transaction.atomic():
                        template.save(force_insert=True)
                except IntegrityError:
                    continue  # seeded at the same moment by a concurrent request
                created.append(template)
                created_here += 1
        if created_here:
            slot_zone_changed(zone=zone)
    return created


# ----- booking -----


def slot_booking_check(
    *,
    template: SlotTemplate,
    day: date,
    dropoff_lat: float,
    dropoff_lng: float,
    now: datetime | None = None,
) -> Occurrence:
    """The checks of contract "Orders" that come after "template exists", in their order: weekday,
    cutoff, dropoff inside the template's zone. Capacity is checked under the lock by
    `slot_book` / `slot_booking_move`. Returns the slot's occurrence on `day`."""
    if day_of_week(day) != template.day_of_week:
        raise SlotDayMismatch()
    slot = selectors.template_occurrence(template=template, day=day)
    if slot.cutoff_passed(now or timezone.now()):
        raise SlotCutoffPassed()
    zone = template.zone
    # covers(): a point on the boundary is inside, as for every zone lookup (contract "Slots and
    # windows").
    if not polygon_from_geodata(zone.geodata).covers(Point(dropoff_lng, dropoff_lat)):
        raise DropoffOutsideZone()
    if not zone.enabled:
        # contract "Slots and windows": a slot of a disabled zone is not bookable.
        raise SlotZoneDisabled()
    # Last, after the contract's own checks: a blackout only refuses what would otherwise pass.
    zone_selectors.zone_blackout_check(zone=zone, day=day)
    return slot


def _slot_day_locked(*, template_id, day: date) -> SlotDay:
    """The (template, date) counter row, locked until the transaction ends (contract "Slots and
    windows").

    Concurrent bookings of this slot queue on the lock, and each reads `booked` as the one
    before it committed it, so check-then-increment is safe here.
    """
    try:
        return SlotDay.objects.select_for_update().get(template_id=template_id, date=day)
    except SlotDay.DoesNotExist:
        # First booking of the slot: create the row; a concurrent insert of it is a no-op.
        SlotDay.objects.bulk_create(
            [SlotDay(template_id=template_id, date=day)], ignore_conflicts=True
        )
        return SlotDay.objects.select_for_update().get(template_id=template_id, date=day)


def live_hold_count(expiries: Iterable[datetime], now: datetime) -> int:
    """The holds of a counter row still live at `now` (an expired hold counts for nothing)."""
    return sum(1 for expiry in expiries if expiry > now)


def _take_place(counter: SlotDay, *, capacity: int) -> int:
    """One more booking on a locked counter; 400 `Delivery slot is full` when its bookings and
    live holds fill it."""
    if counter.booked + live_hold_count(counter.hold_expiries, timezone.now()) >= capacity:
        metrics.booking_refused("slot")
        raise SlotFull()
    SlotDay.objects.filter(pk=counter.pk).update(booked=F("booked") + 1, capacity=capacity)
    metrics.booking_made("slot")
    counter.booked += 1
    counter.capacity = capacity
    return counter.booked


# Live holds of the counter row (`SlotDay.hold_expiries`) at `%(now)s`: in the DO UPDATE's WHERE
# this reads the row version the statement locked, so holds count as exactly as bookings do.
_LIVE_HOLDS = "(SELECT count(*) FROM unnest({column}) AS e WHERE e > %(now)s)"


@cache
def _book_place_statement() -> str:
    """A booking's place taken in one statement (`slots/counters.py`): the slot's live holds
    count as taken places, the row starts with none, and the statement returns the places taken
    (bookings and live holds) after this one. Moves still lock first, in a fixed order, as they
    touch two counters."""
    holds = column(SlotDay, "hold_expiries")
    booked = column(SlotDay, "booked")
    return counters.place_take_statement(
        model=SlotDay,
        key={"template": "%(template)s", "date": "%(date)s"},
        first_row={"hold_expiries": "'{}'"},
        others_taken=" + " + _LIVE_HOLDS.format(column=f"existing.{holds}"),
        returning=f"{booked} + {_LIVE_HOLDS.format(column=holds)}",
    )


def _book_place(*, template_id, day: date, capacity: int, now: datetime | None = None) -> int:
    """One more booking on the (template, date) counter, locked until the transaction ends;
    400 `Delivery slot is full` when bookings and live holds fill it. Returns the slot's taken
    places (bookings and live holds) after this one."""
    row = counters.place_take(
        statement=_book_place_statement(),
        params={
            "template": template_id,
            "date": day,
            "capacity": capacity,
            "now": now or timezone.now(),
        },
        capacity=capacity,
        kind="slot",
    )
    if row is None:
        raise SlotFull()
    return row[0]


def _give_back_place(counter: SlotDay) -> None:
    counters.place_give_back(model=SlotDay, counter_id=counter.pk)
    counter.booked = max(0, counter.booked - 1)


@dataclass(frozen=True)
class SlotBooked:
    booking: SlotBooking
    booked: int
    capacity: int

    @property
    def available(self) -> int:
        return max(0, self.capacity - self.booked)


def _slot_booked(
    *, order: Model, template: SlotTemplate, booking: SlotBooking, booked: int, capacity: int
) -> SlotBooked:
    """Emits `erp.slot.booked` for `order`'s new `booking`, with the slot's taken places
    (`booked`: bookings and live holds) once it counts, and returns the booking as
    `SlotBooked`. A plain booking and a hold turned booking announce it alike."""
    booked_slot = SlotBooked(booking=booking, booked=booked, capacity=capacity)
    webhook_events.slot_booked_emit(
        organization_id=order.organization_id,
        zone=template.zone,
        order_id=order.id,
        template_id=template.id,
        date=booking.date,
        booked=booked,
        capacity=capacity,
        available=booked_slot.available,
        updated_at=booking.booked_at,
    )
    return booked_slot


_BOOKING_INSERT = CompiledInsert(SlotBooking)


def slot_book(*, order: Model, template: SlotTemplate, day: date) -> SlotBooked:
    """Books `template` on `day` for a new `order` (capacity rules 1-5), in the caller's
    transaction, and emits `erp.slot.booked`. 400 `Delivery slot is full` at capacity (the
    caller's transaction is then rolled back, order included)."""
    # No savepoint of its own: a refusal rolls the caller's transaction back, order included.
    with transaction.atomic(savepoint=False):
        booking = SlotBooking(
            organization_id=order.organization_id,
            order=order,
            template=template,
            date=day,
            booked_at=timezone.now(),
        )
        rows_insert((_BOOKING_INSERT, booking))  # compiled once (delivery/queries.py)
        # Everything above runs before the lock; the lock is held for the rest of the
        # transaction only: the UPDATE, the event and the commit.
        capacity = template.capacity
        booked = _book_place(template_id=template.id, day=day, capacity=capacity)
        return _slot_booked(
            order=order, template=template, booking=booking, booked=booked, capacity=capacity
        )


def _slot_key(template_id, day: date) -> tuple[str, str]:
    return (str(template_id), day.isoformat())


def slot_booking_move(*, order: Model, template: SlotTemplate, day: date) -> SlotBooking:
    """Moves the order's booking to `template` on `day` (or books it when it has none), freeing
    the old slot and taking the new one in the caller's transaction (contract "Orders"). The caller
    holds the order row's lock. 400 `Delivery slot is full` when the new slot is full.
    Emits `erp.slots.updated` for the zones whose availability changed."""
    with transaction.atomic(savepoint=False):
        booking = SlotBooking.objects.select_for_update().filter(order_id=order.pk).first()
        old_key = None
        if booking is not None and booking.is_active:
            if booking.template_id == template.id and booking.date == day:
                return booking  # already there: nothing to free or take
            old_key = (booking.template_id, booking.date)
        new_key = (template.id, day)
        # A fixed lock order, whatever the direction of the move: crossing moves never deadlock.
        keys = sorted({new_key, old_key} - {None}, key=lambda key: _slot_key(*key))
        counters = {key: _slot_day_locked(template_id=key[0], day=key[1]) for key in keys}
        _take_place(counters[new_key], capacity=template.capacity)
        old_template = None
        if old_key is not None:
            _give_back_place(counters[old_key])
            old_template = booking.template
        now = timezone.now()
        if booking is None:
            booking = SlotBooking(organization_id=order.organization_id, order=order)
        booking.template = template
        booking.date = day
        booking.booked_at = now
        booking.released_at = None
        booking.save()
        slot_zone_changed(zone=template.zone)
        if old_template is not None and old_template.zone_id != template.zone_id:
            slot_zone_changed(zone=old_template.zone)
    return booking


def slot_booking_release(*, order: Model) -> None:
    """Frees the order's slot (it was cancelled or failed: capacity rule 3), in the caller's
    transaction, and emits `erp.slots.updated` for its zone. Releasing an order with no active
    booking does nothing, so calling it twice is safe."""
    with transaction.atomic(savepoint=False):
        booking = (
            SlotBooking.objects.select_for_update()
            .filter(order_id=order.pk, released_at=None)
            .first()
        )
        if booking is None:
            return
        counter = _slot_day_locked(template_id=booking.template_id, day=booking.date)
        _give_back_place(counter)
        booking.released_at = timezone.now()
        booking.save(update_fields=["released_at"])
        zone = Zone.objects.filter(slot_templates__id=booking.template_id).first()
        if zone is not None:
            slot_zone_changed(zone=zone)


# ----- holds (docs/slot-holds.md) -----

#: `ttlSeconds` of a hold: default and bounds
HOLD_TTL_DEFAULT_SECONDS = 600
HOLD_TTL_MAX_SECONDS = 3600

# A hold takes a place in one statement, as a booking does (`_book_place_statement`), on the
# same row lock: its expiry joins the row's live holds while bookings and live holds leave room.
# The holds that have expired are dropped from the row on the way. Its own statement, not the
# counters' one: it adds an expiry instead of counting a booking.
_HOLD_PLACE = """
INSERT INTO {table} AS existing (template_id, date, booked, capacity, hold_expiries)
VALUES (%(template)s, %(date)s, 0, %(capacity)s, ARRAY[%(expires)s]::timestamptz[])
ON CONFLICT (template_id, date) DO UPDATE
    SET hold_expiries = ARRAY(
            SELECT e FROM unnest(existing.hold_expiries) AS e WHERE e > %(now)s ORDER BY e
        ) || EXCLUDED.hold_expiries,
        capacity = EXCLUDED.capacity
    WHERE existing.booked + {live_holds} < EXCLUDED.capacity
RETURNING 1
"""


def slot_hold_create(
    *,
    api_key_id: UUID | str,
    template: SlotTemplate,
    day: date,
    dropoff_lat: float,
    dropoff_lng: float,
    ttl_seconds: int = HOLD_TTL_DEFAULT_SECONDS,
) -> tuple[SlotHold, Occurrence]:
    """Takes one place of `template` on `day` for the API key `api_key_id` during
    `ttl_seconds`, after the checks of an ERP create in their order (weekday, cutoff, dropoff,
    zone enabled, then capacity under the slot's lock: 400 `Delivery slot is full`). Emits
    `erp.slots.updated`. Returns the hold and the slot's occurrence."""
    slot = slot_booking_check(
        template=template, day=day, dropoff_lat=dropoff_lat, dropoff_lng=dropoff_lng
    )
    if not 1 <= ttl_seconds <= HOLD_TTL_MAX_SECONDS:
        raise ValueError("ttl_seconds out of range")
    with transaction.atomic():
        now = timezone.now()
        expires_at = now + timedelta(seconds=ttl_seconds)
        row = counters.place_take(
            statement=_HOLD_PLACE.format(
                table=table(SlotDay),
                live_holds=_LIVE_HOLDS.format(column="existing.hold_expiries"),
            ),
            params={
                "template": template.id,
                "date": day,
                "capacity": template.capacity,
                "expires": expires_at,
                "now": now,
            },
            capacity=template.capacity,
            kind=None,
        )
        if row is None:
            raise SlotFull()
        hold = SlotHold.objects.create(
            organization_id=template.organization_id,
            api_key_id=api_key_id,
            template=template,
            date=day,
            created_at=now,
            expires_at=expires_at,
        )
        slot_zone_changed(zone=template.zone)
    return hold, slot


def _hold_locked(*, api_key_id, hold_id) -> SlotHold:
    """The key's hold `hold_id`, locked until the transaction ends: two requests using or
    releasing one hold queue. 404 `Slot hold not found` for any other key's, as for unknown."""
    parsed = parse_uuid(hold_id)
    hold = (
        SlotHold.objects.select_for_update().filter(pk=parsed, api_key_id=api_key_id).first()
        if parsed
        else None
    )
    if hold is None:
        raise SlotHoldNotFound()
    return hold


def slot_hold_claim(
    *, api_key_id: UUID | str, hold_id: UUID | str, template: SlotTemplate, day: date
) -> SlotHold:
    """The hold an ERP create names, locked, in the caller's transaction: the key's own (404),
    for this template and date (400), not used (409), not expired (409)."""
    hold = _hold_locked(api_key_id=api_key_id, hold_id=hold_id)
    if hold.template_id != template.id or hold.date != day:
        raise SlotHoldMismatch()
    if hold.used_at is not None:
        raise SlotHoldUsed()
    if hold.expires_at <= timezone.now():
        raise SlotHoldExpired()
    return hold


def slot_hold_book(*, order: Model, hold: SlotHold, template: SlotTemplate) -> SlotBooked:
    """Turns the claimed `hold` into `order`'s booking, in the caller's transaction: the place
    the hold took becomes a booking (no second place, no capacity check). 409 `Slot hold has
    expired` when, under the slot's lock, the hold is no longer live (it expired while the
    order was written: a booking may have taken its place since). Emits `erp.slot.booked`."""
    with transaction.atomic(savepoint=False):
        booking = SlotBooking.objects.create(
            organization_id=order.organization_id,
            order=order,
            template=template,
            date=hold.date,
            booked_at=timezone.now(),
        )
        counter = _slot_day_locked(template_id=template.id, day=hold.date)
        # Read after the lock: every request that counted this hold as expired took its time
        # before this one, so it cannot have given its place away while it is still live here.
        now = timezone.now()
        expiries = list(counter.hold_expiries)
        if hold.expires_at <= now or hold.expires_at not in expiries:
            raise SlotHoldExpired()
        expiries.remove(hold.expires_at)
        booked = counter.booked + 1
        SlotDay.objects.filter(pk=counter.pk).update(
            booked=booked,
            # A capacity lowered under the hold: the held place is kept all the same.
            capacity=max(counter.capacity, booked),
            hold_expiries=expiries,
        )
        hold.used_at = now
        hold.save(update_fields=["used_at"])
        metrics.booking_made("slot")
        capacity = template.capacity
        taken = booked + live_hold_count(expiries, now)
        return _slot_booked(
            order=order, template=template, booking=booking, booked=taken, capacity=capacity
        )


@transaction.atomic
def slot_hold_release(*, api_key_id: UUID | str, hold_id: UUID | str) -> None:
    """`DELETE .../slot-holds/:holdId`: gives the place back and forgets the hold (404 for an
    unknown or another key's; 409 once it became a booking: cancel the order instead).
    Emits `erp.slots.updated`."""
    hold = _hold_locked(api_key_id=api_key_id, hold_id=hold_id)
    if hold.used_at is not None:
        raise SlotHoldUsed()
    counter = _slot_day_locked(template_id=hold.template_id, day=hold.date)
    expiries = list(counter.hold_expiries)
    if hold.expires_at in expiries:
        expiries.remove(hold.expires_at)
        SlotDay.objects.filter(pk=counter.pk).update(hold_expiries=expiries)
    hold.delete()
    zone = Zone.objects.filter(slot_templates__id=hold.template_id).first()
    if zone is not None:
        slot_zone_changed(zone=zone)


@transaction.atomic
def slot_holds_expired_delete(*, now: datetime | None = None) -> int:
    """Deletes the holds expired at `now` (they already count for nothing) and emits
    `erp.slots.updated` for the zones whose unused holds gave places back. Safe to run twice:
    the second run finds nothing. Returns how many were deleted."""
    now = now or timezone.now()
    expired = SlotHold.objects.filter(expires_at__lte=now)
    zone_ids = set(
        expired.filter(used_at=None).values_list("template__zone_id", flat=True).distinct()
    )
    deleted, _ = expired.delete()
    for zone in Zone.objects.filter(pk__in=zone_ids).order_by("id"):
        slot_zone_changed(zone=zone)
    return deleted
