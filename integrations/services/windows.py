"""Partner delivery window capacity (decisions §5, §6): booking and freeing a place."""

from datetime import datetime

from django.db.models import F

from delivery import metrics
from integrations.errors import DeliveryWindowFull
from integrations.models import DeliveryWindowLoad
from zones.models import Zone


def window_book(*, zone: Zone, start: datetime, end: datetime) -> DeliveryWindowLoad:
    """Takes one place in the zone's window starting at `start`, in the caller's transaction.

    400 `Delivery window is full` when the window holds `zone.window_capacity` orders.
    """
    capacity = zone.window_capacity
    # The counter row exists before anyone books it; a concurrent insert of it is a no-op.
    DeliveryWindowLoad.objects.bulk_create(
        [DeliveryWindowLoad(zone=zone, window_start=start, window_end=end, capacity=capacity)],
        ignore_conflicts=True,
    )
    # One conditional UPDATE takes the row lock: concurrent bookings of this window queue on it
    # and each re-checks `booked < capacity` after the one before it commits (PostgreSQL
    # re-evaluates the WHERE on the new row version), so the window is never overbooked.
    # `capacity` follows the zone's setting; the CHECK constraint backs booked <= capacity.
    updated = DeliveryWindowLoad.objects.filter(
        zone=zone, window_start=start, booked__lt=capacity
    ).update(booked=F("booked") + 1, capacity=capacity)
    if not updated:
        metrics.booking_refused("window")
        raise DeliveryWindowFull()
    metrics.booking_made("window")
    return DeliveryWindowLoad.objects.get(zone=zone, window_start=start)


def window_free(*, window_load_id: int) -> None:
    """Gives back the place an order held (it was cancelled or failed), in the caller's
    transaction."""
    DeliveryWindowLoad.objects.filter(pk=window_load_id, booked__gt=0).update(
        booked=F("booked") - 1
    )
