"""Reads of public tracking (contract "Tracking"). The token is the credential: no organization
here."""

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Prefetch

from dispatch.models import PlanStatus, PlanStop
from integrations.errors import OrderNotFound
from integrations.models import Order, OrderStatus, OrderStatusEvent

#: what a token can look like (URL-safe base64, the column's length); anything else cannot
#: match, and must not reach PostgreSQL (a NUL byte there is an error, not a miss)
_TOKEN_SHAPE = re.compile(r"[A-Za-z0-9_-]{1,64}")


def tracking_order_get(*, tracking_token: str) -> Order:
    """The order of a tracking token with all a tracking answer shows, in two queries.

    One query for the order with its organization, zone and driver, one for its status history
    (`order.status_events.all()`, oldest first, its creation `pending` first; contract "Tracking"),
    however long that history is. 404 `Order not found` for an unknown or malformed token.
    """
    order = (
        Order.objects.filter(tracking_token=tracking_token)
        .select_related("organization", "zone", "driver")
        .prefetch_related(
            Prefetch("status_events", queryset=OrderStatusEvent.objects.order_by("at", "id"))
        )
        .first()
        if isinstance(tracking_token, str) and _TOKEN_SHAPE.fullmatch(tracking_token)
        else None
    )
    if order is None:
        raise OrderNotFound()
    return order


#: contract "Tracking": the statuses that show an ETA, and the one that shows the stops before
ETA_STATUSES = (OrderStatus.ASSIGNED, OrderStatus.PICKED_UP, OrderStatus.IN_TRANSIT)
#: the ETA a recipient sees is rounded to this, and the window spans this much either side
ETA_ROUNDING = timedelta(minutes=5)
ETA_WINDOW_HALF = timedelta(minutes=10)


@dataclass(frozen=True)
class TrackingProgress:
    """How far the delivery is, as a recipient may know it: never the driver's position, the
    address or other stops, only a rounded ETA and how many stops come first."""

    eta: datetime | None
    eta_from: datetime | None
    eta_to: datetime | None
    stops_before: int | None
    delivered_at: datetime | None


def eta_rounded(eta: datetime) -> datetime:
    """The ETA to the nearest 5 minutes (half way rounds up)."""
    epoch = datetime(2000, 1, 1, tzinfo=eta.tzinfo)
    steps = round((eta - epoch) / ETA_ROUNDING + 1e-9)
    return epoch + steps * ETA_ROUNDING


def tracking_progress(*, order: Order) -> TrackingProgress:
    """The ETA, its window and the stops before (contract "Tracking"), for an order read by
    `tracking_order_get` (its history loaded): the order's stop on its driver's latest committed
    route gives the live ETA (the courier's positions move it) and the stops still ahead of it;
    an order assigned outside a route has its own ETA, or none, and no stops before."""
    delivered_at = next(
        (
            event.at
            for event in reversed(order.status_events.all())
            if event.to_status == OrderStatus.DELIVERED
        ),
        None,
    )
    if order.status not in ETA_STATUSES or order.driver_id is None:
        return TrackingProgress(None, None, None, None, delivered_at)
    stop = (
        PlanStop.objects.filter(
            order=order, route__driver_id=order.driver_id, plan__status=PlanStatus.COMMITTED
        )
        .order_by("-plan__committed_at", "-plan__created_at")
        .only("eta", "sequence", "route_id")
        .first()
    )
    eta = stop.eta if stop is not None else order.eta
    stops_before = None
    if stop is not None and order.status == OrderStatus.IN_TRANSIT:
        stops_before = PlanStop.objects.filter(
            route_id=stop.route_id, sequence__lt=stop.sequence, order__status__in=ETA_STATUSES
        ).count()
    if eta is None:
        return TrackingProgress(None, None, None, stops_before, delivered_at)
    shown = eta_rounded(eta)
    return TrackingProgress(
        shown, shown - ETA_WINDOW_HALF, shown + ETA_WINDOW_HALF, stops_before, delivered_at
    )
