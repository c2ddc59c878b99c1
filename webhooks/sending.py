"""Delivery attempts: claim, sign, POST, record (contract "Webhooks").

The claim is a conditional UPDATE (healthchecks' way): a worker owns an attempt only if it set
`claim_token` while the delivery was pending, due and unclaimed, so two workers never send the
same attempt. The claim is a lease longer than any HTTP call: a worker that dies mid-attempt
leaves a lease that lapses, and the sweep queues the attempt again. No transaction is held open
across the HTTP call.

A destination (an API key's webhook URL) has at most queueing.in_flight_limit() claims live at
once. A delivery due while its destination is at the limit waits for a slot (`queued_at` NULL:
its message is spent); the claim that frees a slot sends the destination's oldest waiting
delivery next, in the same task (delivery_send), so a destination's backlog goes out oldest
first without a message per hand-over.
"""

import logging
import uuid
from datetime import datetime

from cryptography.fernet import InvalidToken
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from delivery import metrics, netguard
from delivery.encryption import decrypt_text
from delivery.netguard import WebhookUrlRefused
from webhooks import catalog, posting, queueing, signing
from webhooks.models import Delivery, DeliveryAttempt, DeliveryStatus, Event
from webhooks.posting import Outcome

logger = logging.getLogger(__name__)


def _unclaimed(now: datetime) -> Q:
    return Q(claimed_until__isnull=True) | Q(claimed_until__lt=now)


def _claim(delivery_id, *, token: uuid.UUID, now: datetime) -> Delivery | None:
    """The delivery with its event and key if this worker now owns its due attempt, else None.

    Not due yet but due within the sweep's horizon (a countdown that fired a moment early): it
    is queued again for its due time. Due while its destination is at its in-flight limit: it
    waits for a slot (delivery_send, or the sweep).
    """
    with transaction.atomic():
        # The key's row lock serializes the claims of one destination, so the count below sees
        # every claim made before ours (FOR NO KEY UPDATE: rows referencing the key still insert).
        delivery = (
            Delivery.objects.select_related("event", "api_key")
            .select_for_update(of=("api_key",), no_key=True)
            .filter(_unclaimed(now), pk=delivery_id, status=DeliveryStatus.PENDING)
            .first()
        )
        if delivery is None:
            return None
        if delivery.next_attempt_at > now:
            if delivery.next_attempt_at <= now + queueing.countdown_horizon():
                queueing.delivery_enqueue_on_commit(delivery.id, eta=delivery.next_attempt_at)
            return None
        in_flight = Delivery.objects.filter(
            api_key_id=delivery.api_key_id,
            status=DeliveryStatus.PENDING,
            claimed_until__gt=queueing.in_flight_after(now),
        ).count()
        unclaimed = Delivery.objects.filter(_unclaimed(now), pk=delivery.pk, status=DeliveryStatus.PENDING)
        if in_flight >= queueing.in_flight_limit():
            unclaimed.update(queued_at=None)
            logger.info("webhook delivery %s waits: its destination is busy", delivery.id)
            return None
        claimed = unclaimed.filter(next_attempt_at__lte=now).update(
            claim_token=token, claimed_until=now + queueing.claim_lease()
        )
    return delivery if claimed else None


def _close(event: Event) -> None:
    """From now on the event is being sent: a newer change opens a new event instead of
    replacing this payload (contract "Webhooks"). The UPDATE waits for a transaction that is
    replacing the payload right now, so the payload read after it is the one sent."""
    if event.is_open:
        Event.objects.filter(pk=event.pk, is_open=True).update(is_open=False)
        event.refresh_from_db(fields=["payload", "is_open"])


def _send(delivery: Delivery) -> Outcome:
    """One signed POST to the delivery's URL, resolved and checked now (delivery/netguard.py);
    after a rotation the new secrets sign, and a rolled secret signs too while its overlap
    lasts at this attempt."""
    key = delivery.api_key
    if not key.is_active:
        return Outcome(None, "API key is revoked", 0, permanent=True)
    try:
        destination = netguard.webhook_destination(delivery.url)
    except WebhookUrlRefused as refused:
        return Outcome(None, posting.error_text(str(refused)), 0)
    expires_at = key.previous_webhook_secret_expires_at
    overlap = expires_at is not None and timezone.now() < expires_at
    try:
        request = signing.signed_request(
            event=delivery.event,
            api_key_value=decrypt_text(key.encrypted_value),
            webhook_secret=decrypt_text(key.encrypted_webhook_secret),
            previous_webhook_secret=(
                decrypt_text(key.encrypted_previous_webhook_secret)
                if overlap and key.encrypted_previous_webhook_secret
                else None
            ),
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
    due = queueing.attempt_due_at(
        schedule_start=delivery.schedule_start, attempt_in_round=attempt_in_round + 1
    )
    next_attempt_at = max(due, now)
    # A retry due before the sweep could see it is queued now, with a countdown to its due
    # time; a later one is queued by the sweep that runs just before it is due.
    soon = next_attempt_at <= now + queueing.countdown_horizon()
    return {
        "outcome": "retry",
        "status": DeliveryStatus.PENDING,
        "next_attempt_at": next_attempt_at,
        "queued_at": now if soon else None,
    }


def _record(delivery: Delivery, outcome: Outcome, *, token: uuid.UUID, started_at) -> None:
    """Writes the attempt and moves the delivery on, unless our claim was taken from it (a
    redelivery cleared it): then only the attempt is recorded."""
    now = timezone.now()
    number = delivery.attempts + 1
    state = _next_state(delivery, outcome, now=now)
    with transaction.atomic():
        DeliveryAttempt.objects.create(
            delivery_id=delivery.id,
            number=number,
            started_at=started_at,
            status_code=outcome.status_code,
            latency_ms=outcome.latency_ms,
            error=outcome.error,
            succeeded=outcome.succeeded,
        )
        recorded = Delivery.objects.filter(pk=delivery.pk, claim_token=token).update(
            status=state["status"],
            attempts=number,
            last_status_code=outcome.status_code,
            last_error=outcome.error,
            next_attempt_at=state.get("next_attempt_at"),
            delivered_at=state.get("delivered_at"),
            queued_at=state.get("queued_at"),
            claim_token=None,
            claimed_until=None,
        )
        if not recorded:
            logger.info("webhook delivery %s was redelivered during attempt %s", delivery.id, number)
        elif state.get("queued_at"):
            queueing.delivery_enqueue_on_commit(delivery.id, eta=state["next_attempt_at"])
    metrics.webhook_attempt_recorded(state["outcome"])
    if not outcome.succeeded:
        logger.info("webhook delivery %s attempt %s failed: %s", delivery.id, number, outcome.error)


def _attempt(delivery_id) -> Delivery | None:
    """Claims, sends and records the due attempt of a delivery; the delivery if it did."""
    now = timezone.now()
    token = uuid.uuid4()
    delivery = _claim(delivery_id, token=token, now=now)
    if delivery is None:
        return None
    _close(delivery.event)
    _record(delivery, _send(delivery), token=token, started_at=now)
    return delivery


def delivery_attempt(*, delivery_id) -> bool:
    """Makes the due attempt of a delivery if no one else is making it; True if it did. Safe to
    call any number of times, from any number of workers at once."""
    return _attempt(delivery_id) is not None


def delivery_send(*, delivery_id) -> bool:
    """The delivery task: the due attempt of this delivery, then, in the slot it holds, those of
    its destination's deliveries waiting for a slot, oldest first; True if it made the first."""
    sent = _attempt(delivery_id)
    made = sent is not None
    while sent is not None:
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
        sent = _attempt(waiting) if waiting is not None else None
    return made
