"""The one list of webhook event names (docs/contract.md "Webhooks").

Key filters (`webhookEvents`) are checked against it, the OpenAPI document and
docs/webhooks.md list it, and the emitting modules take their names from it.
"""

from collections.abc import Iterable

ORDER_EVENTS = (
    "order.created",
    "order.assigned",
    "order.picked_up",
    "order.in_transit",
    "order.delivered",
    "order.failed",
    "order.cancelled",
)
ERP_SLOT_BOOKED = "erp.slot.booked"
ERP_SLOTS_UPDATED = "erp.slots.updated"
ERP_POLYGON_UPDATED = "erp.polygon.updated"
ERP_EVENTS = (ERP_SLOT_BOOKED, ERP_SLOTS_UPDATED, ERP_POLYGON_UPDATED)

#: sent only when an administrator asks for it (test-webhook), whatever the key's filter
TEST_EVENT = "webhook.test"

#: contract "Couriers": a delivery's ETA moved by 10 minutes or more
ORDER_ETA_UPDATED = "order.eta_updated"
#: events sent only to keys whose `webhookEvents` name them: `null` (every event of the
#: interface) does not include them, so no receiver gets an event it never asked for
OPT_IN_EVENTS = (ORDER_ETA_UPDATED,)

#: the names a key may list in `webhookEvents`
SUBSCRIBABLE_EVENTS = ORDER_EVENTS + ERP_EVENTS + OPT_IN_EVENTS


def webhook_events_problems(names: Iterable[str]) -> list[str]:
    """One message per name that is not in the catalogue (empty when all are known)."""
    return [
        f"webhookEvents has an unknown event: {name} (known: {', '.join(SUBSCRIBABLE_EVENTS)})"
        for name in names
        if name not in SUBSCRIBABLE_EVENTS
    ]


def webhook_events_normalize(names: Iterable[str]) -> list[str]:
    """The names once each, in the order given."""
    return list(dict.fromkeys(names))
