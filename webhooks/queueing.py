"""When delivery attempts are due and how they are queued (contract "Webhooks").

Shared by the outbox's writes (services, events) and by the sender: the schedule of attempts,
the claim's lease, and publishing the delivery task, by name, through a connection that does
not retry (the task module imports the sender, so nothing here imports the task module).
"""

import logging
import threading
import time
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from kombu import Connection
from kombu.exceptions import KombuError
from kombu.pools import producers
from redis.exceptions import RedisError

from delivery.celery import app as celery_app

#: the Celery name of the task that makes a delivery's due attempt (webhooks.tasks.deliver)
DELIVER_TASK = "webhooks.deliver"

logger = logging.getLogger(__name__)

#: a queued message not picked up after this long is presumed lost and queued again
REQUEUE_AFTER_SECONDS = 30
#: after a failed publish, how long this process leaves the broker alone
BROKER_BACKOFF_SECONDS = 10
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
            # By name, as Task.apply_async would send it (its options: ignore_result): the task
            # module imports the sender, which queues through here.
            celery_app.send_task(
                DELIVER_TASK,
                args=[str(delivery_id)],
                retry=False,
                producer=producer,
                ignore_result=True,
                **options,
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


def retry_schedule() -> list[int]:
    """Seconds from the round's start to each attempt (WEBHOOK_RETRY_SCHEDULE)."""
    return list(settings.WEBHOOK_RETRY_SCHEDULE) or [0]


def attempt_due_at(*, schedule_start: datetime, attempt_in_round: int) -> datetime:
    """When attempt `attempt_in_round` (1-based) of a round started at `schedule_start` is due."""
    return schedule_start + timedelta(seconds=retry_schedule()[attempt_in_round - 1])
