"""Writes of the webhook outbox: emitting events, redelivering, sweeping (decisions §7).

`event_emit` is called by other apps' services inside their own transaction: the event and its
delivery are committed with the change that caused them, or not at all; the Celery task is
queued once the transaction commits. A message lost at that moment (broker down) is found again
by `deliveries_sweep`, which the beat runs every few seconds.
"""

import logging
import time
import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone
from kombu.exceptions import KombuError
from redis.exceptions import RedisError

from tenants.models import ApiKey, Platform
from webhooks import tasks
from webhooks.models import Delivery, DeliveryStatus, Event, Family

logger = logging.getLogger(__name__)

#: a queued message not picked up after this long is presumed lost and queued again
REQUEUE_AFTER_SECONDS = 30
#: after a failed publish, how long this process leaves the broker alone
BROKER_BACKOFF_SECONDS = 10
#: deliveries queued per sweep run (the next run takes the rest)
SWEEP_BATCH_SIZE = 500


def _destination(*, organization_id, family: str, platform: str | None) -> ApiKey | None:
    """The active key whose `webhook_url` receives this event, if it has one (issue 4 §4)."""
    key_platform = Platform.ERP if family == Family.ERP else platform
    if not key_platform:
        return None
    return (
        ApiKey.objects.filter(
            organization_id=organization_id, platform=key_platform, is_active=True
        )
        .exclude(webhook_url="")
        .only("id", "webhook_url")
        .first()
    )


class _BrokerBreaker:
    """After a failed publish, this process skips publishing for a while: with the broker down,
    each attempt costs seconds of connection retries, and the sweep queues the deliveries
    again anyway."""

    def __init__(self) -> None:
        self.closed_until = 0.0

    def allows_publishing(self) -> bool:
        return time.monotonic() >= self.closed_until

    def trip(self) -> None:
        self.closed_until = time.monotonic() + BROKER_BACKOFF_SECONDS

    def reset(self) -> None:
        self.closed_until = 0.0


broker_breaker = _BrokerBreaker()


def delivery_enqueue(delivery_id) -> None:
    """Publishes the delivery task; a broker failure is logged, never raised (the sweep
    re-queues the delivery when its message is missing)."""
    if not broker_breaker.allows_publishing():
        logger.warning("webhook delivery %s not queued (broker unavailable)", delivery_id)
        return
    try:
        tasks.deliver.apply_async(args=[str(delivery_id)], retry=False)
    except (KombuError, RedisError, OSError):
        broker_breaker.trip()
        logger.warning("webhook delivery %s not queued (broker unavailable)", delivery_id)


def _enqueue_on_commit(delivery_id) -> None:
    transaction.on_commit(lambda: delivery_enqueue(delivery_id), robust=True)


def _new_partner_event_id() -> str:
    return f"evt_{uuid.uuid4().hex}"


def _insert_event(**fields) -> Event | None:
    """INSERT in a savepoint; None when a unique constraint refused it."""
    try:
        with transaction.atomic():
            return Event.objects.create(**fields)
    except IntegrityError:
        return None


def _replace_open_payload(*, organization_id, event_id: str, payload: dict) -> Event | None:
    """The unsent event with this id gets the newer payload; None when there is none."""
    event = (
        Event.objects.select_for_update()
        .filter(organization_id=organization_id, event_id=event_id, is_open=True)
        .first()
    )
    if event is None:
        return None
    event.payload = payload
    event.updated_at = timezone.now()
    event.save(update_fields=["payload", "updated_at"])
    return event


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
    """Records an event in the caller's transaction and queues its delivery on commit (§7).

    Partner events go to the `webhook_url` of the organization's active key of `platform`
    (the platform that created the order); ERP events to the organization's active `erp` key.
    With no URL configured the event is recorded without a delivery. `event_id` defaults to a
    fresh `evt_...` id; an explicit id names one event for ever (emitting it again returns the
    first one). With `coalesce=True`, while an event with this id is unsent, `payload`
    replaces its payload instead of adding a second event.
    """
    if family not in Family.values:
        raise ValueError(f"unknown webhook family {family!r}")
    with transaction.atomic():
        if coalesce:
            if event_id is None:
                raise ValueError("coalescing needs an explicit event_id")
            return _emit_coalesced(
                organization_id=organization_id,
                family=family,
                name=event,
                event_id=event_id,
                payload=payload,
                platform=platform,
            )
        fields = {
            "organization_id": organization_id,
            "family": family,
            "name": event,
            "payload": payload,
        }
        if event_id is None:
            # A fresh random id cannot collide: no savepoint needed.
            created = Event.objects.create(event_id=_new_partner_event_id(), **fields)
        else:
            created = _insert_event(event_id=event_id, **fields)
            if created is None:
                return Event.objects.get(
                    organization_id=organization_id, event_id=event_id, coalescible=False
                )
        _create_delivery(event=created, platform=platform)
        return created


def _emit_coalesced(
    *, organization_id, family: str, name: str, event_id: str, payload: dict, platform
) -> Event:
    for _ in range(3):
        replaced = _replace_open_payload(
            organization_id=organization_id, event_id=event_id, payload=payload
        )
        if replaced is not None:
            return replaced
        created = _insert_event(
            organization_id=organization_id,
            family=family,
            name=name,
            event_id=event_id,
            payload=payload,
            coalescible=True,
            is_open=True,
        )
        if created is not None:
            _create_delivery(event=created, platform=platform)
            return created
        # A concurrent transaction opened the same id between our UPDATE and INSERT: replace it.
    raise RuntimeError(f"could not record coalesced webhook event {event_id}")  # pragma: no cover


def _create_delivery(*, event: Event, platform: str | None) -> Delivery | None:
    api_key = _destination(
        organization_id=event.organization_id, family=event.family, platform=platform
    )
    if api_key is None:
        return None
    now = timezone.now()
    delivery = Delivery.objects.create(
        organization_id=event.organization_id,
        event=event,
        api_key=api_key,
        url=api_key.webhook_url,
        schedule_start=now,
        next_attempt_at=now,
        queued_at=now,
        created_at=now,
    )
    _enqueue_on_commit(delivery.id)
    return delivery


def retry_schedule() -> list[int]:
    """Seconds from the round's start to each attempt (WEBHOOK_RETRY_SCHEDULE)."""
    return list(settings.WEBHOOK_RETRY_SCHEDULE) or [0]


def attempt_due_at(*, schedule_start: datetime, attempt_in_round: int) -> datetime:
    """When attempt `attempt_in_round` (1-based) of a round started at `schedule_start` is due."""
    return schedule_start + timedelta(seconds=retry_schedule()[attempt_in_round - 1])


@transaction.atomic
def delivery_redeliver(*, delivery: Delivery) -> Delivery:
    """Starts a new round of attempts at once, on the full schedule (decisions §7, §12).

    The URL is taken again from the key, so a corrected `webhookUrl` is used. An attempt in
    flight keeps its record but no longer decides the delivery's state.
    """
    delivery = Delivery.objects.select_for_update().select_related("api_key").get(pk=delivery.pk)
    now = timezone.now()
    if delivery.api_key.is_active and delivery.api_key.webhook_url:
        delivery.url = delivery.api_key.webhook_url
    delivery.status = DeliveryStatus.PENDING
    delivery.round_start_attempts = delivery.attempts
    delivery.schedule_start = now
    delivery.next_attempt_at = now
    delivery.queued_at = now
    delivery.claim_token = None
    delivery.claimed_until = None
    delivery.delivered_at = None
    delivery.save(
        update_fields=[
            "url",
            "status",
            "round_start_attempts",
            "schedule_start",
            "next_attempt_at",
            "queued_at",
            "claim_token",
            "claimed_until",
            "delivered_at",
        ]
    )
    _enqueue_on_commit(delivery.id)
    return delivery


def deliveries_sweep(*, now: datetime | None = None, limit: int = SWEEP_BATCH_SIZE) -> int:
    """Queues every due pending delivery that has no live message or claim; returns how many.

    Safe with several sweepers: rows are taken with SKIP LOCKED and marked `queued_at` in the
    same transaction, so each due delivery is queued once per REQUEUE_AFTER_SECONDS.
    """
    now = now or timezone.now()
    stale = now - timedelta(seconds=REQUEUE_AFTER_SECONDS)
    with transaction.atomic():
        ids = list(
            Delivery.objects.select_for_update(skip_locked=True)
            .filter(status=DeliveryStatus.PENDING, next_attempt_at__lte=now)
            .filter(Q(queued_at__isnull=True) | Q(queued_at__lt=stale))
            .filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now))
            .order_by("next_attempt_at")
            .values_list("id", flat=True)[:limit]
        )
        if ids:
            Delivery.objects.filter(pk__in=ids).update(queued_at=now)
            for delivery_id in ids:
                _enqueue_on_commit(delivery_id)
    return len(ids)
