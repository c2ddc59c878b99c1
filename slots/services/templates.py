"""Writes on slots: the slot policy, templates and seeding (contract "Slots and windows",
"Management API"); each template change and seed emits `erp.slots.updated` in its transaction."""

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

#: contract "Management API": `slot-templates/seed` defaults
SEED_DAYS_OF_WEEK = (0, 1, 2, 3, 4)
SEED_FIRST_START = time(8, 0)
SEED_LAST_END_MINUTES = 20 * 60
DURATION_MISMATCH = (
    "durationMinutes must equal the minutes from startTime to endTime when both are given"
)


def slot_policy_get_or_create(*, organization_id: UUID | str) -> SlotPolicy:
    """The organization's slot policy, created with the defaults at first (one row: a 1:1 key)."""
    return SlotPolicy.objects.get_or_create(organization_id=organization_id)[0]


@transaction.atomic
def slot_policy_update(*, organization_id: UUID | str, **changes) -> SlotPolicy:
    """Sets the given fields of the policy (`timezone_name`, `default_duration_minutes`,
    `default_cutoff_minutes`, `default_vehicle_capacity`, `default_pickup_address`; None clears
    it), locked as it is read or created."""
    locked = SlotPolicy.objects.select_for_update()
    policy, _ = locked.get_or_create(organization_id=organization_id)
    fields = {{"timezone_name": "timezone"}.get(name, name): v for name, v in changes.items()}
    for name, value in fields.items():
        setattr(policy, name, "" if value is None else value)
    policy.updated_at = timezone.now()
    policy.save(update_fields=[*fields, "updated_at"])  # a name of no field raises ValueError
    return policy


def slot_duration_derive(
    *, start: time, end_time: time | None, duration_minutes: int | None, default: int
) -> int:
    """The slot's duration from `endTime` (00:00 is midnight at the end of the day) or
    `durationMinutes`, else `default`; a slot ends on its own day (contract "Slots and windows")."""
    start_minutes = minutes_of(start)
    duration = duration_minutes
    if end_time is not None:
        duration = (minutes_of(end_time) or MINUTES_PER_DAY) - start_minutes
        if duration <= 0:
            raise ValidationFailed(["endTime must be after startTime"])
        if duration_minutes is not None and duration != duration_minutes:
            raise ValidationFailed([DURATION_MISMATCH])
    duration = default if duration is None else duration
    if start_minutes + duration > MINUTES_PER_DAY:
        raise ValidationFailed(["durationMinutes: a slot must end by midnight of its day"])
    return duration


def slot_zone_changed(*, zone: Zone) -> None:
    """Emits `erp.slots.updated` for the zone (hour-bucketed and coalesced, contract "Webhooks")
    with its templates and the next 14 days' availability, in the caller's transaction."""
    slots, availability = selectors.slots_updated_payload(zone=zone)
    webhook_events.slots_updated_emit(zone=zone, slots=slots, availability=availability)


def _check_zone(zone: Zone, organization_id: UUID | str) -> None:
    if str(zone.organization_id) != str(organization_id):
        raise ValueError("zone of another organization")
    if zone.purpose not in SLOT_PURPOSES:
        raise ZoneNotForSlots()


def _template_save(
    template: SlotTemplate,
    *,
    creating: bool,
    end_time: time | None = None,
    duration_minutes: int | None = None,
    cutoff_minutes: int | None = None,
    cutoff_day_before_at: time | None = None,
    vehicle_capacity: list[dict] | None = None,
    **fields,
) -> SlotTemplate:
    """Sets the given values on `template` (a new one, or one locked for update) by the rules of
    `slot_template_update` (`fields`: `zone`, `day_of_week`, `start_time`), saves it and emits
    `erp.slots.updated` for its zone (and its old one)."""
    if cutoff_minutes is not None and cutoff_day_before_at is not None:
        raise ValidationFailed(["Provide either cutoffMinutes or cutoffDayBeforeAt, not both"])
    old_zone = None if creating else template.zone
    if unknown := fields.keys() - {"zone", "day_of_week", "start_time"}:
        raise TypeError(f"unexpected template fields {sorted(unknown)}")
    if "zone" in fields:
        _check_zone(fields["zone"], template.organization_id)
    for name, value in fields.items():
        setattr(template, name, value)
    template.duration_minutes = slot_duration_derive(
        start=template.start_time,
        end_time=end_time,
        duration_minutes=duration_minutes,
        default=template.duration_minutes,
    )
    if cutoff_minutes is not None:
        template.cutoff_minutes, template.cutoff_day_before_at = cutoff_minutes, None
    elif cutoff_day_before_at is not None:
        template.cutoff_minutes, template.cutoff_day_before_at = None, cutoff_day_before_at
    if vehicle_capacity is not None:
        template.vehicle_capacity = vehicle_capacity
    template.updated_at = timezone.now()
    if creating:
        template.created_at = template.updated_at
    try:
        with transaction.atomic():
            template.save(force_insert=creating)
    except IntegrityError:
        # The partial unique index: a live template of this zone already starts then.
        start = hh_mm(minutes_of(template.start_time))
        raise SlotTemplateTaken(day_of_week=template.day_of_week, start_time=start) from None
    slot_zone_changed(zone=template.zone)
    if old_zone is not None and old_zone.id != template.zone.id:
        slot_zone_changed(zone=old_zone)
    return template


@transaction.atomic
def slot_template_create(*, organization_id: UUID | str, zone: Zone, **values) -> SlotTemplate:
    """A new template of `zone` (purpose `slot` or `both`, else 400) from `values` (those of
    `slot_template_update`; `day_of_week` and `start_time` required), the slot policy giving
    what they leave out. 409 when a live template of the zone already starts then."""
    policy = slot_policy_get_or_create(organization_id=organization_id)
    template = SlotTemplate(
        organization_id=organization_id,
        duration_minutes=policy.default_duration_minutes,
        cutoff_minutes=policy.default_cutoff_minutes,
        vehicle_capacity=policy.default_vehicle_capacity,
    )
    return _template_save(template, creating=True, zone=zone, **values)


@transaction.atomic
def slot_template_update(*, template: SlotTemplate, **changes) -> SlotTemplate:
    """Changes the given fields (PATCH): `zone`, `day_of_week`, `start_time`, `end_time` or
    `duration_minutes` (a new start alone keeps the duration), `cutoff_minutes` or
    `cutoff_day_before_at` (either replaces the other; both: 400), `vehicle_capacity`; None is
    the same as not giving it. Existing bookings keep their slot. 409 as on create."""
    locked = SlotTemplate.objects.select_for_update(of=("self",)).select_related("zone")
    return _template_save(locked.get(pk=template.pk), creating=False, **changes)


@transaction.atomic
def slot_template_delete(*, template: SlotTemplate) -> None:
    """Takes the template out of use (orders booked on it keep their slot) and emits
    `erp.slots.updated` without it."""
    SlotTemplate.objects.filter(pk=template.pk, deleted_at=None).update(deleted_at=timezone.now())
    slot_zone_changed(zone=template.zone)


@transaction.atomic
def slot_templates_seed(
    *,
    organization_id: UUID | str,
    zones: list[Zone] | None = None,
    days_of_week: list[int] | None = None,
    first_start: time | None = None,
    last_end: time | None = None,
) -> list[SlotTemplate]:
    """Creates templates from the slot policy (contract "Management API"): for each zone (default:
    those of purpose `slot` or `both`) and weekday (default 0-4, Sunday to Thursday), slots of the
    policy's duration back to back from `first_start` (08:00) to `last_end` (20:00; 00:00 is
    midnight), leaving alone a slot that already starts then. Returns the templates created."""
    policy = slot_policy_get_or_create(organization_id=organization_id)
    if zones is None:
        zones = Zone.objects.filter(organization_id=organization_id, purpose__in=SLOT_PURPOSES)
        zones = list(zones.order_by("name", "id"))
    for zone in zones:
        _check_zone(zone, organization_id)
    first = minutes_of(first_start or SEED_FIRST_START)
    last = (minutes_of(last_end) or MINUTES_PER_DAY) if last_end else SEED_LAST_END_MINUTES
    if first >= last:
        raise ValidationFailed(["firstStart must be before lastEnd"])
    duration = policy.default_duration_minutes
    starts = [time(m // 60, m % 60) for m in range(first, last - duration + 1, duration)]
    now = timezone.now()
    wanted = [
        SlotTemplate(
            organization_id=organization_id,
            zone=zone,
            day_of_week=day,
            start_time=start,
            duration_minutes=duration,
            cutoff_minutes=policy.default_cutoff_minutes,
            vehicle_capacity=policy.default_vehicle_capacity,
            created_at=now,
            updated_at=now,
        )
        for zone in zones
        for day in sorted(set(days_of_week if days_of_week is not None else SEED_DAYS_OF_WEEK))
        for start in starts
    ]
    # A slot that exists, or that a concurrent seed wrote first, conflicts on the partial unique
    # index and is skipped; the ids (set here) tell which rows this seed inserted.
    SlotTemplate.objects.bulk_create(wanted, ignore_conflicts=True)
    ids = [template.pk for template in wanted]
    inserted = set(SlotTemplate.objects.filter(pk__in=ids).values_list("pk", flat=True))
    created = [template for template in wanted if template.pk in inserted]
    for zone in zones:
        if any(template.zone is zone for template in created):
            slot_zone_changed(zone=zone)
    return created
