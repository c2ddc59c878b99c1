"""Writes on slot holds (docs/slot-holds.md): a place taken during a checkout by the capacity
rule (`slot_place_take`), then booked, released or swept once expired. Its `SlotHold` row, the one
record of it, counts as a taken place while it is unused and not expired."""

from datetime import date, datetime, timedelta
from uuid import UUID

from django.db import transaction
from django.db.models import F, Model
from django.db.models.functions import Greatest
from django.utils import timezone

from delivery import metrics, retention
from delivery.fields import parse_uuid
from slots import selectors
from slots.errors import SlotHoldExpired, SlotHoldMismatch, SlotHoldNotFound, SlotHoldUsed
from slots.models import SlotDay, SlotHold, SlotTemplate
from slots.occurrences import Occurrence
from slots.services import bookings
from slots.services.templates import slot_zone_changed
from zones.models import Zone

#: `ttlSeconds` of a hold: default and bounds
HOLD_TTL_DEFAULT_SECONDS = 600
HOLD_TTL_MAX_SECONDS = 3600


def slot_hold_create(
    *,
    api_key_id: UUID | str,
    template: SlotTemplate,
    day: date,
    dropoff_lat: float,
    dropoff_lng: float,
    ttl_seconds: int = HOLD_TTL_DEFAULT_SECONDS,
) -> tuple[SlotHold, Occurrence]:
    """Takes a place of `template` on `day` for `api_key_id` during `ttl_seconds` after an ERP
    create's checks, and emits `erp.slots.updated`. Returns the hold and the slot's occurrence."""
    slot = bookings.slot_booking_check(
        template=template, day=day, dropoff_lat=dropoff_lat, dropoff_lng=dropoff_lng
    )
    if not 1 <= ttl_seconds <= HOLD_TTL_MAX_SECONDS:
        raise ValueError("ttl_seconds out of range")
    with transaction.atomic():
        bookings.slot_place_take(template=template, day=day, hold=True)
        now = timezone.now()
        hold = SlotHold.objects.create(
            organization_id=template.organization_id,
            api_key_id=api_key_id,
            template=template,
            date=day,
            created_at=now,
            expires_at=now + timedelta(seconds=ttl_seconds),
        )
        slot_zone_changed(zone=template.zone)
    return hold, slot


def _hold_locked(*, api_key_id, hold_id) -> SlotHold:
    """The key's hold `hold_id`, locked until the transaction ends: two requests using or
    releasing one hold queue. 404 `Slot hold not found` for any other key's, as for unknown."""
    keys_holds = SlotHold.objects.select_for_update().filter(api_key_id=api_key_id)
    hold = keys_holds.filter(pk=parsed).first() if (parsed := parse_uuid(hold_id)) else None
    if hold is None:
        raise SlotHoldNotFound()
    return hold


def slot_hold_claim(
    *, api_key_id: UUID | str, hold_id: UUID | str, template: SlotTemplate, day: date
) -> SlotHold:
    """The hold an ERP create names, locked: the key's own (404), for this template and date
    (400), not used (409), not expired (409)."""
    hold = _hold_locked(api_key_id=api_key_id, hold_id=hold_id)
    if hold.template_id != template.id or hold.date != day:
        raise SlotHoldMismatch()
    if hold.used_at is not None:
        raise SlotHoldUsed()
    if hold.expires_at <= timezone.now():
        raise SlotHoldExpired()
    return hold


def slot_hold_book(*, order: Model, hold: SlotHold, template: SlotTemplate) -> bookings.SlotBooked:
    """Turns the claimed `hold`'s place into `order`'s booking (no capacity check) in the caller's
    transaction and emits `erp.slot.booked`; 409 `Slot hold has expired` when, under the slot's
    lock, it is no longer live (a booking may have taken its place since)."""
    with transaction.atomic(savepoint=False):
        booking = bookings.booking_insert(order=order, template=template, day=hold.date)
        counter = SlotDay.objects.select_for_update().get(template=template, date=hold.date)
        # Read after the lock: every request that counted this hold as expired took its place
        # before this one, so it cannot have given its place away while it is still live here.
        now = timezone.now()
        if hold.expires_at <= now:
            raise SlotHoldExpired()
        SlotDay.objects.filter(pk=counter.pk).update(
            booked=F("booked") + 1,
            # A capacity lowered under the hold: the held place is kept all the same.
            capacity=Greatest(F("capacity"), F("booked") + 1),
        )
        hold.used_at = now
        hold.save(update_fields=["used_at"])
        metrics.booking_made("slot")
        live_holds = selectors.slot_live_hold_count(template_id=template.id, day=hold.date, now=now)
        taken = counter.booked + 1 + live_holds
        return bookings.slot_booked(order=order, template=template, booking=booking, booked=taken)


@transaction.atomic
def slot_hold_release(*, api_key_id: UUID | str, hold_id: UUID | str) -> None:
    """`DELETE .../slot-holds/:holdId`: gives the place back, forgets the hold and emits
    `erp.slots.updated` (404 for another key's; 409 once booked: cancel the order instead)."""
    hold = _hold_locked(api_key_id=api_key_id, hold_id=hold_id)
    if hold.used_at is not None:
        raise SlotHoldUsed()
    hold.delete()
    # Its template and zone exist: deleting either deletes the row locked here (CASCADE).
    slot_zone_changed(zone=Zone.objects.get(slot_templates__id=hold.template_id))


def slot_holds_expired_delete(
    *, now: datetime | None = None, batch_size: int | None = None, until: float | None = None
) -> int:
    """Deletes the holds expired at `now` in batches (delivery/retention.py; safe to run twice and
    two at once), with `erp.slots.updated` for the zones whose unused holds gave places back."""
    expired = SlotHold.objects.filter(expires_at__lte=now or timezone.now())

    def delete_and_tell(pks: list) -> int:
        batch = SlotHold.objects.filter(pk__in=pks)
        zone_ids = set(
            batch.filter(used_at=None).values_list("template__zone_id", flat=True).distinct()
        )
        batch.delete()
        for zone in Zone.objects.filter(pk__in=zone_ids).order_by("id"):
            slot_zone_changed(zone=zone)
        return len(pks)

    return retention.in_batches(
        expired, delete_and_tell, order_by="expires_at", batch_size=batch_size, until=until
    ).removed
