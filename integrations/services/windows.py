"""Partner delivery window capacity (contract "Orders", "Slots and windows"): booking and freeing a
place."""

from datetime import datetime

from delivery import metrics
from integrations.errors import DeliveryWindowFull
from integrations.models import DeliveryWindowLoad
from slots import counters
from zones.models import Zone


def window_book(*, zone: Zone, start: datetime, end: datetime) -> DeliveryWindowLoad:
    """Takes one place in the zone's window starting at `start`, in the caller's transaction;
    `capacity` follows the zone's `window_capacity`. Returns the window's counter row as
    stored, with its zone.

    400 `Delivery window is full` when the window holds `zone.window_capacity` orders (a zone
    without window capacity takes no orders with a window).
    """
    load = counters.place_take(
        model=DeliveryWindowLoad,
        key={"zone": zone.pk, "window_start": start},
        first_row={"window_end": end},
        capacity=zone.window_capacity,
    )
    if load is None:
        metrics.booking_refused("window")
        raise DeliveryWindowFull()
    metrics.booking_made("window")
    load.zone = zone
    return load


def window_free(*, window_load_id: int) -> None:
    """Gives back the place an order held (it was cancelled or failed), in the caller's
    transaction."""
    counters.place_give_back(model=DeliveryWindowLoad, pk=window_load_id)
