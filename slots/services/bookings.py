"""Writes on slots: the capacity rule, and booking, moving and releasing an order's slot
(contract "Orders", "Slots and windows"). Locks are taken in one order so crossing moves queue
instead of deadlocking: the order row (by the caller), its booking, then `SlotDay` rows sorted by
(template id, date). `order` is an `integrations.Order` (slots stands below integrations)."""

from dataclasses import dataclass
from datetime import date, datetime

from django.db import transaction
from django.db.models import Model
from django.utils import timezone
from shapely.geometry import Point

from delivery import metrics
from slots import counters, errors, selectors
from slots.models import SlotBooking, SlotDay, SlotTemplate
from slots.occurrences import Occurrence, day_of_week
from slots.services.templates import slot_zone_changed
from webhooks import events as webhook_events
from zones import selectors as zone_selectors
from zones.geometry import polygon_from_geodata
from zones.models import Zone


def slot_booking_check(
    *,
    template: SlotTemplate,
    day: date,
    dropoff_lat: float,
    dropoff_lng: float,
    now: datetime | None = None,
) -> Occurrence:
    """The checks of contract "Orders" after "template exists", in their order (capacity comes
    later, under the lock: `slot_place_take`). Returns the slot's occurrence on `day`."""
    if day_of_week(day) != template.day_of_week:
        raise errors.SlotDayMismatch()
    slot = selectors.template_occurrence(template=template, day=day)
    if slot.cutoff_passed(now or timezone.now()):
        raise errors.SlotCutoffPassed()
    zone = template.zone
    # covers(): a point on the boundary is inside, as in every zone lookup (docs/contract.md).
    if not polygon_from_geodata(zone.geodata).covers(Point(dropoff_lng, dropoff_lat)):
        raise errors.DropoffOutsideZone()
    if not zone.enabled:
        # contract "Slots and windows": a slot of a disabled zone is not bookable.
        raise errors.SlotZoneDisabled()
    # Last, after the contract's own checks: a blackout only refuses what would otherwise pass.
    zone_selectors.zone_blackout_check(zone=zone, day=day)
    return slot


def slot_place_take(*, template: SlotTemplate, day: date, hold: bool = False) -> int:
    """The capacity rule: takes a place of `template` on `day` for a booking (on its `SlotDay` row)
    or a `hold` (its row written by the caller) if bookings and live holds fit (docs/slot-holds.md),
    else 400 `Delivery slot is full`; returns the places taken. Holds are counted after the row's
    lock, by a statement whose snapshot has those of every transaction this one queued behind."""
    capacity = template.capacity
    key = {"template": template.id, "date": day}
    counter = counters.place_take(model=SlotDay, key=key, capacity=capacity, bookings=int(not hold))
    if counter is not None:
        live_holds = selectors.slot_live_hold_count(template_id=template.id, day=day)
        taken = counter.booked + live_holds + int(hold)
        if taken <= capacity:
            if not hold:
                metrics.booking_made("slot")
            return taken
        if not hold:
            # The live holds leave no room: the booking the statement counted goes back.
            counters.place_give_back(model=SlotDay, pk=counter.pk)
    if not hold:
        metrics.booking_refused("slot")
    raise errors.SlotFull()


def _slot_days_lock(keys: set[tuple]) -> None:
    """Locks the (template id, date) counter rows `keys` until the transaction ends, in the one
    order every request takes them (contract "Slots and windows"), creating those missing."""
    ordered = sorted(keys, key=lambda key: (str(key[0]), key[1].isoformat()))
    SlotDay.objects.bulk_create(
        [SlotDay(template_id=template_id, date=day) for template_id, day in ordered],
        ignore_conflicts=True,
    )
    for template_id, day in ordered:
        SlotDay.objects.select_for_update().get(template_id=template_id, date=day)


@dataclass(frozen=True)
class SlotBooked:
    booking: SlotBooking
    booked: int
    capacity: int

    @property
    def available(self) -> int:
        return max(0, self.capacity - self.booked)


def slot_booked(
    *, order: Model, template: SlotTemplate, booking: SlotBooking, booked: int
) -> SlotBooked:
    """Emits `erp.slot.booked` for `order`'s new `booking` (a plain one or a hold's) with the
    slot's taken places (`booked`: bookings and live holds), and returns it as `SlotBooked`."""
    booked_slot = SlotBooked(booking=booking, booked=booked, capacity=template.capacity)
    webhook_events.slot_booked_emit(
        organization_id=order.organization_id,
        zone=template.zone,
        order_id=order.id,
        template_id=template.id,
        date=booking.date,
        booked=booked,
        capacity=booked_slot.capacity,
        available=booked_slot.available,
        updated_at=booking.booked_at,
    )
    return booked_slot


def booking_insert(*, order: Model, template: SlotTemplate, day: date) -> SlotBooking:
    return SlotBooking.objects.create(
        organization_id=order.organization_id,
        order=order,
        template=template,
        date=day,
        booked_at=timezone.now(),
    )


def slot_book(*, order: Model, template: SlotTemplate, day: date) -> SlotBooked:
    """Books `template` on `day` for a new `order` (capacity rules 1-5), in the caller's
    transaction, and emits `erp.slot.booked`. 400 `Delivery slot is full` at capacity."""
    # No savepoint of its own: a refusal rolls the caller's transaction back, order included.
    with transaction.atomic(savepoint=False):
        booking = booking_insert(order=order, template=template, day=day)
        # The lock is taken last: held only for the count of holds, the event and the commit.
        booked = slot_place_take(template=template, day=day)
        return slot_booked(order=order, template=template, booking=booking, booked=booked)


def slot_booking_move(*, order: Model, template: SlotTemplate, day: date) -> SlotBooking:
    """Moves the order's booking (its row locked by the caller) to `template` on `day`, or books it,
    in the caller's transaction (contract "Orders"): 400 `Delivery slot is full` when the new slot
    is full. Emits `erp.slots.updated` for the zones whose availability changed."""
    with transaction.atomic(savepoint=False):
        booking = SlotBooking.objects.select_for_update().filter(order_id=order.pk).first()
        old_key = None
        if booking is not None and booking.is_active:
            if booking.template_id == template.id and booking.date == day:
                return booking  # already there: nothing to free or take
            old_key = (booking.template_id, booking.date)
        # Both counters first, in the one order: crossing moves never deadlock.
        _slot_days_lock({(template.id, day), old_key} - {None})
        slot_place_take(template=template, day=day)
        old_template = None
        if old_key is not None:
            counters.place_give_back(model=SlotDay, template_id=old_key[0], date=old_key[1])
            old_template = booking.template
        if booking is None:
            booking = SlotBooking(organization_id=order.organization_id, order=order)
        booking.template, booking.date, booking.released_at = template, day, None
        booking.booked_at = timezone.now()
        booking.save()
        slot_zone_changed(zone=template.zone)
        if old_template is not None and old_template.zone_id != template.zone_id:
            slot_zone_changed(zone=old_template.zone)
    return booking


def slot_booking_release(*, order: Model) -> None:
    """Frees the order's slot (cancelled or failed: capacity rule 3) in the caller's transaction
    and emits `erp.slots.updated` for its zone; with no active booking it does nothing."""
    with transaction.atomic(savepoint=False):
        locked = SlotBooking.objects.select_for_update()
        booking = locked.filter(order_id=order.pk, released_at=None).first()
        if booking is None:
            return
        counters.place_give_back(model=SlotDay, template_id=booking.template_id, date=booking.date)
        booking.released_at = timezone.now()
        booking.save(update_fields=["released_at"])
        # Its template and zone exist: deleting either deletes the row locked here (CASCADE).
        slot_zone_changed(zone=Zone.objects.get(slot_templates__id=booking.template_id))
