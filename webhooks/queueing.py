"""When delivery attempts are due, how many may be on the wire, and publishing the delivery task
(docs/webhooks.md "For operators"). The task is published by name: the task module imports the
sender, which imports this module."""

import logging
import threading
import time
import weakref
from datetime import datetime, timedelta
from functools import partial

from celery import bootsteps
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from kombu.exceptions import KombuError
from kombu.pools import producers
from redis.exceptions import RedisError

from delivery.celery import app as celery_app

#: the Celery name of the delivery task (webhooks.tasks.deliver)
DELIVER_TASK = "webhooks.deliver"
#: new deliveries to one destination a message carries at most (a transaction's come together)
MESSAGE_DELIVERIES = 100
#: a queued message not picked up after this long is presumed lost and queued again
REQUEUE_AFTER_SECONDS = 30
#: after a failed publish, how long this process leaves the broker alone
BROKER_BACKOFF_SECONDS = 10
#: seconds a claim outlives the longest HTTP call before another worker may take the attempt
CLAIM_MARGIN_SECONDS = 50
#: a claim holds one of its destination's in-flight slots for the timeout plus this long; an
#: older one belongs to a worker that died mid-attempt (its lease runs on, its slot is free)
IN_FLIGHT_GRACE_SECONDS = 5

logger = logging.getLogger(__name__)


class _WorkerThreads:
    """The running Celery worker of this process (worker_init and worker_shutdown connect it in
    WebhooksConfig.ready)."""

    worker = None

    def attach(self, sender=None, **kwargs) -> None:
        self.worker = sender

    def detach(self, sender=None, **kwargs) -> None:
        if sender is self.worker:
            self.worker = None

    def count(self) -> int | None:
        """Its threads (None outside a worker, or once it stopped)."""
        blueprint = getattr(self.worker, "blueprint", None)
        if blueprint is None or blueprint.state not in (None, bootsteps.RUN):
            return None
        concurrency = getattr(self.worker, "concurrency", None)
        return concurrency if isinstance(concurrency, int) and concurrency > 0 else None


worker_threads = _WorkerThreads()


def in_flight_limit() -> int:
    """Attempts on the wire at once per destination, across all workers: the setting, but in a
    worker at most its threads less one, so a destination that hangs always leaves a thread to
    every other destination's first attempts."""
    limit = max(1, settings.WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION)
    threads = worker_threads.count()
    return limit if threads is None else max(1, min(limit, threads - 1))


def claim_lease() -> timedelta:
    return timedelta(seconds=settings.WEBHOOK_TIMEOUT_SECONDS + CLAIM_MARGIN_SECONDS)


def in_flight_after(now: datetime) -> datetime:
    """Claims that expire after this were made less than the timeout + grace ago: attempts that
    may still be on the wire, counted against in_flight_limit()."""
    return now + timedelta(seconds=CLAIM_MARGIN_SECONDS - IN_FLIGHT_GRACE_SECONDS)


def unclaimed(now: datetime) -> Q:
    """Deliveries no one holds a live claim on (never claimed, or its lease lapsed)."""
    return Q(claimed_until__isnull=True) | Q(claimed_until__lt=now)


def countdown_horizon() -> timedelta:
    """Attempts due within this are queued with a countdown to their due time: one sweep
    interval plus a second of the beat's jitter, so each runs within about a second of it."""
    seconds = float(settings.WEBHOOK_SWEEP_INTERVAL_SECONDS) + 1.0
    return timedelta(seconds=min(seconds, REQUEUE_AFTER_SECONDS / 2))


def retry_schedule() -> list[int]:
    """Seconds from the round's start to each attempt (WEBHOOK_RETRY_SCHEDULE)."""
    return list(settings.WEBHOOK_RETRY_SCHEDULE) or [0]


class _BrokerBreaker:
    """After a failed publish this process leaves the broker alone for a while: the sweep queues
    the deliveries again anyway."""

    closed_until = 0.0

    def allows_publishing(self) -> bool:
        return time.monotonic() >= self.closed_until

    def trip(self) -> None:
        self.closed_until = time.monotonic() + BROKER_BACKOFF_SECONDS

    def reset(self) -> None:
        self.closed_until = 0.0


broker_breaker = _BrokerBreaker()
_publishing_connections: dict = {}
_publishing_lock = threading.Lock()


def _publishing_connection():
    """A broker connection that tries to connect once: Celery's own retries for about 6 s with
    Redis down, which an order's request would wait through (tests/faults/test_redis_down.py)."""
    url = celery_app.conf.broker_url
    with _publishing_lock:
        if url not in _publishing_connections:
            _publishing_connections[url] = celery_app.connection_for_write(
                url=url, transport_options={"max_retries": 0}
            )
        return _publishing_connections[url]


def delivery_enqueue(*delivery_ids, eta: datetime | None = None) -> None:
    """Publishes the delivery task of these deliveries (to run at `eta` when given); a broker
    failure is logged, never raised (the sweep queues the deliveries again)."""
    what = f"webhook delivery {delivery_ids[0]}" + (
        f" and {len(delivery_ids) - 1} more" if len(delivery_ids) > 1 else ""
    )
    if not broker_breaker.allows_publishing():
        logger.info("%s left to the sweep (broker unavailable)", what)
        return
    options = {"eta": eta} if eta is not None and eta > timezone.now() else {}
    try:
        with producers[_publishing_connection()].acquire(block=True, timeout=5) as producer:
            options.update(producer=producer, retry=False, ignore_result=True)
            celery_app.send_task(DELIVER_TASK, args=[str(i) for i in delivery_ids], **options)
    except (KombuError, RedisError, OSError) as exc:
        broker_breaker.trip()
        logger.warning("%s not queued (broker unavailable: %s); left to the sweep", what, exc)


def delivery_enqueue_on_commit(delivery_id, *, eta: datetime | None = None) -> None:
    """Publishes the delivery task once the current transaction commits (at once outside one):
    a rolled-back change sends nothing."""
    transaction.on_commit(partial(delivery_enqueue, delivery_id, eta=eta), robust=True)


class _NewDeliveries:
    """New deliveries of one transaction by destination, published once it commits."""

    def __init__(self) -> None:
        self.ids: dict = {}

    def publish(self) -> None:
        by_destination, self.ids = self.ids, {}
        for ids in by_destination.values():
            for start in range(0, len(ids), MESSAGE_DELIVERIES):
                delivery_enqueue(*ids[start : start + MESSAGE_DELIVERIES])


_new_deliveries = threading.local()


def new_delivery_enqueue_on_commit(delivery_id, *, key_id) -> None:
    """As delivery_enqueue_on_commit, in one message with the transaction's other new deliveries
    to the same destination: a burst costs the worker a message per MESSAGE_DELIVERIES."""
    # Each delivery registers its group's publish (the first to run publishes them all). The
    # group lives only as long as those callbacks: a rolled-back transaction drops them and with
    # them its group (ids of a rolled-back savepoint go out with the rest and find no delivery).
    group = getattr(_new_deliveries, "group", lambda: None)()
    if group is None:
        group = _NewDeliveries()
        _new_deliveries.group = weakref.ref(group)
    group.ids.setdefault(key_id, []).append(delivery_id)
    transaction.on_commit(group.publish, robust=True)
