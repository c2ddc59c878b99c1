"""Delivery attempts: claim, sign, POST, record (contract "Webhooks").

The claim is a conditional UPDATE (healthchecks' way): a worker owns an attempt only if it set
`claim_token` while the delivery was pending, due and unclaimed, so two workers never send the
same attempt. It is a lease longer than any HTTP call: a worker that dies mid-attempt leaves a
lease that lapses, and the sweep queues the attempt again. No transaction stays open across the
HTTP call.

A destination (an API key's webhook URL) has at most queueing.in_flight_limit() claims live at
once. A delivery due while its destination is at the limit waits for a slot (`queued_at` NULL:
its message is spent); the task whose attempt frees a slot sends the destination's oldest
waiting delivery next (delivery_send), so a backlog goes out oldest first.

A delivery task also claims, with its own, its share of the destination's due backlog (CLAIM),
sends them one after the other and records them together: a burst costs one claim and one
record per batch, and the messages of the deliveries it took find nothing to do (one query).
"""

import functools
import json
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from cryptography.fernet import InvalidToken
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from delivery import metrics, netguard
from delivery.encryption import decrypt_text
from delivery.netguard import WebhookUrlRefused
from tenants.models import ApiKey
from webhooks import catalog, posting, queueing, signing, statements
from webhooks.models import Delivery, DeliveryAttempt, DeliveryStatus, Event
from webhooks.posting import Outcome

logger = logging.getLogger(__name__)

#: an attempt this long (or a failed one) may have seen others refused a slot meanwhile: its
#: task then looks for its destination's waiting deliveries (the sweep is the fallback)
SLOW_ATTEMPT_MS = 200
#: due deliveries of one destination a delivery task claims and sends at once (its own first):
#: a burst then costs the worker one claim and one record per batch, not per delivery
DELIVERY_BATCH = 20


def _unclaimed(now: datetime) -> Q:
    return Q(claimed_until__isnull=True) | Q(claimed_until__lt=now)


def _claim(
    delivery_id, *, token: uuid.UUID, now: datetime, batch: int
) -> tuple[list[Delivery], bool] | None:
    """The deliveries (this one first, then up to `batch` - 1 more of its destination, oldest
    first) whose due attempts this worker now owns, with their events and key, and whether
    others of the destination wait for a slot; None if it owns none (then _not_claimed)."""
    # A delivery done, or claimed by another task (one that took it in its batch), costs its
    # message this one query.
    key_id = (
        Delivery.objects.filter(_unclaimed(now), pk=delivery_id, status=DeliveryStatus.PENDING)
        .values_list("api_key_id", flat=True)
        .first()
    )
    if key_id is None:
        return None
    with transaction.atomic():
        # The key's row lock serializes the claims of one destination, so CLAIM's count sees
        # every claim made before ours (FOR NO KEY UPDATE: rows referencing the key still insert).
        # CLAIM checks the delivery again under it.
        if not ApiKey.objects.select_for_update(no_key=True).filter(pk=key_id).values("pk"):
            return None
        with connection.cursor() as cursor:
            cursor.execute(
                statements.CLAIM,
                {
                    "id": delivery_id,
                    "token": token,
                    "until": now + queueing.claim_lease(),
                    "now": now,
                    "in_flight_after": queueing.in_flight_after(now),
                    "in_flight_limit": queueing.in_flight_limit(),
                    "batch": batch,
                },
            )
            rows = statements.claimed_rows(cursor)
        if not rows:
            _not_claimed(delivery_id, now=now)
            return None
    key = ApiKey(**statements.fields_of(rows[0], "key."))
    deliveries = []
    for row in rows:
        event = Event(**statements.fields_of(row, "event."))
        event.payload = json.loads(event.payload)
        deliveries.append(
            Delivery(event=event, api_key=key, **statements.fields_of(row, "delivery."))
        )
    return deliveries, rows[0]["waiting"]


def _not_claimed(delivery_id, *, now: datetime) -> None:
    """Why CLAIM took nothing, under the key's lock: done or someone else's (nothing to do), due
    soon (queued again for then), or due while its destination is at its limit (it waits)."""
    unclaimed = Delivery.objects.filter(
        _unclaimed(now), pk=delivery_id, status=DeliveryStatus.PENDING
    )
    due_at = unclaimed.values_list("next_attempt_at", flat=True).first()
    if due_at is None:
        return
    if due_at > now:
        if due_at <= now + queueing.countdown_horizon():
            queueing.delivery_enqueue_on_commit(delivery_id, eta=due_at)
        return
    unclaimed.update(queued_at=None)
    logger.info("webhook delivery %s waits: its destination is busy", delivery_id)


def _close(event: Event) -> None:
    """From now on the event is being sent: a newer change opens a new event instead of
    replacing this payload (contract "Webhooks"). The UPDATE waits for a transaction that is
    replacing the payload right now, so the payload read after it is the one sent."""
    if event.is_open:
        Event.objects.filter(pk=event.pk, is_open=True).update(is_open=False)
        event.refresh_from_db(fields=["payload", "is_open"])


def _send(
    delivery: Delivery,
    decrypt: Callable[[str], str],
    resolve: Callable[[str], netguard.Destination],
) -> Outcome:
    """One signed POST to the delivery's URL, resolved and checked for its claim (delivery/
    netguard.py); after a rotation the new secrets sign, and a rolled secret signs too while
    its overlap lasts at this attempt."""
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


def _next_state(delivery: Delivery, outcome: Outcome, *, now: datetime) -> dict:
    """Where the attempt leaves the delivery: its metric's outcome and its columns."""
    if outcome.succeeded:
        return {"outcome": "delivered", "status": DeliveryStatus.DELIVERED, "delivered_at": now}
    attempt_in_round = delivery.attempts + 1 - delivery.round_start_attempts
    # A test event's first round is one attempt (webhooks/probes.py); a redelivery is a round
    # like any other.
    single_attempt = delivery.round_start_attempts == 0 and delivery.event.name == (
        catalog.TEST_EVENT
    )
    if outcome.permanent or single_attempt or attempt_in_round >= len(queueing.retry_schedule()):
        return {"outcome": "failed", "status": DeliveryStatus.FAILED}
    due = timedelta(seconds=queueing.retry_schedule()[attempt_in_round])
    next_attempt_at = max(delivery.schedule_start + due, now)
    # A retry due before the sweep could see it is queued now, with a countdown to its due
    # time; a later one is queued by the sweep that runs just before it is due.
    soon = next_attempt_at <= now + queueing.countdown_horizon()
    return {
        "outcome": "retry",
        "status": DeliveryStatus.PENDING,
        "next_attempt_at": next_attempt_at,
        "queued_at": now if soon else None,
    }


@dataclass(frozen=True)
class _Attempt:
    delivery: Delivery
    outcome: Outcome
    started_at: datetime


def _record(attempts: list[_Attempt], *, token: uuid.UUID) -> None:
    """Writes the attempts and moves their deliveries on in one transaction (one INSERT, one
    UPDATE per distinct outcome: a batch of successes is one), except a delivery whose claim
    was taken from it (a redelivery cleared it): then only its attempt is recorded."""
    now = timezone.now()
    groups: dict[tuple, list[_Attempt]] = {}
    for attempt in attempts:
        outcome = attempt.outcome
        state = _next_state(attempt.delivery, outcome, now=now)
        columns = {
            "status": state["status"],
            "last_status_code": outcome.status_code,
            "last_error": outcome.error,
            "next_attempt_at": state.get("next_attempt_at"),
            "delivered_at": state.get("delivered_at"),
            "queued_at": state.get("queued_at"),
        }
        groups.setdefault((state["outcome"], *columns.items()), []).append(attempt)
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
        for (_, *columns), group in groups.items():
            ids = [a.delivery.id for a in group]
            # attempts + 1 is each one's attempt number: no one else moved it while we held
            # the claim (a redelivery that did cleared the claim token too).
            recorded = Delivery.objects.filter(pk__in=ids, claim_token=token).update(
                **dict(columns), attempts=F("attempts") + 1, claim_token=None, claimed_until=None
            )
            if recorded < len(ids):
                logger.info("webhook deliveries %s: some were redelivered during the attempt", ids)
            elif dict(columns)["queued_at"]:
                for delivery_id in ids:
                    queueing.delivery_enqueue_on_commit(
                        delivery_id, eta=dict(columns)["next_attempt_at"]
                    )
    for (outcome, *_), group in groups.items():
        metrics.webhook_attempt_recorded(outcome, count=len(group))
    for attempt in attempts:
        if not attempt.outcome.succeeded:
            logger.info(
                "webhook delivery %s attempt %s failed: %s",
                attempt.delivery.id,
                attempt.delivery.attempts + 1,
                attempt.outcome.error,
            )


def _release(deliveries: list[Delivery], *, token: uuid.UUID) -> None:
    """Gives back the claims of a batch's deliveries left unsent: they wait for a slot (their
    messages may be spent), which this task or the sweep gives them."""
    Delivery.objects.filter(pk__in=[d.id for d in deliveries], claim_token=token).update(
        claim_token=None, claimed_until=None, queued_at=None
    )


def _attempt(delivery_id, *, batch: int) -> tuple[Delivery | None, bool]:
    """Claims, sends and records the due attempt of a delivery, and those of up to `batch` - 1
    more due deliveries of its destination: (the delivery if it did, whether deliveries of its
    destination may be waiting for the slot it frees)."""
    now = timezone.now()
    token = uuid.uuid4()
    claimed = _claim(delivery_id, token=token, now=now, batch=batch)
    if claimed is None:
        return None, False
    deliveries, waiting = claimed
    # One key signs the whole batch: its secrets are decrypted once. Its URL is resolved and
    # checked once too: the batch's attempts all start within a few seconds of the claim.
    decrypt = functools.cache(decrypt_text)
    resolve = functools.cache(netguard.webhook_destination)
    made: list[_Attempt] = []
    for delivery in deliveries:
        started_at = timezone.now()
        _close(delivery.event)
        outcome = _send(delivery, decrypt, resolve)
        made.append(_Attempt(delivery, outcome, started_at))
        # The batch goes on only while the receiver answers well and fast: the last claim's
        # lease then outlives its attempt, and a receiver in trouble gets no more than before.
        if not outcome.succeeded or outcome.latency_ms >= SLOW_ATTEMPT_MS:
            break
    _record(made, token=token)
    unsent = deliveries[len(made) :]
    if unsent:
        _release(unsent, token=token)
    # Deliveries are refused a slot only while the destination's slots are all taken: some
    # were waiting at the claim, or the attempt failed or was slow (a receiver that hangs).
    last = made[-1].outcome
    slow = last.latency_ms >= SLOW_ATTEMPT_MS
    return deliveries[0], waiting or bool(unsent) or not last.succeeded or slow


def delivery_attempt(*, delivery_id) -> bool:
    """Makes the due attempt of a delivery if no one else is making it; True if it did. Safe to
    call any number of times, from any number of workers at once."""
    return _attempt(delivery_id, batch=1)[0] is not None


def delivery_send(*, delivery_id) -> bool:
    """The delivery task: the due attempt of this delivery and, in the same claim, those of up
    to DELIVERY_BATCH - 1 more due deliveries of its destination, oldest first (their own
    messages then find nothing to do); then, in the slot it holds, those of its destination's
    deliveries waiting for a slot; True if it made the first."""
    sent, look_further = _attempt(delivery_id, batch=DELIVERY_BATCH)
    made = sent is not None
    while sent is not None and look_further:
        now = timezone.now()
        waiting = (
            Delivery.objects.filter(
                _unclaimed(now),
                api_key_id=sent.api_key_id,
                status=DeliveryStatus.PENDING,
                queued_at__isnull=True,
                next_attempt_at__lte=now,
            )
            .order_by("next_attempt_at", "id")
            .values_list("pk", flat=True)
            .first()
        )
        sent, look_further = (
            _attempt(waiting, batch=DELIVERY_BATCH) if waiting is not None else (None, False)
        )
    return made
