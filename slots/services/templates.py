"""Writes on slots: the organization's slot policy, templates and seeding (contract "Slots and
windows", "Management API").

Templates: `endTime` or `durationMinutes` may be given, the other is derived; missing values come
from the organization's slot policy. Every template change and every seed emits
`erp.slots.updated` for the zone, in the same transaction.
"""

from datetime import time
from uuid import UUID

from django.db import IntegrityError, transaction
from django.utils import timezone

from delivery.errors import ValidationFailed
from slots import selectors
from slots.errors import SlotTemplateTaken, ZoneNotForSlots
from slots.models import SlotPolicy, SlotTemplate
from slots.occurrences import MINUTES_PER_DAY, hh_mm, minutes_of
from webhooks import events as webhook_events
from zones.models import SLOT_PURPOSES, Zone

_UNSET = object()

#: contract "Management API": `slot-templates/seed` defaults
SEED_DAYS_OF_WEEK = (0, 1, 2, 3, 4)
SEED_FIRST_START = time(8, 0)
SEED_LAST_END_MINUTES = 20 * 60


# ----- policy -----


def slot_policy_get_or_create(*, organization_id: UUID | str) -> SlotPolicy:
    """The organization's slot policy, created with the defaults of contract "Slots and windows"
    when it has none yet (concurrent first calls create one row: the one-to-one key decides)."""
    return SlotPolicy.objects.get_or_create(organization_id=organization_id)[0]


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
    # Locked as it is read, or created (concurrent first calls: the one-to-one key decides).
    locked = SlotPolicy.objects.select_for_update()
    policy, _ = locked.get_or_create(organization_id=organization_id)
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


def _check_zone(zone: Zone, organization_id: UUID | str) -> None:
    if str(zone.organization_id) != str(organization_id):
        raise ValueError("zone of another organization")
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
    _check_one_cutoff(cutoff_minutes, cutoff_day_before_at)
    _check_zone(zone, organization_id)
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
        _check_zone(zone, locked.organization_id)
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
        _check_zone(zone, organization_id)
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
                    _save_template(template, creating=True)
                except SlotTemplateTaken:
                    continue  # seeded at the same moment by a concurrent request
                created.append(template)
                created_here += 1
        if created_here:
            slot_zone_changed(zone=zone)
    return created
