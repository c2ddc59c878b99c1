"""What a plan knew of an order, so a commit can tell whether it changed since (contract
"Dispatch", "Commit").

An order's version is its driver and its place in time and space: zone, active slot booking
(template and date) and delivery window. Planning stores it on each stop (and left-out order);
a commit compares it with the order as it is then. The status is checked apart: `pending` and
`dispatching` both wait for a driver, so a release (`pending` to `dispatching`) is not a change
that matters, while an unassignment clears the driver and is one.
"""

from dataclasses import dataclass

from integrations.models import Order

_NONE = "-"


def _slot_of(order: Order) -> str:
    booking = getattr(order, "slot_booking", None)
    if booking is None or booking.released_at is not None:
        return _NONE
    return f"{booking.template_id}@{booking.date.isoformat()}"


def _window_of(order: Order) -> str:
    if order.delivery_window_start is None:
        return _NONE
    end = order.delivery_window_end.isoformat() if order.delivery_window_end else _NONE
    return f"{order.delivery_window_start.isoformat()}/{end}"


def order_version(order: Order) -> str:
    """`<driver>|<zone>|<slot>|<window>`, `-` for each it has not; readable on purpose, so a
    skipped order's reason can name what changed."""
    return "|".join(
        (
            str(order.driver_id) if order.driver_id else _NONE,
            str(order.zone_id) if order.zone_id else _NONE,
            _slot_of(order),
            _window_of(order),
        )
    )


@dataclass(frozen=True)
class VersionChange:
    driver_changed: bool
    place_changed: bool


def version_change(planned: str, order: Order) -> VersionChange | None:
    """What changed in `order` since it was planned with version `planned` (None: nothing). A
    stop without a stored version (planned before versions were kept) counts as unchanged."""
    if not planned:
        return None
    now = order_version(order)
    if now == planned:
        return None
    before, after = planned.split("|", 1), now.split("|", 1)
    return VersionChange(
        driver_changed=before[0] != after[0], place_changed=before[1:] != after[1:]
    )
