"""Partner delivery window capacity (contract "Orders", "Slots and windows"): booking and freeing a
place."""

from datetime import datetime
from functools import cache

from django.db import connection

from delivery.queries import column
from integrations.errors import DeliveryWindowFull
from integrations.models import DeliveryWindowLoad
from slots import counters
from zones.models import Zone


@cache
def _book_statement() -> str:
    """A window's place taken in one statement (`slots/counters.py`): the row records the
    window's end with its first booking, and returns itself whole to stand in for the model."""
    returned = ("id", "window_end", "booked", "capacity")
    return counters.place_take_statement(
        model=DeliveryWindowLoad,
        key={"zone": "%(zone)s", "window_start": "%(start)s"},
        first_row={"window_end": "%(end)s"},
        returning=", ".join(column(DeliveryWindowLoad, name) for name in returned),
    )


def window_book(*, zone: Zone, start: datetime, end: datetime) -> DeliveryWindowLoad:
    """Takes one place in the zone's window starting at `start`, in the caller's transaction;
    `capacity` follows the zone's `window_capacity`.

    400 `Delivery window is full` when the window holds `zone.window_capacity` orders (a zone
    without window capacity takes no orders with a window).
    """
    row = counters.place_take(
        statement=_book_statement(),
        params={"zone": zone.pk, "start": start, "end": end, "capacity": zone.window_capacity},
        capacity=zone.window_capacity,
        kind="window",
    )
    if row is None:
        raise DeliveryWindowFull()
    load_id, window_end, booked, capacity = row
    # The row as Django builds one it read (`Model.from_db`, fields in the model's order): the
    # statement returned it, so nothing reads it again.
    load = DeliveryWindowLoad.from_db(
        connection.alias,
        ("id", "zone_id", "window_start", "window_end", "booked", "capacity"),
        (load_id, zone.pk, start, window_end, booked, capacity),
    )
    load.zone = zone
    return load


def window_free(*, window_load_id: int) -> None:
    """Gives back the place an order held (it was cancelled or failed), in the caller's
    transaction."""
    counters.place_give_back(model=DeliveryWindowLoad, counter_id=window_load_id)
