"""Partner family events (contract "Webhooks", contract "Webhooks").

Envelope `{id, event, payload: {id, status, externalRef, ...}, at}`; the event goes to the
webhook URL of the key of the platform that created the order.
"""

from webhooks import catalog, services
from webhooks.models import Family

ORDER_EVENTS = catalog.ORDER_EVENTS


def order_event_emit(
    *,
    order_id,
    organization_id,
    platform: str,
    event: str,
    status: str,
    external_ref: str,
    extra: dict | None = None,
) -> None:
    """Emits `event` (one of ORDER_EVENTS) for an order, in the caller's transaction."""
    if event not in ORDER_EVENTS:
        raise ValueError(f"unknown partner event {event!r}")
    payload = {"id": str(order_id), "status": status, "externalRef": external_ref}
    if extra:
        payload.update(extra)
    services.event_emit(
        organization_id=organization_id,
        family=Family.PARTNER,
        event=event,
        payload=payload,
        platform=platform,
    )
