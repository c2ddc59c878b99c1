"""Delivery attempts: claim, sign, POST, record (docs/webhooks.md "For operators").

A task owns an attempt only if its claim (statements.CLAIM, under the lock of its destination's
key row) set `claim_token` while the delivery was pending, due and unclaimed: a lease longer than
any HTTP call, so two workers never send the same attempt and a dead worker's lapses. With its
own delivery a claim takes its share of the destination's due backlog, sent one after the other
and recorded in one transaction; the messages of the deliveries it took find nothing to do. No
transaction stays open across an HTTP call.
"""

import functools
import json
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from cryptography.fernet import InvalidToken
from django.db import connection, transaction
from django.utils import timezone

from delivery import metrics, netguard
from delivery.encryption import decrypt_text
from delivery.netguard import WebhookUrlRefused
from tenants.models import ApiKey
from webhooks import catalog, posting, queueing, signing, statements
from webhooks.models import Delivery, DeliveryAttempt, DeliveryStatus, Event
from webhooks.posting import Outcome

logger = logging.getLogger(__name__)

#: an attempt this long (or a failed one) ends its batch: the receiver is in trouble, and others
#: of its destination may have been refused a slot meanwhile
SLOW_ATTEMPT_MS = 200
#: at most this many due deliveries of one destination in one claim (the task's own first): a
#: burst's messages then mostly find their delivery taken, which costs them one query
DELIVERY_BATCH = 100
#: no attempt of a batch starts later than this after its claim, so the claim counts against
#: its destination's in-flight limit until the batch's last attempt ends
BATCH_SECONDS = queueing.IN_FLIGHT_GRACE_SECONDS - 1


def _in_trouble(outcome: Outcome) -> bool:
    return not outcome.succeeded or outcome.latency_ms >= SLOW_ATTEMPT_MS


@dataclass(frozen=True)
class _Attempt:
    delivery: Delivery
    outcome: Outcome
    started_at: datetime


def _due(delivery_ids, *, now: datetime) -> list[tuple[str, object]]:
    """(id, key) of those deliveries whose attempts are due and unclaimed, oldest first: one
    query, all a message of deliveries done or someone else's costs. One due soon is queued
    again for then (a message that came early)."""
    due = []
    for delivery_id, key_id, status, due_at, claimed_until in (
        Delivery.objects.filter(pk__in=delivery_ids)
        .order_by()
        .values_list("id", "api_key_id", "status", "next_attempt_at", "claimed_until")
    ):
        if status != DeliveryStatus.PENDING or due_at is None:
            continue
        if claimed_until is not None and claimed_until >= now:
            continue
        if due_at <= now:
            due.append((due_at, str(delivery_id), key_id))
        elif due_at <= now + queueing.countdown_horizon():
            queueing.delivery_enqueue_on_commit(delivery_id, eta=due_at)
    return [(delivery_id, key_id) for _, delivery_id, key_id in sorted(due)]


def _claim(key_id, delivery_id, *, token: uuid.UUID, now: datetime, batch: int):
    """The deliveries whose due attempts this task now owns (statements.CLAIM), with their events
    and key, and whether others of the destination wait for a slot."""
    with connection.cursor() as cursor:
        rows = statements.claim(
            cursor,
            key=key_id,
            id=delivery_id,
            token=token,
            until=now + queueing.claim_lease(),
            now=now,
            in_flight_after=queueing.in_flight_after(now),
            in_flight_limit=queueing.in_flight_limit(),
            batch=batch,
        )
    if not rows:
        return [], False
    key = ApiKey(**rows[0]["key"])
    deliveries = []
    for row in rows:
        event = Event(**row["event"])
        event.payload = json.loads(event.payload)
        deliveries.append(Delivery(event=event, api_key=key, **row["delivery"]))
    return deliveries, rows[0]["waiting"]


def _close(event: Event) -> None:
    """From now on the event is being sent: a newer change opens a new event instead of
    replacing this payload. The UPDATE waits for a transaction replacing the payload right now,
    so the payload read after it is the one sent."""
    if event.is_open:
        Event.objects.filter(pk=event.pk, is_open=True).update(is_open=False)
        event.refresh_from_db(fields=["payload", "is_open"])


def _send(
    delivery: Delivery,
    decrypt: Callable[[str], str],
    resolve: Callable[[str], netguard.Destination],
) -> Outcome:
    """One signed POST to the delivery's URL, resolved and checked for its claim; a rolled
    secret signs too while its overlap lasts at this attempt."""
    key = delivery.api_key
    if not key.is_active:
        return Outcome(None, "API key is revoked", 0, permanent=True)
    try:
        destination = resolve(delivery.url)
    except WebhookUrlRefused as refused:
        return Outcome(None, posting.error_text(str(refused)), 0)
    previous, expires_at = (
        key.encrypted_previous_webhook_secret,
        key.previous_webhook_secret_expires_at,
    )
    overlap = previous and expires_at is not None and timezone.now() < expires_at
    try:
        request = signing.signed_request(
            event=delivery.event,
            api_key_value=decrypt(key.encrypted_value),
            webhook_secret=decrypt(key.encrypted_webhook_secret),
            previous_webhook_secret=decrypt(previous) if overlap else None,
        )
    except InvalidToken:
        return Outcome(None, "Signing secret cannot be decrypted", 0)
    return posting.post(destination, request)


def _next_state(delivery: Delivery, outcome: Outcome, *, now: datetime) -> tuple[str, dict]:
    """Where the attempt leaves the delivery: its metric's outcome and its columns."""
    columns = {
        "status": DeliveryStatus.DELIVERED,
        # Its attempt number: no one else moved it while we held the claim (a redelivery that
        # did cleared the claim token too).
        "attempts": delivery.attempts + 1,
        "last_status_code": outcome.status_code,
        "last_error": outcome.error,
        "next_attempt_at": None,
        "delivered_at": None,
        "queued_at": None,
    }
    if outcome.succeeded:
        return "delivered", {**columns, "delivered_at": now}
    schedule = queueing.retry_schedule()
    attempt_in_round = delivery.attempts + 1 - delivery.round_start_attempts
    # A test event's first round is one attempt (webhooks/probes.py); a redelivery is a round
    # like any other.
    single = delivery.round_start_attempts == 0 and delivery.event.name == catalog.TEST_EVENT
    if outcome.permanent or single or attempt_in_round >= len(schedule):
        return "failed", {**columns, "status": DeliveryStatus.FAILED}
    due = max(delivery.schedule_start + timedelta(seconds=schedule[attempt_in_round]), now)
    # A retry due before the sweep could see it is queued now, with a countdown to its due
    # time; a later one is queued by the sweep that runs just before it is due.
    soon = due <= now + queueing.countdown_horizon()
    state = {
        "status": DeliveryStatus.PENDING,
        "next_attempt_at": due,
        "queued_at": now if soon else None,
    }
    return "retry", {**columns, **state}


def _record(attempts: list[_Attempt], unsent: list[Delivery], *, token: uuid.UUID) -> None:
    """In one transaction: the attempts (one INSERT), their deliveries moved on (one UPDATE per
    distinct state: a batch of successes is one), the unsent ones of the batch given back to wait
    for a slot. A delivery whose claim was taken from it (a redelivery cleared it) keeps only
    its attempt's record."""
    now = timezone.now()
    groups: dict[tuple, list[_Attempt]] = {}
    for attempt in attempts:
        outcome, columns = _next_state(attempt.delivery, attempt.outcome, now=now)
        groups.setdefault((outcome, *columns.items()), []).append(attempt)
    with transaction.atomic():
        DeliveryAttempt.objects.bulk_create(
            DeliveryAttempt(
                delivery_id=a.delivery.id,
                number=a.delivery.attempts + 1,
                started_at=a.started_at,
                status_code=a.outcome.status_code,
                latency_ms=a.outcome.latency_ms,
                error=a.outcome.error,
                succeeded=a.outcome.succeeded,
            )
            for a in attempts
        )
        for (_, *items), group in groups.items():
            columns, ids = dict(items), [a.delivery.id for a in group]
            recorded = Delivery.objects.filter(pk__in=ids, claim_token=token).update(
                **columns, claim_token=None, claimed_until=None
            )
            if recorded < len(ids):
                logger.info("webhook deliveries %s: some were redelivered during the attempt", ids)
            elif columns["queued_at"]:
                for delivery_id in ids:
                    queueing.delivery_enqueue_on_commit(delivery_id, eta=columns["next_attempt_at"])
        if unsent:
            Delivery.objects.filter(pk__in=[d.id for d in unsent], claim_token=token).update(
                claim_token=None, claimed_until=None, queued_at=None
            )
    for (outcome, *_), group in groups.items():
        metrics.webhook_attempt_recorded(outcome, count=len(group))
    for a in attempts:
        if not a.outcome.succeeded:
            number, error = a.delivery.attempts + 1, a.outcome.error
            logger.info("webhook delivery %s attempt %s failed: %s", a.delivery.id, number, error)


def _attempt(key_id, delivery_id, *, batch: int) -> tuple[set[str], bool]:
    """Claims, sends and records the due attempts of up to `batch` deliveries of destination
    `key_id` (`delivery_id`'s first, if given): (the ids it claimed, whether deliveries of the
    destination may be waiting for the slot it frees)."""
    token, claimed_at = uuid.uuid4(), time.monotonic()
    deliveries, waiting = _claim(key_id, delivery_id, token=token, now=timezone.now(), batch=batch)
    if not deliveries:
        return set(), False
    # One key signs the whole batch: its secrets are decrypted once. Its URL is resolved and
    # checked once too: the batch's attempts all start within a few seconds of the claim.
    decrypt = functools.cache(decrypt_text)
    resolve = functools.cache(netguard.webhook_destination)
    made: list[_Attempt] = []
    for delivery in deliveries:
        if made and time.monotonic() - claimed_at > BATCH_SECONDS:
            break
        started_at = timezone.now()
        _close(delivery.event)
        outcome = _send(delivery, decrypt, resolve)
        made.append(_Attempt(delivery, outcome, started_at))
        # The batch goes on only while the receiver answers well and fast: a receiver in
        # trouble gets one attempt at a time from it.
        if _in_trouble(outcome):
            break
    unsent = deliveries[len(made) :]
    _record(made, unsent, token=token)
    # Deliveries are refused a slot only while the destination's slots are all taken: some
    # were waiting at the claim, or this batch was cut short (a receiver that fails or hangs).
    claimed = {str(delivery.id) for delivery in deliveries}
    return claimed, waiting or bool(unsent) or _in_trouble(made[-1].outcome)


def _send_due(delivery_ids, *, batch: int):
    """The due attempts of these deliveries, each claim taking its share of the destination's
    due backlog: (whether it made any, their destination, whether deliveries of the destination
    may be waiting for the slot it frees)."""
    now = timezone.now()
    due = _due(delivery_ids, now=now)
    made, taken, key_id, look_further = False, set(), None, False
    for n, (delivery_id, key_id) in enumerate(due):
        if delivery_id in taken:
            continue
        claimed, look_further = _attempt(key_id, delivery_id, batch=batch)
        if not claimed:
            # The destination is at its limit: the rest wait for a slot (their message is
            # spent), which a task of the destination or the sweep gives them.
            waiting = [i for i, _ in due[n:] if i not in taken]
            if Delivery.objects.filter(queueing.unclaimed(now), pk__in=waiting).update(
                queued_at=None
            ):
                logger.info("webhook deliveries %s wait: their destination is busy", waiting)
            break
        made, taken = True, taken | claimed
    return made, key_id, look_further


def delivery_attempt(*, delivery_id) -> bool:
    """Makes the due attempt of a delivery if no one else is making it; True if it did. Safe to
    call any number of times, from any number of workers at once."""
    return _send_due([delivery_id], batch=1)[0]


def delivery_send(*delivery_ids) -> bool:
    """The delivery task: the due attempts of these deliveries (a transaction's new deliveries to
    one destination come in one message), each claim taking its share of the destination's due
    backlog (their own messages then find nothing to do); then, in the slot it holds, the
    destination's deliveries waiting for a slot, oldest first. True if it made any of its own."""
    made, key_id, look_further = _send_due(delivery_ids, batch=DELIVERY_BATCH)
    while look_further:
        _, look_further = _attempt(key_id, None, batch=DELIVERY_BATCH)
    return made
