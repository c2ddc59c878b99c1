"""When delivery attempts are due, how many may be on the wire, and publishing the delivery task
(by name: the task module imports the sender, which imports this module)."""

import functools
import logging
import threading
import time
import weakref
from datetime import datetime, timedelta

from celery import bootsteps
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from kombu.exceptions import KombuError
from kombu.pools import producers
from redis.exceptions import RedisError

from delivery.celery import app as celery_app

DELIVER_TASK = "webhooks.deliver"  # the Celery name of webhooks.tasks.deliver
#: deliveries of one destination a message carries (a transaction's new ones) and a claim takes
DELIVERY_BATCH = 100
REQUEUE_AFTER_SECONDS = 30  # a queued message not picked up by then is presumed lost: queued again
BROKER_BACKOFF_SECONDS = 10  # after a failed publish, this process leaves the broker alone so long
#: seconds a claim outlives the longest HTTP call before another worker may take the attempt
CLAIM_MARGIN_SECONDS = 50
#: a claim holds an in-flight slot for the timeout plus this long (older: its worker died)
IN_FLIGHT_GRACE_SECONDS = 5

logger = logging.getLogger(__name__)


#: this process's running Celery worker, once worker_init fired (WebhooksConfig.ready)
_worker: dict = {}


def worker_attach(sender=None, **kwargs) -> None:
    _worker["running"] = sender


def in_flight_limit() -> int:
    """Attempts on the wire at once per destination, across workers: the setting, but at most the
    worker's threads less one, so a destination that hangs always leaves a thread to others."""
    limit = max(1, settings.WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION)
    worker = _worker.get("running")
    blueprint, threads = getattr(worker, "blueprint", None), getattr(worker, "concurrency", None)
    if blueprint is None or blueprint.state not in (None, bootsteps.RUN):
        return limit  # not in a worker, or it stopped
    return max(1, min(limit, threads - 1)) if isinstance(threads, int) and threads > 0 else limit


def in_flight_after(now: datetime) -> datetime:
    """Claims expiring after this may still be on the wire: they count against in_flight_limit()."""
    return now + timedelta(seconds=CLAIM_MARGIN_SECONDS - IN_FLIGHT_GRACE_SECONDS)


def claim_lease() -> timedelta:
    return timedelta(seconds=settings.WEBHOOK_TIMEOUT_SECONDS + CLAIM_MARGIN_SECONDS)


def unclaimed(now: datetime) -> Q:
    """Deliveries no one holds a live claim on (never claimed, or the lease lapsed)."""
    return Q(claimed_until__isnull=True) | Q(claimed_until__lt=now)


def countdown_horizon() -> timedelta:
    """Attempts due within this (a sweep interval and a second of jitter) are queued with a
    countdown to their due time."""
    seconds = float(settings.WEBHOOK_SWEEP_INTERVAL_SECONDS) + 1.0
    return timedelta(seconds=min(seconds, REQUEUE_AFTER_SECONDS / 2))


class _BrokerBreaker:
    """After a failed publish this process leaves the broker alone a while (the sweep requeues)."""

    closed_until = 0.0

    def trip(self) -> None:
        self.closed_until = time.monotonic() + BROKER_BACKOFF_SECONDS

    def reset(self) -> None:
        self.closed_until = 0.0


broker_breaker = _BrokerBreaker()


@functools.cache
def _publishing_connection(url: str):
    """A broker connection that tries to connect once: Celery's own retries for about 6 s with
    Redis down, which an order's request would wait through (tests/faults/test_redis_down.py)."""
    return celery_app.connection_for_write(url=url, transport_options={"max_retries": 0})


def delivery_enqueue(*delivery_ids, eta: datetime | None = None, key_id=None) -> None:
    """Publishes the delivery task of these deliveries (destination `key_id` when known; to run
    at `eta` when given); a broker failure is logged, never raised (the sweep queues them again)."""
    more = len(delivery_ids) - 1
    what = f"webhook delivery {delivery_ids[0]}" + (f" and {more} more" if more else "")
    if time.monotonic() < broker_breaker.closed_until:
        logger.info("%s left to the sweep (broker unavailable)", what)
        return
    options = {"eta": eta} if eta is not None and eta > timezone.now() else {}
    kwargs = {"key": str(key_id)} if key_id is not None else None
    try:
        connection = _publishing_connection(celery_app.conf.broker_url)
        with producers[connection].acquire(block=True, timeout=5) as producer:
            options.update(producer=producer, retry=False, ignore_result=True)
            celery_app.send_task(DELIVER_TASK, [str(i) for i in delivery_ids], kwargs, **options)
    except (KombuError, RedisError, OSError) as exc:
        broker_breaker.trip()
        logger.warning("%s not queued (broker unavailable: %s); left to the sweep", what, exc)


def delivery_enqueue_on_commit(delivery_id, *, eta: datetime | None = None) -> None:
    """Publishes the delivery task once the transaction commits (a rollback sends nothing)."""
    transaction.on_commit(functools.partial(delivery_enqueue, delivery_id, eta=eta), robust=True)


class _NewDeliveries(dict):
    """A transaction's new deliveries, {destination: ids}, published once it commits."""

    def publish(self) -> None:
        by_destination = list(self.items())
        self.clear()
        for key_id, ids in by_destination:
            for start in range(0, len(ids), DELIVERY_BATCH):
                delivery_enqueue(*ids[start : start + DELIVERY_BATCH], key_id=key_id)


_new_deliveries = threading.local()


def new_delivery_enqueue_on_commit(delivery_id, *, key_id) -> None:
    """As delivery_enqueue_on_commit, in one message with the transaction's other new deliveries
    to the same destination: a burst costs the worker a message per DELIVERY_BATCH deliveries."""
    # Each registers the group's publish (the first to run publishes all). The group lives as long
    # as those callbacks: a rolled-back transaction drops them, and with them its group.
    group = getattr(_new_deliveries, "group", lambda: None)()
    if group is None:
        group = _NewDeliveries()
        _new_deliveries.group = weakref.ref(group)
    group.setdefault(key_id, []).append(delivery_id)
    transaction.on_commit(group.publish, robust=True)
