"""Partner delivery window capacity (contract "Orders", "Slots and windows"): booking and freeing a
place."""

from datetime import datetime

from django.db import connection
from django.db.models import F

from delivery import metrics
from integrations.errors import DeliveryWindowFull
from integrations.models import DeliveryWindowLoad
from zones.models import Zone

# One statement books a place: the counter row is created with its first booking, or the
# existing row is locked and takes one more while `booked < capacity`. Concurrent bookings of a
# window queue on the row lock, and PostgreSQL re-evaluates the DO UPDATE's WHERE on the row
# version the one before committed, so a window is never overbooked (the CHECK constraint backs
# booked <= capacity). `capacity` follows the zone's setting. No row returned: the window is
# full. (Three ORM statements did this before: insert-if-missing, conditional UPDATE, SELECT.)
_BOOK = """
INSERT INTO {table} AS existing (zone_id, window_start, window_end, booked, capacity)
VALUES (%(zone)s, %(start)s, %(end)s, 1, %(capacity)s)
ON CONFLICT (zone_id, window_start) DO UPDATE
    SET booked = existing.booked + 1, capacity = EXCLUDED.capacity
    WHERE existing.booked < EXCLUDED.capacity
RETURNING id, window_end, booked, capacity
"""


def window_book(*, zone: Zone, start: datetime, end: datetime) -> DeliveryWindowLoad:
    """Takes one place in the zone's window starting at `start`, in the caller's transaction.

    400 `Delivery window is full` when the window holds `zone.window_capacity` orders.
    """
    capacity = zone.window_capacity
    row = None
    if capacity > 0:  # a zone without window capacity takes no orders with a window
        with connection.cursor() as cursor:
            cursor.execute(
                _BOOK.format(table=connection.ops.quote_name(DeliveryWindowLoad._meta.db_table)),
                {"zone": zone.pk, "start": start, "end": end, "capacity": capacity},
            )
            row = cursor.fetchone()
    if row is None:
        metrics.booking_refused("window")
        raise DeliveryWindowFull()
    metrics.booking_made("window")
    load_id, window_end, booked, capacity = row
    load = DeliveryWindowLoad(
        id=load_id,
        zone=zone,
        window_start=start,
        window_end=window_end,
        booked=booked,
        capacity=capacity,
    )
    load._state.adding, load._state.db = False, connection.alias  # as if read from the row
    return load


def window_free(*, window_load_id: int) -> None:
    """Gives back the place an order held (it was cancelled or failed), in the caller's
    transaction."""
    DeliveryWindowLoad.objects.filter(pk=window_load_id, booked__gt=0).update(
        booked=F("booked") - 1
    )
