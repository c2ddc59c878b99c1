"""The webhook event names, as the emitting modules know them.

The list itself lives on the ground floor (delivery/webhook_events.py) because tenants check a
key's `webhookEvents` against it and tenants may not import webhooks (docs/architecture.md).
"""

from delivery.webhook_events import (
    ERP_EVENTS,
    ERP_POLYGON_UPDATED,
    ERP_SLOT_BOOKED,
    ERP_SLOTS_UPDATED,
    OPT_IN_EVENTS,
    ORDER_ETA_UPDATED,
    ORDER_EVENTS,
    SUBSCRIBABLE_EVENTS,
    TEST_EVENT,
    webhook_events_normalize,
    webhook_events_problems,
)

__all__ = [
    "ERP_EVENTS",
    "ERP_POLYGON_UPDATED",
    "ERP_SLOTS_UPDATED",
    "ERP_SLOT_BOOKED",
    "OPT_IN_EVENTS",
    "ORDER_ETA_UPDATED",
    "ORDER_EVENTS",
    "SUBSCRIBABLE_EVENTS",
    "TEST_EVENT",
    "webhook_events_normalize",
    "webhook_events_problems",
]
