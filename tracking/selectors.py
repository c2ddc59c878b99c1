"""Reads of public tracking (contract "Tracking"). The token is the credential: no organization
here."""

import re

from django.db.models import Prefetch

from integrations.errors import OrderNotFound
from integrations.models import Order, OrderStatusEvent

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
