"""Delivery attempts, a batch at a time: claim them, sign, POST, record (contract "Webhooks").

The claim is a conditional UPDATE (healthchecks' way): a worker owns an attempt only if it
moved `claim_token` while the delivery was pending, due and unclaimed, so two workers never
send the same attempt. One claim takes the due attempts of a batch of deliveries under one
token and sends them one after the other, so it holds one of its destination's in-flight slots.
The claim is a lease longer than any HTTP call; a worker that dies mid-batch leaves a lease
that expires, and the sweep hands the attempts to another worker. No transaction is held open
across the HTTP calls; the batch's attempts are recorded in one statement at its end (or every
RECORD_EVERY_SECONDS of a long batch).

Each destination of a batch is resolved and checked once, before the batch's first connection
to it, and every POST of the batch goes to the addresses just checked (delivery/netguard.py,
webhooks/posting.py), over one kept-alive connection.
"""

import logging
import time
import uuid
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from functools import partial

from cryptography.fernet import InvalidToken
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from delivery import metrics, netguard
from delivery.encryption import decrypt_text
from delivery.netguard import Destination, WebhookUrlRefused
from webhooks import catalog, posting, queueing, signing, statements
from webhooks.models import DeliveryStatus, Event
from webhooks.posting import Outcome

logger = logging.getLogger(__name__)

#: a claim starts no attempt later than this after it was made: each attempt ends within the
#: timeout, so all of them end while the claim still counts as in flight (timeout + grace); the
#: claimed deliveries left unsent are given back and queued again
SEND_BUDGET_SECONDS = queueing.IN_FLIGHT_GRACE_SECONDS - 1
#: a claim that ends hands its slot to as many of its destination's parked deliveries as it
#: sent in about this long (at least one, at most WEBHOOK_BATCH_SIZE): a fast receiver gets
#: batches, a slow one gets its attempts spread over its in-flight slots, not queued behind one;
#: and the attempts a claim holds stay few enough that a worker dying with them (they wait for
#: their lease) leaves little behind
HANDOVER_WORK_SECONDS = 0.5
#: a claim records its attempts at its end, or sooner once this long has passed since its last
#: record: a worker that dies mid-batch leaves at most this long of sent but unrecorded attempts
#: (made again: at-least-once), and with a slow receiver, only the attempt on the wire
RECORD_EVERY_SECONDS = 0.1
#: deliveries one wake-up reads; when there are more, it wakes the sender again for the rest
DUE_LIMIT = 500


@dataclass(frozen=True)
class ClaimedDelivery:
    """What sending reads of a claimed delivery, its event and its key (one row of CLAIM)."""

    id: uuid.UUID
    event: Event
    api_key_id: uuid.UUID
    api_key_is_active: bool
    encrypted_value: str
    encrypted_webhook_secret: str
    #: the secret a roll replaced and until when it still signs ("" and None: none)
    encrypted_previous_webhook_secret: str
    previous_webhook_secret_expires_at: datetime | None
    url: str
    attempts: int
    round_start_attempts: int
    schedule_start: datetime


@dataclass(frozen=True)
class Attempt:
    delivery: ClaimedDelivery
    started_at: datetime
    outcome: Outcome


@contextmanager
def _bookkeeping():
    """A transaction for the claim or the record, committed without waiting for the WAL flush.

    Safe because delivery is at-least-once anyway: a claim or record lost in a database crash
    only means the attempt is made again (receivers deduplicate by event id). The events
    themselves are written in the caller's transaction, with full durability. On a busy disk
    the flush is most of an attempt's cost.
    """
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL synchronous_commit TO OFF")
        yield cursor


# ----- the claim -----


def _claim(delivery_ids: list[str], *, token: uuid.UUID, now: datetime) -> list[ClaimedDelivery]:
    """Takes the due attempts of `delivery_ids` that are ours to send, in their order.

    The conditional UPDATE is the claim: a delivery it does not return is another worker's, or
    not due, or done, or its destination is at the in-flight limit (then it is parked, and the
    next claim to that destination that ends hands it its slot).
    """
    with _bookkeeping() as cursor:
        cursor.execute(statements.LOCK_DESTINATIONS, {"ids": delivery_ids})
        cursor.execute(
            statements.CLAIM,
            {
                "ids": delivery_ids,
                "token": token,
                "until": now + queueing.claim_lease(),
                "now": now,
                "in_flight_limit": queueing.in_flight_limit(),
                "in_flight_after": queueing.in_flight_after(now),
                "batch_size": settings.WEBHOOK_BATCH_SIZE,
            },
        )
        rows = statements.named_rows(cursor)
        unclaimed: list[tuple] = []
        if len(rows) < len(delivery_ids):
            claimed_ids = {str(row["id"]) for row in rows}
            cursor.execute(
                statements.UNCLAIMED,
                {
                    "ids": [i for i in delivery_ids if i not in claimed_ids],
                    "now": now,
                    "horizon": now + queueing.countdown_horizon(),
                },
            )
            unclaimed = cursor.fetchall()
    for delivery_id, due_at in unclaimed:
        if due_at is None:
            logger.info("webhook delivery %s waits: its destination is busy", delivery_id)
        else:
            queueing.delivery_enqueue_on_commit(delivery_id, eta=due_at)
    return [_claimed_delivery(row) for row in rows]


def _claimed_delivery(row: dict) -> ClaimedDelivery:
    """The delivery, its event and its key from CLAIM's row, without a query more (the event
    is closed first when it is still open)."""
    event = Event(
        id=row["event_pk"],
        organization_id=row["organization_id"],
        family=row["family"],
        name=row["name"],
        event_id=row["event_id"],
        payload=statements.payload_from_db(row["payload"]),
        created_at=row["event_created_at"],
        is_open=row["is_open"],
    )
    if event.is_open:
        event = _close(event)
    return ClaimedDelivery(
        id=row["id"],
        event=event,
        api_key_id=row["api_key_id"],
        api_key_is_active=row["api_key_is_active"],
        encrypted_value=row["encrypted_value"],
        encrypted_webhook_secret=row["encrypted_webhook_secret"],
        encrypted_previous_webhook_secret=row["encrypted_previous_webhook_secret"],
        previous_webhook_secret_expires_at=row["previous_webhook_secret_expires_at"],
        url=row["url"],
        attempts=row["attempts"],
        round_start_attempts=row["round_start_attempts"],
        schedule_start=row["schedule_start"],
    )


@transaction.atomic
def _close(event: Event) -> Event:
    """From now on the event is being sent: a newer change opens a new event instead of
    replacing this payload (contract "Webhooks"). The row lock waits for a transaction that is
    replacing the payload right now, so the newer payload is the one sent."""
    locked = Event.objects.select_for_update().get(pk=event.pk)
    if locked.is_open:
        Event.objects.filter(pk=event.pk).update(is_open=False)
        locked.is_open = False
    return locked


# ----- sending -----


@dataclass(frozen=True)
class _KeySecrets:
    """A key's secrets, decrypted once per batch."""

    api_key_value: str
    webhook_secret: str
    previous_webhook_secret: str | None
    previous_expires_at: datetime | None

    def previous_at(self, moment: datetime) -> str | None:
        """The replaced secret if its overlap still lasts at `moment` (each attempt's own time:
        a retry after the overlap is signed by the new secret only)."""
        if self.previous_expires_at is None or moment >= self.previous_expires_at:
            return None
        return self.previous_webhook_secret


class _BatchSender:
    """Sends a claim's attempts. What does not change within the batch is worked out once: each
    destination is resolved and checked before the batch's first POST to it (so a DNS answer
    that changed since is never used, and none is used longer than the batch), and each key's
    secrets are decrypted once (after a rotation, the new ones sign; whether a rolled secret's
    overlap still lasts is judged at each attempt)."""

    def __init__(self) -> None:
        self.destinations: dict[str, Destination | WebhookUrlRefused] = {}
        self.secrets: dict[uuid.UUID, _KeySecrets | InvalidToken] = {}

    def _destination(self, url: str) -> Destination | WebhookUrlRefused:
        if url not in self.destinations:
            try:
                self.destinations[url] = netguard.webhook_destination(url)
            except WebhookUrlRefused as refused:
                self.destinations[url] = refused
        return self.destinations[url]

    def _secrets(self, delivery: ClaimedDelivery) -> _KeySecrets | InvalidToken:
        if delivery.api_key_id not in self.secrets:
            previous = delivery.encrypted_previous_webhook_secret
            try:
                self.secrets[delivery.api_key_id] = _KeySecrets(
                    api_key_value=decrypt_text(delivery.encrypted_value),
                    webhook_secret=decrypt_text(delivery.encrypted_webhook_secret),
                    previous_webhook_secret=decrypt_text(previous) if previous else None,
                    previous_expires_at=delivery.previous_webhook_secret_expires_at,
                )
            except InvalidToken as invalid:
                self.secrets[delivery.api_key_id] = invalid
        return self.secrets[delivery.api_key_id]

    def send(self, delivery: ClaimedDelivery) -> Outcome:
        if not delivery.api_key_is_active:
            return Outcome(None, "API key is revoked", 0, permanent=True)
        destination = self._destination(delivery.url)
        if isinstance(destination, WebhookUrlRefused):
            return Outcome(None, posting.error_text(str(destination)), 0)
        secrets = self._secrets(delivery)
        if isinstance(secrets, InvalidToken):
            return Outcome(None, "Signing secret cannot be decrypted", 0)
        # Both families also carry the Standard Webhooks headers, keyed with the webhook secret
        # (and the one a roll replaced, while its overlap lasts at this attempt).
        request = signing.signed_request(
            event=delivery.event,
            api_key_value=secrets.api_key_value,
            webhook_secret=secrets.webhook_secret,
            previous_webhook_secret=secrets.previous_at(timezone.now()),
        )
        return posting.post(destination, request)


# ----- the record -----


#: RECORD's columns, one array of each per claim (one element per attempt)
_RECORD_COLUMNS = (
    "ids",
    "numbers",
    "started_at",
    "status_codes",
    "latencies_ms",
    "errors",
    "succeeded",
    "statuses",
    "next_attempt_at",
    "delivered_at",
    "queued_at",
)


@dataclass(frozen=True)
class _NextState:
    """Where an attempt leaves its delivery: its metric's outcome and RECORD's values."""

    outcome: str
    status: str
    next_attempt_at: datetime | None = None
    delivered_at: datetime | None = None
    #: set when the next attempt is queued now, with a countdown to its due time
    queued_at: datetime | None = None


def _next_state(attempt: Attempt, *, now: datetime) -> _NextState:
    delivery, outcome = attempt.delivery, attempt.outcome
    attempt_in_round = delivery.attempts + 1 - delivery.round_start_attempts
    if outcome.succeeded:
        return _NextState("delivered", DeliveryStatus.DELIVERED, delivered_at=now)
    # A test event's first round is one attempt (webhooks/probes.py); a redelivery is a round
    # like any other.
    first_round = delivery.round_start_attempts == 0
    single_attempt = first_round and delivery.event.name == catalog.TEST_EVENT
    if outcome.permanent or single_attempt or attempt_in_round >= len(queueing.retry_schedule()):
        return _NextState("failed", DeliveryStatus.FAILED)
    due = queueing.attempt_due_at(
        schedule_start=delivery.schedule_start, attempt_in_round=attempt_in_round + 1
    )
    next_attempt_at = max(due, now)
    # A retry due before the sweep could see it is queued now, with a countdown to its due
    # time; a later one is queued by the sweep that runs just before it is due.
    soon = next_attempt_at <= now + queueing.countdown_horizon()
    return _NextState(
        "retry", DeliveryStatus.PENDING, next_attempt_at, queued_at=now if soon else None
    )


def _record(
    attempts: list[Attempt], *, token: uuid.UUID, unsent: list[ClaimedDelivery], handover: int
) -> None:
    """Writes the attempts and moves their deliveries on, in one statement, unless our claim
    was taken from a delivery (a redelivery cleared it): then only its attempt is recorded."""
    now = timezone.now()
    states = [_next_state(attempt, now=now) for attempt in attempts]
    rows = [
        (
            attempt.delivery.id,
            attempt.delivery.attempts + 1,
            attempt.started_at,
            attempt.outcome.status_code,
            attempt.outcome.latency_ms,
            attempt.outcome.error,
            attempt.outcome.succeeded,
            state.status,
            state.next_attempt_at,
            state.delivered_at,
            state.queued_at,
        )
        for attempt, state in zip(attempts, states, strict=True)
    ]
    columns = {name: [row[n] for row in rows] for n, name in enumerate(_RECORD_COLUMNS)}
    claimed = [*(attempt.delivery for attempt in attempts), *unsent]
    destinations = list(dict.fromkeys(delivery.api_key_id for delivery in claimed))
    with _bookkeeping() as cursor:
        cursor.execute(
            statements.RECORD,
            {
                **columns,
                "token": token,
                "now": now,
                "unsent": [delivery.id for delivery in unsent],
                "api_key_ids": destinations,
                "handover": handover,
            },
        )
        recorded, released, handed_over = cursor.fetchone()
    recorded = set(recorded)
    for attempt, state in zip(attempts, states, strict=True):
        delivery = attempt.delivery
        if delivery.id not in recorded:
            logger.info(
                "webhook delivery %s was redelivered during attempt %s",
                delivery.id,
                delivery.attempts + 1,
            )
        elif state.queued_at is not None:
            queueing.delivery_enqueue_on_commit(delivery.id, eta=state.next_attempt_at)
    # Given back for being slow to send: one message each, spread over the destination's slots.
    for delivery_id in released:
        transaction.on_commit(partial(queueing.delivery_enqueue, delivery_id), robust=True)
    if handed_over:
        transaction.on_commit(lambda: queueing.deliveries_enqueue(handed_over), robust=True)
    # Counted last: the hand-over's message is out first, so the next claim need not wait.
    for state in states:
        metrics.webhook_attempt_recorded(state.outcome)


# ----- the task's work -----


def deliveries_send(delivery_ids: Sequence) -> int:
    """Makes the due attempts of these deliveries that no one else is making; returns how many.

    Safe to call any number of times, from any number of workers at once, with any ids.
    """
    ids = [str(delivery_id) for delivery_id in delivery_ids]
    now = timezone.now()
    token = uuid.uuid4()
    claimed = _claim(ids, token=token, now=now)
    if not claimed:
        return 0
    claimed_at = last_recorded = time.monotonic()
    sender = _BatchSender()
    attempts: list[Attempt] = []
    unrecorded: list[Attempt] = []
    unsent: list[ClaimedDelivery] = []
    for number, delivery in enumerate(claimed, start=1):
        if attempts and time.monotonic() - claimed_at > SEND_BUDGET_SECONDS:
            unsent.append(delivery)
            continue
        started_at = timezone.now() if attempts else now
        attempt = Attempt(delivery, started_at, sender.send(delivery))
        attempts.append(attempt)
        unrecorded.append(attempt)
        if number < len(claimed) and time.monotonic() - last_recorded > RECORD_EVERY_SECONDS:
            # The claim goes on (no slot to hand over yet).
            _record(unrecorded, token=token, unsent=[], handover=0)
            unrecorded, last_recorded = [], time.monotonic()
    sent_per_second = len(attempts) / max(time.monotonic() - claimed_at, 0.001)
    handover = int(sent_per_second * HANDOVER_WORK_SECONDS)
    handover = 1 if unsent else max(1, min(handover, settings.WEBHOOK_BATCH_SIZE))
    _record(unrecorded, token=token, unsent=unsent, handover=handover)
    for attempt in attempts:
        if not attempt.outcome.succeeded:
            logger.info(
                "webhook delivery %s attempt %s failed: %s",
                attempt.delivery.id,
                attempt.delivery.attempts + 1,
                attempt.outcome.error,
            )
    return len(attempts)


def due_deliveries_send(after: tuple[str, str] | None = None) -> int:
    """Makes the due attempts of every due delivery no one is making (`webhooks.deliver_due`);
    returns how many this thread made.

    The wake-up flag is lowered FIRST, then the due deliveries are read: a delivery committed
    before the flag went down is in this read; one committed after finds the flag down and
    publishes a wake-up of its own (queueing.deliveries_wake_up). Each destination's deliveries
    are claimed WEBHOOK_BATCH_SIZE at a time as a deliver_batch message does, under the
    in-flight limit (the rest are parked for a hand-over): this thread sends one batch, the
    others get messages of their own first, so a receiver that hangs holds one thread and
    delays no other destination. `after` (a due time and an id): a follow-up wake-up of one
    that read DUE_LIMIT rows, which reads on after them and leaves the flag alone.
    """
    if after is None:
        queueing.wake_up_flag_lower()
    after_at, after_id = after or (None, None)
    with connection.cursor() as cursor:
        cursor.execute(
            statements.DUE,
            {"now": timezone.now(), "limit": DUE_LIMIT, "after_at": after_at, "after_id": after_id},
        )
        due = cursor.fetchall()
    if len(due) == DUE_LIMIT:
        # More are due: the next wake-up reads on from the last one read. Reading from the
        # start again would find these same rows, not yet claimed while their messages wait,
        # and queue them again, over and over while a burst lasts.
        _, _, last_at = due[-1]
        queueing.deliveries_wake_up_after(last_at.isoformat(), str(due[-1][0]))
    per_destination: dict[uuid.UUID, list[str]] = {}
    for delivery_id, api_key_id, _ in due:
        per_destination.setdefault(api_key_id, []).append(str(delivery_id))
    batches = [batch for ids in per_destination.values() for batch in _claims_of(ids)]
    if not batches:
        return 0
    for batch in batches[1:]:
        queueing.deliveries_enqueue(batch)
    return deliveries_send(batches[0])


def _claims_of(ids: list[str]) -> list[list[str]]:
    """A destination's due deliveries (oldest first) dealt into claims: as many as its in-flight
    limit allows while there are deliveries for them, more when a claim would exceed
    WEBHOOK_BATCH_SIZE. A claim sends one attempt after the other, so a slow receiver gets as
    many attempts at once as it did with a message per delivery, and the oldest go first; dealt
    in turn, each claim starts with one of the oldest."""
    size = settings.WEBHOOK_BATCH_SIZE
    count = max(-(-len(ids) // size), min(queueing.in_flight_limit(), len(ids)))
    return [ids[start::count] for start in range(count)]


def delivery_attempt(*, delivery_id) -> bool:
    """Makes the due attempt of a delivery if no one else is making it; True if it did."""
    return deliveries_send([delivery_id]) == 1
