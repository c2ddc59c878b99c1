"""Emitting webhook events, both families (contract "Webhooks").

`event_emit` is called by other apps' services inside their own transaction: the event and its
delivery are committed with the change that caused them, or not at all; the Celery task is
queued once the transaction commits. A message lost at that moment (broker down) is found again
by `services.deliveries_sweep`, which the beat runs every few seconds.

Partner family: envelope `{id, event, payload: {id, status, externalRef, ...}, at}`; the event
goes to the webhook URL of the key of the platform that created the order.

ERP family: called by the zones and slots services inside their transactions.
`erp.polygon.updated` and `erp.slots.updated` carry hour-bucketed ids (UTC) and coalesce while
unsent; both carry the `updatedAt` of the change, which tells a newer snapshot under the same
id from an older one.
"""

import json
import uuid
from datetime import UTC, datetime
from datetime import date as date_type

from django.db import transaction
from django.utils import timezone
from rest_framework.fields import DateTimeField

from tenants.models import Platform
from webhooks import catalog, queueing, statements
from webhooks.models import Event, Family

ORDER_EVENTS = catalog.ORDER_EVENTS
POLYGON_UPDATED = catalog.ERP_POLYGON_UPDATED
SLOTS_UPDATED = catalog.ERP_SLOTS_UPDATED
SLOT_BOOKED = catalog.ERP_SLOT_BOOKED


def _new_partner_event_id() -> str:
    return f"evt_{uuid.uuid4().hex}"


def event_emit(
    *,
    organization_id,
    family: str,
    event: str,
    payload: dict,
    platform: str | None = None,
    event_id: str | None = None,
    coalesce: bool = False,
) -> Event:
    """Records an event in the caller's transaction and queues its delivery on commit (contract
    "Webhooks").

    Partner events go to the `webhook_url` of the organization's active key of `platform`
    (the platform that created the order); ERP events to the organization's active `erp` key.
    With no URL configured the event is recorded without a delivery. `event_id` defaults to a
    fresh `evt_...` id; an explicit id names one event for ever (emitting it again returns the
    first one, unchanged). With `coalesce=True`, while an event with this id is unsent,
    `payload` replaces its payload instead of adding a second event.

    One statement (two when coalescing), no savepoint: it runs inside hot transactions
    (docs/performance.md); the deliveries of one transaction share one message.
    """
    if family not in Family.values:
        raise ValueError(f"unknown webhook family {family!r}")
    if coalesce and event_id is None:
        raise ValueError("coalescing needs an explicit event_id")
    now = timezone.now()
    body = statements.payload_json(payload)
    fields = {
        "organization_id": organization_id,
        "family": family,
        "name": event,
        "event_id": event_id or _new_partner_event_id(),
        "payload": body,
        "coalescible": coalesce,
    }
    # Partner events go to the key of the order's platform, ERP events to the `erp` key.
    key_platform = Platform.ERP if family == Family.ERP else platform
    with transaction.atomic(savepoint=False):
        for _ in range(3):
            if coalesce:
                replaced = statements.open_event_replace(
                    organization_id=organization_id, event_id=event_id, payload=body, now=now
                )
                if replaced is not None:
                    return replaced
            event_uuid = uuid.uuid4()
            created, delivery_id = statements.event_insert(
                event_uuid=event_uuid, now=now, platform=key_platform, **fields
            )
            if created:
                if delivery_id is not None:
                    queueing.delivery_enqueue_on_commit(delivery_id)
                return Event(
                    id=event_uuid,
                    **{**fields, "payload": json.loads(body)},
                    is_open=coalesce,
                    created_at=now,
                    updated_at=now,
                )
            if not coalesce:
                # This id was emitted before: that event stands (emitting is idempotent).
                return Event.objects.get(
                    organization_id=organization_id, event_id=event_id, coalescible=False
                )
            # A concurrent transaction opened the same id between our UPDATE and INSERT: its
            # row is committed now (the INSERT waited for it), so the UPDATE will find it.
    raise RuntimeError(f"could not record coalesced webhook event {event_id}")  # pragma: no cover


# Partner family


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
    """Emits `event` (one of ORDER_EVENTS, or an opt-in order event such as
    `order.eta_updated`) for an order, in the caller's transaction."""
    if event not in ORDER_EVENTS and event not in catalog.OPT_IN_EVENTS:
        raise ValueError(f"unknown partner event {event!r}")
    payload = {"id": str(order_id), "status": status, "externalRef": external_ref}
    if extra:
        payload.update(extra)
    event_emit(
        organization_id=organization_id,
        family=Family.PARTNER,
        event=event,
        payload=payload,
        platform=platform,
    )


# ERP family

_timestamp = DateTimeField()


def hour_bucket(moment: datetime | None = None) -> str:
    """`YYYY-MM-DDTHH` of `moment` (default now) in UTC."""
    moment = (moment or timezone.now()).astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H")


def hour_bucket_event_id(event: str, zone_id, moment: datetime | None = None) -> str:
    return f"{event}:{zone_id}:{hour_bucket(moment)}"


def _iso(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return _timestamp.to_representation(value)
    if isinstance(value, date_type):
        return value.isoformat()
    return str(value)


def polygon_updated_emit(*, zone, deleted: bool = False) -> None:
    """`erp.polygon.updated` for a zone created, updated or (with `deleted=True`) deleted."""
    payload = {
        "polygon_id": str(zone.id),
        "polygon_name": zone.name,
        "geodata": zone.geodata,
        "enabled": zone.enabled,
        "zone_purpose": zone.purpose,
        "updatedAt": _iso(getattr(zone, "updated_at", None) or timezone.now()),
    }
    if deleted:
        payload["deleted"] = True
    event_emit(
        organization_id=zone.organization_id,
        family=Family.ERP,
        event=POLYGON_UPDATED,
        event_id=hour_bucket_event_id(POLYGON_UPDATED, zone.id),
        payload=payload,
        coalesce=True,
    )


def slots_updated_emit(
    *, zone, slots: list[dict], availability: list[dict], updated_at: datetime | None = None
) -> None:
    """`erp.slots.updated`: the zone's templates (`slots`) and `availability` as built by the
    slots service (items as in the contract's table), and `updatedAt`, the moment of the
    change (default now): a newer change in the same hour goes out under the same id with a
    later `updatedAt`, so receivers apply these snapshots when newer (docs/contract.md
    "Webhooks")."""
    event_emit(
        organization_id=zone.organization_id,
        family=Family.ERP,
        event=SLOTS_UPDATED,
        event_id=hour_bucket_event_id(SLOTS_UPDATED, zone.id),
        payload={
            "polygon_id": str(zone.id),
            "polygon_name": zone.name,
            "zone_purpose": zone.purpose,
            "geodata": zone.geodata,
            "slots": slots,
            "availability": availability,
            "updatedAt": _iso(updated_at or timezone.now()),
        },
        coalesce=True,
    )


def slot_booked_emit(
    *,
    organization_id,
    zone,
    order_id,
    template_id,
    date,
    booked: int,
    capacity: int,
    available: int,
    updated_at,
) -> None:
    """`erp.slot.booked` (id `erp.slot.booked:<order_id>`) when an order books a slot."""
    event_emit(
        organization_id=organization_id,
        family=Family.ERP,
        event=SLOT_BOOKED,
        event_id=f"{SLOT_BOOKED}:{order_id}",
        payload={
            "polygon_id": str(zone.id),
            "polygon_name": zone.name,
            "order_id": str(order_id),
            "template_id": str(template_id),
            "date": _iso(date),
            "booked": booked,
            "capacity": capacity,
            "available": available,
            "updatedAt": _iso(updated_at),
        },
    )
