"""Delivery attempts: claim, sign, POST, record (docs/webhooks.md "For operators"). A claim is a
lease (a dead worker's lapses) on a share of the destination's due backlog, sent in turn."""

import functools
import json
import logging
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from cryptography.fernet import InvalidToken
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from delivery import metrics, netguard
from delivery.encryption import decrypt_text
from tenants.models import ApiKey
from webhooks import catalog, posting, queueing, signing, statements
from webhooks.models import Delivery, DeliveryAttempt, DeliveryStatus, Event

logger = logging.getLogger(__name__)

SLOW_ATTEMPT_MS = 200  # an attempt this long, or failed, ends its batch: the receiver is in trouble
#: no attempt of a batch starts later than this after its claim (which counts as in flight)
BATCH_SECONDS = queueing.IN_FLIGHT_GRACE_SECONDS - 1


@dataclass(frozen=True)
class _Attempt:
    delivery: Delivery
    outcome: posting.Outcome
    started_at: datetime

    @property
    def in_trouble(self) -> bool:
        return not self.outcome.succeeded or self.outcome.latency_ms >= SLOW_ATTEMPT_MS


def _fields(row: dict, model: str) -> dict:
    """The columns `<model>.<field>` of a claimed row, as {field: value}."""
    return {name[len(model) + 1 :]: v for name, v in row.items() if name.startswith(f"{model}.")}


def _due(delivery_ids, *, now: datetime) -> list[tuple[str, object]]:
    """(id, key) of those deliveries whose attempts are due and unclaimed, oldest first (one
    query); one due soon is queued again for then (its message came early)."""
    horizon = now + queueing.countdown_horizon()
    pending = Delivery.objects.filter(pk__in=delivery_ids, status=DeliveryStatus.PENDING)
    rows = pending.filter(queueing.unclaimed(now), next_attempt_at__lte=horizon)
    due = []
    for delivery_id, key_id, due_at in rows.order_by("next_attempt_at", "id").values_list(
        "id", "api_key_id", "next_attempt_at"
    ):
        if due_at <= now:
            due.append((str(delivery_id), key_id))
        else:
            queueing.delivery_enqueue_on_commit(delivery_id, eta=due_at)
    return due


def _send(delivery: Delivery, decrypt, resolve) -> posting.Outcome:
    """One signed POST to the delivery's URL, resolved and checked for its claim (delivery/
    netguard.py); a rolled secret signs too while its overlap lasts at this attempt."""
    key, event = delivery.api_key, delivery.event
    if event.is_open:
        # A newer change opens a new event from now on; the UPDATE waits for one in progress.
        Event.objects.filter(pk=event.pk, is_open=True).update(is_open=False)
        event.refresh_from_db(fields=["payload", "is_open"])
    if not key.is_active:
        return posting.Outcome(None, "API key is revoked", 0, permanent=True)
    try:
        destination = resolve(delivery.url)
    except netguard.WebhookUrlRefused as refused:
        return posting.Outcome(None, posting.error_text(str(refused)), 0)
    previous = key.encrypted_previous_webhook_secret
    expires_at = key.previous_webhook_secret_expires_at
    overlap = previous and expires_at is not None and timezone.now() < expires_at
    try:
        request = signing.signed_request(
            event=event,
            api_key_value=decrypt(key.encrypted_value),
            webhook_secret=decrypt(key.encrypted_webhook_secret),
            previous_webhook_secret=decrypt(previous) if overlap else None,
        )
    except InvalidToken:
        return posting.Outcome(None, "Signing secret cannot be decrypted", 0)
    return posting.post(destination, request)


def _next_state(delivery: Delivery, outcome: posting.Outcome, *, now: datetime) -> tuple[str, dict]:
    """Where the attempt leaves the delivery: its metric's outcome and its columns."""
    columns = {
        "status": DeliveryStatus.DELIVERED,
        # Its attempt number: no one moved it while we held the claim (a redelivery clears it).
        "attempts": delivery.attempts + 1,
        "last_status_code": outcome.status_code,
        "last_error": outcome.error,
        "next_attempt_at": None,
        "delivered_at": now if outcome.succeeded else None,
        "queued_at": None,
    }
    if outcome.succeeded:
        return "delivered", columns
    schedule = list(settings.WEBHOOK_RETRY_SCHEDULE) or [0]  # seconds from the round's start
    attempt_in_round = delivery.attempts + 1 - delivery.round_start_attempts
    # A test event's first round is one attempt (webhooks/probes.py), not a redelivery's.
    single = delivery.round_start_attempts == 0 and delivery.event.name == catalog.TEST_EVENT
    if outcome.permanent or single or attempt_in_round >= len(schedule):
        return "failed", {**columns, "status": DeliveryStatus.FAILED}
    due = max(delivery.schedule_start + timedelta(seconds=schedule[attempt_in_round]), now)
    # A retry due before the next sweep is queued now, with a countdown; a later one by a sweep.
    soon = due <= now + queueing.countdown_horizon()
    columns.update(
        status=DeliveryStatus.PENDING, next_attempt_at=due, queued_at=now if soon else None
    )
    return "retry", columns


def _record(attempts: list[_Attempt], unsent: list[Delivery], *, token: uuid.UUID) -> None:
    """The attempts, their deliveries moved on (an UPDATE per distinct state) and the unsent ones
    given back, in one transaction; a delivery redelivered meanwhile keeps only its attempt."""
    now = timezone.now()
    groups: dict[tuple, list[str]] = {}
    for a in attempts:
        outcome, columns = _next_state(a.delivery, a.outcome, now=now)
        groups.setdefault((outcome, *columns.items()), []).append(a.delivery.id)
        if not a.outcome.succeeded:
            number, error = a.delivery.attempts + 1, a.outcome.error
            logger.info("webhook delivery %s attempt %s failed: %s", a.delivery.id, number, error)
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
        for (_, *items), ids in groups.items():
            columns = dict(items)
            mine = Delivery.objects.filter(pk__in=ids, claim_token=token)
            if mine.update(**columns, claim_token=None, claimed_until=None) < len(ids):
                logger.info("webhook deliveries %s: some were redelivered during the attempt", ids)
            elif columns["queued_at"]:
                for delivery_id in ids:
                    queueing.delivery_enqueue_on_commit(delivery_id, eta=columns["next_attempt_at"])
        if unsent:
            Delivery.objects.filter(pk__in=[d.id for d in unsent], claim_token=token).update(
                claim_token=None, claimed_until=None, queued_at=None
            )
    for (outcome, *_), ids in groups.items():
        metrics.webhook_attempt_recorded(outcome, count=len(ids))


def _attempt(key_id, delivery_id, *, batch: int) -> tuple[set[str], bool, datetime | None]:
    """Claims, sends and records up to `batch` due attempts to destination `key_id` (that of
    `delivery_id` first): (ids claimed, whether others may wait for the slot, own_due_at: CLAIM)."""
    token, claimed_at, now = uuid.uuid4(), time.monotonic(), timezone.now()
    with transaction.atomic(), connection.cursor() as cursor:
        rows, own_due_at = statements.claim(
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
        return set(), False, own_due_at
    key, deliveries = ApiKey(**_fields(rows[0], "key")), []
    for row in rows:
        event = Event(**_fields(row, "event"), payload=json.loads(row["payload"]))
        deliveries.append(Delivery(event=event, api_key=key, **_fields(row, "delivery")))
    # One key, one URL: secrets decrypted, address resolved and checked once per batch.
    decrypt = functools.cache(decrypt_text)
    resolve = functools.cache(netguard.webhook_destination)
    made: list[_Attempt] = []
    for delivery in deliveries:
        if made and (made[-1].in_trouble or time.monotonic() - claimed_at > BATCH_SECONDS):
            break  # a receiver in trouble gets one attempt at a time
        started_at = timezone.now()
        made.append(_Attempt(delivery, _send(delivery, decrypt, resolve), started_at))
    unsent = deliveries[len(made) :]
    _record(made, unsent, token=token)
    # Others may wait for the slot this claim frees: some did, or may have while it was sent.
    claimed = {str(delivery.id) for delivery in deliveries}
    return claimed, rows[0]["waiting"] or len(deliveries) > 1 or made[-1].in_trouble, None


def _send_due(delivery_ids, *, batch: int, key=None) -> tuple[bool, object, bool]:
    """The due attempts of these deliveries (of destination `key` when known), each claim taking
    up to `batch` of the backlog: (whether it made any, their destination, whether others wait)."""
    # The claim alone tells whether a new delivery is due; it is read only if it still waits.
    if key and len(delivery_ids) == 1:
        claimed, further, own_due_at = _attempt(key, delivery_ids[0], batch=batch)
        if claimed or own_due_at is None:
            return bool(claimed), key, further
    now = timezone.now()
    due = _due(delivery_ids, now=now)
    made, taken, key_id, look_further = False, set(), None, False
    for n, (delivery_id, key_id) in enumerate(due):
        if delivery_id in taken:
            continue
        claimed, further, _ = _attempt(key_id, delivery_id, batch=batch)
        if not claimed:
            # At its limit: the rest wait for a slot, which a task of theirs or the sweep gives.
            rest = [i for i, _ in due[n:] if i not in taken]
            if Delivery.objects.filter(queueing.unclaimed(now), pk__in=rest).update(queued_at=None):
                logger.info("webhook deliveries %s wait: their destination is busy", rest)
            break
        made, taken, look_further = True, taken | claimed, further
    return made, key_id, look_further


def delivery_attempt(*, delivery_id) -> bool:
    """Makes the due attempt of a delivery if no one else is; True if it did. Safe to call any
    number of times, from any number of workers at once."""
    return _send_due([delivery_id], batch=1)[0]


def delivery_send(*delivery_ids, key=None) -> bool:
    """The delivery task: the due attempts of these deliveries (one destination's, `key` when
    the message names it), each claim taking its share of the due backlog, then in the slot it
    holds the deliveries waiting for a slot, oldest first. True if it made any of its own."""
    made, key_id, look_further = _send_due(delivery_ids, batch=queueing.DELIVERY_BATCH, key=key)
    while look_further:
        _, look_further, _ = _attempt(key_id, None, batch=queueing.DELIVERY_BATCH)
    return made
