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

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from datetime import date as date_type
from typing import Any

from django.db import transaction
from django.utils import timezone
from rest_framework.fields import DateTimeField

from delivery.ids import new_id
from tenants import selectors as tenant_selectors
from tenants.models import ApiKey, Platform
from webhooks import catalog, queueing
from webhooks.models import Delivery, Event, Family

ORDER_EVENTS = catalog.ORDER_EVENTS
POLYGON_UPDATED = catalog.ERP_POLYGON_UPDATED
SLOTS_UPDATED = catalog.ERP_SLOTS_UPDATED
SLOT_BOOKED = catalog.ERP_SLOT_BOOKED


def _new_partner_event_id() -> str:
    # time-ordered like the primary keys: a new id lands on the right of the (organization,
    # event_id) unique index, not on a random leaf of it (delivery/ids.py)
    return f"evt_{new_id().hex}"


def event_emit(
    *,
    organization_id,
    family: str,
    event: str,
    payload: dict,
    platform: str | None = None,
    event_id: str | None = None,
    coalesce: bool = False,
    id_is_new: bool = False,
) -> Event:
    """Records an event in the caller's transaction and queues its delivery on commit (contract
    "Webhooks").

    Partner events go to the `webhook_url` of the organization's active key of `platform`
    (the platform that created the order); ERP events to the organization's active `erp` key.
    With no URL configured, or a key whose `webhook_events` does not list the event, the event
    is recorded without a delivery. `event_id` defaults to a fresh `evt_...` id; an explicit id
    names one event for ever (emitting it again returns the first one, unchanged). With
    `coalesce=True`, while an event with this id is unsent, `payload` replaces its payload
    instead of adding a second event. `id_is_new` says no event can have `event_id` yet (it
    names a row this transaction inserted): the check for an earlier one is skipped.

    No savepoint: it runs inside hot transactions (an order create, a slot booking), so a
    taken id is an INSERT ... ON CONFLICT DO NOTHING, not a caught IntegrityError.
    """
    if family not in Family.values:
        raise ValueError(f"unknown webhook family {family!r}")
    if coalesce and event_id is None:
        raise ValueError("coalescing needs an explicit event_id")
    now = timezone.now()
    with transaction.atomic(savepoint=False):
        for _ in range(3):
            if coalesce and _same_id(organization_id, event_id, is_open=True).update(
                payload=payload, updated_at=now
            ):
                return _same_id(organization_id, event_id, is_open=True).get()
            recorded = Event(
                organization_id=organization_id,
                family=family,
                name=event,
                event_id=event_id or _new_partner_event_id(),
                payload=payload,
                coalescible=coalesce,
                is_open=coalesce,
                created_at=now,
                updated_at=now,
            )
            fresh = event_id is None or id_is_new
            Event.objects.bulk_create([recorded], ignore_conflicts=not fresh)
            if fresh or Event.objects.filter(pk=recorded.pk).exists():
                _delivery_create(recorded, platform=platform)
                return recorded
            if not coalesce:
                # This id was emitted before: that event stands (emitting is idempotent).
                return _same_id(organization_id, event_id, coalescible=False).get()
            # A concurrent transaction opened the same id between our UPDATE and INSERT: its
            # row is committed now (the INSERT waited for it), so the UPDATE will find it.
    raise RuntimeError(f"could not record coalesced webhook event {event_id}")  # pragma: no cover


def _same_id(organization_id, event_id: str, **state):
    return Event.objects.filter(organization_id=organization_id, event_id=event_id, **state)


def _delivery_create(event: Event, *, platform: str | None) -> None:
    """The event's delivery to the webhook URL of the organization's active key of `platform`
    (ERP events: the `erp` key), due now and queued on commit; none when that key has no URL
    or does not take this event (contract "Webhooks", and "Couriers" for opt-in events)."""
    destination = tenant_selectors.webhook_destination(
        organization_id=event.organization_id, platform=_key_platform(event.family, platform)
    )
    key_id, url, events = destination or (None, "", None)
    if not _takes(event.name, url, events):
        return
    now = event.created_at
    delivery = Delivery(
        organization_id=event.organization_id,
        event=event,
        api_key_id=key_id,
        url=url,
        schedule_start=now,
        next_attempt_at=now,
        queued_at=now,
        created_at=now,
    )
    Delivery.objects.bulk_create([delivery])
    queueing.new_delivery_enqueue_on_commit(delivery.id, key_id=key_id)


def _key_platform(family: str, platform: str | None) -> str | None:
    """The platform of the key an event goes to: the order's, or `erp` for ERP events."""
    return Platform.ERP if family == Family.ERP else platform


def _takes(name: str, url: str, events: list[str] | None) -> bool:
    """Whether a key with this webhook URL and `webhook_events` gets event `name`: an opt-in
    event (`order.eta_updated`) goes only to keys that name it, NULL (every event of the
    interface) does not take it."""
    takes = name in events if events is not None else name not in catalog.OPT_IN_EVENTS
    return bool(url) and takes


@dataclass(frozen=True)
class EventToEmit:
    """One event for `events_emit`, as `event_emit` takes it (with a fresh id)."""

    organization_id: Any
    family: str
    event: str
    payload: dict
    platform: str | None = None


#: rows per INSERT of a bulk emit (PostgreSQL takes at most 65,535 parameters)
_BULK_BATCH = 1000


def events_emit(*, emits: list[EventToEmit]) -> list[Event]:
    """`event_emit` for many events with fresh ids (no `event_id`, no coalescing) in the
    caller's transaction (a plan's commit): the events in one INSERT (per thousand), their keys
    in one query, their deliveries in one INSERT (per thousand), whatever their number.

    The events are timed a microsecond apart in list order, the last now, so a destination's
    deliveries are due, and sent, in the order emitted (oldest first). They go out as every
    transaction's new deliveries do: one message per destination and DELIVERY_BATCH ids
    (queueing.new_delivery_enqueue_on_commit), so a thousand cost the worker ten messages.
    """
    for emit in emits:
        if emit.family not in Family.values:
            raise ValueError(f"unknown webhook family {emit.family!r}")
    if not emits:
        return []
    now = timezone.now()
    recorded = []
    for n, emit in enumerate(emits, start=1):
        at = now - timedelta(microseconds=len(emits) - n)
        recorded.append(
            Event(
                organization_id=emit.organization_id,
                family=emit.family,
                name=emit.event,
                event_id=_new_partner_event_id(),
                payload=emit.payload,
                created_at=at,
                updated_at=at,
            )
        )
    with transaction.atomic(savepoint=False):
        Event.objects.bulk_create(recorded, batch_size=_BULK_BATCH)
        deliveries = _deliveries_make(recorded, emits)
        Delivery.objects.bulk_create(deliveries, batch_size=_BULK_BATCH)
    for delivery in deliveries:
        queueing.new_delivery_enqueue_on_commit(delivery.id, key_id=delivery.api_key_id)
    return recorded


def _deliveries_make(recorded: list[Event], emits: list[EventToEmit]) -> list[Delivery]:
    """The deliveries of `recorded` (unsaved), by the rules of `_delivery_create`, their keys
    read in one query."""
    wanted = {
        (str(emit.organization_id), _key_platform(emit.family, emit.platform)) for emit in emits
    }
    keys = {
        (str(organization_id), platform): (key_id, url, events)
        for organization_id, platform, key_id, url, events in ApiKey.objects.filter(
            organization_id__in={organization_id for organization_id, _ in wanted},
            platform__in={platform for _, platform in wanted},
            is_active=True,
        ).values_list("organization_id", "platform", "pk", "webhook_url", "webhook_events")
    }
    deliveries: list[Delivery] = []
    for event, emit in zip(recorded, emits, strict=True):
        key = (str(emit.organization_id), _key_platform(emit.family, emit.platform))
        key_id, url, events = keys.get(key, (None, "", None))
        if not _takes(event.name, url, events):
            continue
        at = event.created_at
        deliveries.append(
            Delivery(
                organization_id=event.organization_id,
                event=event,
                api_key_id=key_id,
                url=url,
                schedule_start=at,
                next_attempt_at=at,
                queued_at=at,
                created_at=at,
            )
        )
    return deliveries


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
    event_emit(
        organization_id=organization_id,
        family=Family.PARTNER,
        event=event,
        payload=_order_payload(event, order_id, status, external_ref, extra),
        platform=platform,
    )


@dataclass(frozen=True)
class OrderEvent:
    """One order's partner event for `order_events_emit`, as `order_event_emit` takes it."""

    order_id: Any
    organization_id: Any
    platform: str
    event: str
    status: str
    external_ref: str
    extra: dict | None = None


def order_events_emit(*, events: list[OrderEvent]) -> None:
    """`order_event_emit` for many orders' events at once (a plan's commit), in the caller's
    transaction and in list order: the same payloads, recorded by `events_emit`."""
    events_emit(
        emits=[
            EventToEmit(
                organization_id=item.organization_id,
                family=Family.PARTNER,
                event=item.event,
                payload=_order_payload(
                    item.event, item.order_id, item.status, item.external_ref, item.extra
                ),
                platform=item.platform,
            )
            for item in events
        ]
    )


def _order_payload(event: str, order_id, status: str, external_ref: str, extra) -> dict:
    if event not in ORDER_EVENTS and event not in catalog.OPT_IN_EVENTS:
        raise ValueError(f"unknown partner event {event!r}")
    payload = {"id": str(order_id), "status": status, "externalRef": external_ref}
    if extra:
        payload.update(extra)
    return payload


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
    """`erp.slot.booked` (id `erp.slot.booked:<order_id>`) when an order created in the caller's
    transaction books its slot (so no event has that id yet)."""
    event_emit(
        organization_id=organization_id,
        family=Family.ERP,
        event=SLOT_BOOKED,
        event_id=f"{SLOT_BOOKED}:{order_id}",
        id_is_new=True,
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
