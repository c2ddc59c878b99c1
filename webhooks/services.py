"""Writes of the webhook outbox: emitting events, redelivering, sweeping (contract "Webhooks").

`event_emit` is called by other apps' services inside their own transaction: the event and its
delivery are committed with the change that caused them, or not at all; the Celery task is
queued once the transaction commits. A message lost at that moment (broker down) is found again
by `deliveries_sweep`, which the beat runs every few seconds.
"""

import json
import logging
import threading
import time
import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone
from kombu import Connection
from kombu.exceptions import KombuError
from kombu.pools import producers
from redis.exceptions import RedisError

from delivery.celery import app as celery_app
from tenants.models import Platform
from webhooks import statements, tasks
from webhooks.models import Delivery, DeliveryAttempt, DeliveryStatus, Event, Family

logger = logging.getLogger(__name__)

#: a queued message not picked up after this long is presumed lost and queued again
REQUEUE_AFTER_SECONDS = 30
#: after a failed publish, how long this process leaves the broker alone
BROKER_BACKOFF_SECONDS = 10
#: deliveries queued per sweep run (the next run takes the rest)
SWEEP_BATCH_SIZE = 500
#: seconds a claim outlives the longest HTTP call before another worker may take the attempt
CLAIM_MARGIN_SECONDS = 50
#: a claim holds one of its destination's in-flight slots for the timeout plus this long; an
#: older one belongs to a worker that died mid-attempt (its lease runs on, its slot is free)
IN_FLIGHT_GRACE_SECONDS = 5


def claim_lease() -> timedelta:
    return timedelta(seconds=settings.WEBHOOK_TIMEOUT_SECONDS + CLAIM_MARGIN_SECONDS)


def in_flight_after(now: datetime) -> datetime:
    """Claims that expire after this were made less than the timeout + grace ago: attempts that
    may still be on the wire, counted against WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION."""
    return now + timedelta(seconds=CLAIM_MARGIN_SECONDS - IN_FLIGHT_GRACE_SECONDS)


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


_publishing_connections: dict[str, Connection] = {}
_publishing_lock = threading.Lock()


def _publishing_connection() -> Connection:
    """The broker connection the outbox publishes through: it tries to connect once.

    Celery's own connection retries for its connect timeout (about 6 s with Redis refusing),
    which an order's request would wait through (tests/faults/test_redis_down.py). Only
    publishing gets this: the worker's consumer keeps Celery's reconnecting (it crashes with
    `max_retries: 0` in the global transport options).
    """
    url = celery_app.conf.broker_url
    with _publishing_lock:
        connection = _publishing_connections.get(url)
        if connection is None:
            connection = celery_app.connection_for_write(
                url=url, transport_options={"max_retries": 0}
            )
            _publishing_connections[url] = connection
        return connection


def countdown_horizon() -> timedelta:
    """Attempts due within this are queued with a countdown to their due time (by the failed
    attempt before them, or by the sweep looking this far ahead); later ones wait for a later
    sweep. One sweep interval plus a second for the beat's jitter, so every attempt is queued
    before it is due, whatever the schedule (docs/contract.md "Webhooks": within about a
    second). Short, so no countdown outlives Redis's visibility timeout (no long broker
    countdowns, same section), and shorter than REQUEUE_AFTER_SECONDS, so a queued message is
    never presumed lost before it is due."""
    seconds = float(settings.WEBHOOK_SWEEP_INTERVAL_SECONDS) + 1.0
    return timedelta(seconds=min(seconds, REQUEUE_AFTER_SECONDS / 2))


def delivery_enqueue(delivery_id, *, eta: datetime | None = None) -> None:
    """Publishes the delivery task (to run at `eta` when given, a moment at most
    countdown_horizon() ahead); a broker failure is logged, never raised (the sweep re-queues
    the delivery when its message is missing)."""
    if not broker_breaker.allows_publishing():
        logger.info("webhook delivery %s left to the sweep (broker unavailable)", delivery_id)
        return
    options = {"eta": eta} if eta is not None and eta > timezone.now() else {}
    try:
        with producers[_publishing_connection()].acquire(block=True, timeout=5) as producer:
            tasks.deliver.apply_async(
                args=[str(delivery_id)], retry=False, producer=producer, **options
            )
    except (KombuError, RedisError, OSError) as exc:
        broker_breaker.trip()
        logger.warning(
            "webhook delivery %s not queued (broker unavailable: %s); the sweep will queue it, "
            "and publishing pauses for %s s",
            delivery_id,
            exc,
            BROKER_BACKOFF_SECONDS,
        )


def delivery_enqueue_on_commit(delivery_id, *, eta: datetime | None = None) -> None:
    """Publishes the delivery task once the current transaction commits (at once outside one)."""
    transaction.on_commit(lambda: delivery_enqueue(delivery_id, eta=eta), robust=True)


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

    Two or three statements, no savepoint: it runs inside hot transactions (docs/performance.md).
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
    with transaction.atomic(savepoint=False):
        for _ in range(3):
            if coalesce:
                replaced = statements.open_event_replace(
                    organization_id=organization_id, event_id=event_id, payload=body, now=now
                )
                if replaced is not None:
                    return replaced
            event_uuid = uuid.uuid4()
            if statements.event_insert(event_uuid=event_uuid, now=now, **fields):
                _deliver_to_destination(
                    event_uuid=event_uuid,
                    organization_id=organization_id,
                    family=family,
                    name=event,
                    platform=platform,
                    now=now,
                )
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


def _deliver_to_destination(
    *, event_uuid, organization_id, family: str, name: str, platform: str | None, now
) -> None:
    key_platform = Platform.ERP if family == Family.ERP else platform
    if not key_platform:
        return
    delivery_id = statements.delivery_insert(
        event_uuid=event_uuid,
        organization_id=organization_id,
        platform=key_platform,
        name=name,
        now=now,
    )
    if delivery_id is not None:
        delivery_enqueue_on_commit(delivery_id)


def retry_schedule() -> list[int]:
    """Seconds from the round's start to each attempt (WEBHOOK_RETRY_SCHEDULE)."""
    return list(settings.WEBHOOK_RETRY_SCHEDULE) or [0]


def attempt_due_at(*, schedule_start: datetime, attempt_in_round: int) -> datetime:
    """When attempt `attempt_in_round` (1-based) of a round started at `schedule_start` is due."""
    return schedule_start + timedelta(seconds=retry_schedule()[attempt_in_round - 1])


@transaction.atomic
def delivery_redeliver(*, delivery: Delivery) -> Delivery:
    """Starts a new round of attempts at once, on the full schedule (contract "Webhooks").

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
    delivery_enqueue_on_commit(delivery.id)
    return delivery


def deliveries_recover(
    *,
    organization_id,
    since: datetime | None = None,
    until: datetime | None = None,
    api_key_id=None,
    delivery_ids=None,
) -> int:
    """Queues again every `failed` delivery of the organization whose last attempt was made in
    [since, until) (optionally of one key, or among `delivery_ids`); returns how many.

    Each starts a new round of attempts, as a redelivery does (to the key's current URL), oldest
    event first: per destination one is sent at once and each attempt that ends hands its slot
    to the next in line, so a receiver that was down gets the events back in the order they
    happened (strictly so with one attempt in flight per destination). Each delivery is
    recovered once, even by concurrent calls (docs/contract.md "Management API").
    """
    deliveries = Delivery.objects.filter(
        organization_id=organization_id, status=DeliveryStatus.FAILED
    )
    if api_key_id is not None:
        deliveries = deliveries.filter(api_key_id=api_key_id)
    if delivery_ids is not None:
        deliveries = deliveries.filter(pk__in=list(delivery_ids))
    if since is not None or until is not None:
        last_attempt_at = Subquery(
            DeliveryAttempt.objects.filter(delivery=OuterRef("pk"))
            .order_by("-number", "-id")
            .values("started_at")[:1]
        )
        deliveries = deliveries.annotate(ended_at=last_attempt_at)
        if since is not None:
            deliveries = deliveries.filter(ended_at__gte=since)
        if until is not None:
            deliveries = deliveries.filter(ended_at__lt=until)
    now = timezone.now()
    with transaction.atomic():
        rows = list(
            deliveries.select_for_update(of=("self",))
            .order_by("event__created_at", "created_at", "id")
            .values_list("id", "api_key_id")
        )
        if not rows:
            return 0
        first_per_destination: dict = {}
        for delivery_id, key_id in rows:
            first_per_destination.setdefault(key_id, delivery_id)
        first = list(first_per_destination.values())
        with connection.cursor() as cursor:
            cursor.execute(
                statements.RECOVER,
                {"now": now, "ids": [row[0] for row in rows], "first": first},
            )
            recovered = {row[0] for row in cursor.fetchall()}
        for delivery_id in first:
            if delivery_id in recovered:
                delivery_enqueue_on_commit(delivery_id)
    logger.info("recovered %s failed webhook deliveries of %s", len(recovered), organization_id)
    return len(recovered)


def deliveries_sweep(*, now: datetime | None = None, limit: int = SWEEP_BATCH_SIZE) -> int:
    """Queues every pending delivery due by now + countdown_horizon() that has no live message
    or claim, to run at its due time; returns how many.

    Looking ahead is what keeps attempts on time: a retry due between two runs is queued by
    the run before with a countdown, instead of waiting for the run after. Safe with several
    sweepers: rows are taken with SKIP LOCKED and marked `queued_at` in the same transaction,
    so each due delivery is queued once per REQUEUE_AFTER_SECONDS.
    """
    now = now or timezone.now()
    stale = now - timedelta(seconds=REQUEUE_AFTER_SECONDS)
    # A destination at its in-flight limit hands its slots over as its attempts end (RECORD):
    # queuing its parked deliveries now would only park them again.
    in_flight = (
        Delivery.objects.filter(
            api_key_id=OuterRef("api_key_id"),
            status=DeliveryStatus.PENDING,
            claimed_until__gt=in_flight_after(now),
        )
        .order_by()
        .values("api_key_id")
        .annotate(n=Count("*"))
        .values("n")
    )
    with transaction.atomic():
        due = dict(
            Delivery.objects.select_for_update(skip_locked=True)
            .filter(status=DeliveryStatus.PENDING, next_attempt_at__lte=now + countdown_horizon())
            .filter(Q(queued_at__isnull=True) | Q(queued_at__lt=stale))
            .filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now))
            .annotate(in_flight=Coalesce(Subquery(in_flight), 0))
            .filter(in_flight__lt=settings.WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION)
            .order_by("next_attempt_at")
            .values_list("id", "next_attempt_at")[:limit]
        )
        if due:
            Delivery.objects.filter(pk__in=due).update(queued_at=now)
            for delivery_id, due_at in due.items():
                delivery_enqueue_on_commit(delivery_id, eta=due_at)
    return len(due)
