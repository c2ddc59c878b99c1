"""When delivery attempts are due and how they are queued (contract "Webhooks").

Shared by the outbox's writes (services, events) and by the sender: the schedule of attempts,
the claim's lease, and publishing the delivery tasks, by name, through a connection that does
not retry (the task module imports the sender, so nothing here imports the task module).

A transaction that creates deliveries wakes the sender up once it commits: it raises a flag in
the broker's Redis, and only the commit that raised it publishes `webhooks.deliver_due`, which
claims every due delivery at once and sends them over one kept-alive connection per destination
(deliveries_wake_up). An attempt due later (a retry, the sweep's look-ahead) gets a message of
its own with a countdown (`webhooks.deliver`); a hand-over names its deliveries
(`webhooks.deliver_batch`).
"""

import logging
import threading
import time
from collections.abc import Sequence
from datetime import datetime, timedelta

from celery import bootsteps
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from kombu import Connection
from kombu.exceptions import KombuError
from kombu.pools import producers
from redis.exceptions import RedisError

from delivery.celery import app as celery_app

#: the Celery name of the task that makes a delivery's due attempt (webhooks.tasks.deliver)
DELIVER_TASK = "webhooks.deliver"
#: the task that makes the due attempts of several deliveries (webhooks.tasks.deliver_batch)
DELIVER_BATCH_TASK = "webhooks.deliver_batch"
#: the task that makes the due attempts of every delivery due now (webhooks.tasks.deliver_due)
DELIVER_DUE_TASK = "webhooks.deliver_due"
#: the broker's Redis key that says a `webhooks.deliver_due` message is on its way
WAKE_UP_KEY = "webhooks:deliver-due:wake-up"
#: a raised flag whose message was lost (a worker killed before running it) silences the
#: commits after it for this long past the wake-up's delay; then the next commit wakes the
#: sender again (and the sweep queues whatever waited longer than REQUEUE_AFTER_SECONDS)
WAKE_UP_TTL_SECONDS = 2.0

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


class _WorkerThreads:
    """The thread count of the Celery worker this process runs (worker_init), read when a claim
    is made: the in-flight limit never gives one destination all of them."""

    def __init__(self) -> None:
        self.worker = None

    def attach(self, sender=None, **kwargs) -> None:
        self.worker = sender

    def detach(self, sender=None, **kwargs) -> None:
        if sender is self.worker:
            self.worker = None

    def count(self) -> int | None:
        """The running worker's threads (None outside a worker, or once it stopped)."""
        blueprint = getattr(self.worker, "blueprint", None)
        if blueprint is None or blueprint.state not in (None, bootsteps.RUN):
            return None
        concurrency = getattr(self.worker, "concurrency", None)
        return concurrency if isinstance(concurrency, int) and concurrency > 0 else None


worker_threads = _WorkerThreads()


def in_flight_limit() -> int:
    """Attempts on the wire at once per destination, across all workers: the setting
    WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION, but in a worker at most its threads less one, so a
    destination that hangs always leaves a thread to every other destination's first attempts
    (with `--concurrency=2`, one attempt at a time per destination)."""
    limit = max(1, settings.WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION)
    threads = worker_threads.count()
    if threads is None:
        return limit
    return max(1, min(limit, threads - 1))


def claim_lease() -> timedelta:
    return timedelta(seconds=settings.WEBHOOK_TIMEOUT_SECONDS + CLAIM_MARGIN_SECONDS)


def in_flight_after(now: datetime) -> datetime:
    """Claims that expire after this were made less than the timeout + grace ago: attempts that
    may still be on the wire, counted against in_flight_limit()."""
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


def _publish(
    task: str,
    args: list,
    *,
    what: str,
    eta: datetime | None = None,
    countdown: float = 0.0,
    unless_awake: bool = False,
) -> None:
    """Publishes `task` (to run at `eta`, or `countdown` seconds from now, when given); a broker
    failure is logged, never raised (the sweep queues again what has no live message).

    `unless_awake`: only if this call raises the wake-up flag (deliveries_wake_up)."""
    if not broker_breaker.allows_publishing():
        logger.info("webhook %s left to the sweep (broker unavailable)", what)
        return
    options: dict = {"eta": eta} if eta is not None and eta > timezone.now() else {}
    if countdown > 0:
        options["countdown"] = countdown
    try:
        with producers[_publishing_connection()].acquire(block=True, timeout=5) as producer:
            if unless_awake and not _wake_up_flag_raise(producer, countdown):
                return
            # By name, as Task.apply_async would send it (its options: ignore_result): the task
            # module imports the sender, which queues through here.
            celery_app.send_task(
                task, args=args, retry=False, producer=producer, ignore_result=True, **options
            )
    except (KombuError, RedisError, OSError) as exc:
        broker_breaker.trip()
        logger.warning(
            "webhook %s not queued (broker unavailable: %s); the sweep will queue it, "
            "and publishing pauses for %s s",
            what,
            exc,
            BROKER_BACKOFF_SECONDS,
        )


def _wake_up_flag_raise(producer, countdown: float) -> bool:
    """Raises the wake-up flag in the broker's Redis (one round trip on the producer's own
    connection); True if it was down, so this caller publishes the wake-up. A transport without
    a Redis client (tests' in-memory broker) always publishes."""
    client = getattr(producer.channel, "client", None)
    if client is None:
        return True
    ttl_ms = int((countdown + WAKE_UP_TTL_SECONDS) * 1000)
    return bool(client.set(WAKE_UP_KEY, 1, nx=True, px=ttl_ms))


def deliveries_wake_up(*, what: str = "wake-up") -> None:
    """Makes sure a `webhooks.deliver_due` message is on its way: publishes one unless the flag
    says one already is (contract "Webhooks": at least once, within about a second).

    Race-free because the task lowers the flag BEFORE it reads which deliveries are due
    (wake_up_flag_lower), and a commit raises it AFTER it committed. If our SET finds the flag
    down, we publish a wake-up of our own. If it finds the flag up, the wake-up that raised it
    has not lowered it yet: it lowers it after our SET, so after our commit, and reads after
    that, so it sees our deliveries. The flag's TTL bounds the silence after a lost message;
    the sweep catches the rest.
    """
    _publish(
        DELIVER_DUE_TASK,
        [],
        what=what,
        countdown=settings.WEBHOOK_WAKE_UP_DELAY_SECONDS,
        unless_awake=True,
    )


def deliveries_wake_up_after(due_at: str, delivery_id: str) -> None:
    """Publishes a follow-up wake-up that reads the due deliveries after (`due_at`,
    `delivery_id`), at once and whatever the flag says (it neither raises nor lowers it)."""
    _publish(DELIVER_DUE_TASK, [due_at, delivery_id], what="wake-up (more due)")


def wake_up_flag_lower() -> None:
    """Lowers the wake-up flag: called by `webhooks.deliver_due` before it reads what is due,
    so the next commit publishes a new wake-up (deliveries_wake_up). Failing, the flag lapses
    by its TTL."""
    try:
        with producers[_publishing_connection()].acquire(block=True, timeout=5) as producer:
            client = getattr(producer.channel, "client", None)
            if client is not None:
                client.delete(WAKE_UP_KEY)
    except (KombuError, RedisError, OSError) as exc:
        logger.warning("webhook wake-up flag not lowered (broker unavailable: %s)", exc)


def delivery_enqueue(delivery_id, *, eta: datetime | None = None) -> None:
    """Publishes the delivery task (to run at `eta` when given, a moment at most
    countdown_horizon() ahead)."""
    _publish(DELIVER_TASK, [str(delivery_id)], what=f"delivery {delivery_id}", eta=eta)


def deliveries_enqueue(delivery_ids: Sequence) -> None:
    """Publishes the due attempts of `delivery_ids`, WEBHOOK_BATCH_SIZE of them per message."""
    size = settings.WEBHOOK_BATCH_SIZE
    for start in range(0, len(delivery_ids), size):
        chunk = [str(delivery_id) for delivery_id in delivery_ids[start : start + size]]
        if len(chunk) == 1:
            delivery_enqueue(chunk[0])
        else:
            _publish(DELIVER_BATCH_TASK, [chunk], what=f"deliveries {chunk[0]} (+{len(chunk) - 1})")


class _CommitBatch:
    """The deliveries queued in one transaction: once it commits, one wake-up sends them all
    (with whatever other transactions committed meanwhile)."""

    def __init__(self) -> None:
        self.delivery_ids: list = []

    def __call__(self) -> None:
        ids = self.delivery_ids
        more = f"deliveries {ids[0]} (+{len(ids) - 1})" if len(ids) > 1 else None
        deliveries_wake_up(what=more or f"delivery {ids[0]}")


_commit_batches = threading.local()


def delivery_enqueue_on_commit(delivery_id, *, eta: datetime | None = None) -> None:
    """Publishes the delivery task once the current transaction commits (at once outside one).

    Due now (no `eta`), it joins the batch of the current transaction (or savepoint): one
    callback, which wakes the sender up (at most one message), however many it creates. A
    batch is joined only from the savepoint it was registered in, so a rollback drops the
    callback of exactly the deliveries it rolled back, and never one of a later transaction.
    """
    if eta is not None or not connection.in_atomic_block:
        transaction.on_commit(lambda: delivery_enqueue(delivery_id, eta=eta), robust=True)
        return
    batch = getattr(_commit_batches, "batch", None)
    scope = set(connection.savepoint_ids)
    if batch is None or not any(
        callback is batch and sids == scope for sids, callback, _ in connection.run_on_commit
    ):
        batch = _CommitBatch()
        _commit_batches.batch = batch
        transaction.on_commit(batch, robust=True)
    batch.delivery_ids.append(delivery_id)


def retry_schedule() -> list[int]:
    """Seconds from the round's start to each attempt (WEBHOOK_RETRY_SCHEDULE)."""
    return list(settings.WEBHOOK_RETRY_SCHEDULE) or [0]


def attempt_due_at(*, schedule_start: datetime, attempt_in_round: int) -> datetime:
    """When attempt `attempt_in_round` (1-based) of a round started at `schedule_start` is due."""
    return schedule_start + timedelta(seconds=retry_schedule()[attempt_in_round - 1])
