"""One delivery attempt: claim it, sign, POST, record (decisions §7).

The claim is a conditional UPDATE (healthchecks' way): a worker owns the attempt only if it
moved `claim_token` while the delivery was pending, due and unclaimed, so two workers never
send the same attempt. The claim is a lease longer than any HTTP call; a worker that dies
mid-attempt leaves a lease that expires, and the sweep hands the attempt to another worker.
No transaction is held open across the HTTP call.
"""

import logging
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

import requests
from cryptography.fernet import InvalidToken
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from urllib3.util import Timeout

from delivery.encryption import decrypt_text
from webhooks import services, signing
from webhooks.destinations import validate_webhook_url
from webhooks.errors import WebhookUrlRefused
from webhooks.models import Delivery, DeliveryAttempt, DeliveryStatus, Event

logger = logging.getLogger(__name__)

#: how much of a response body we read (only to let the connection be reused)
MAX_RESPONSE_BYTES = 64 * 1024
#: seconds a claim outlives the longest HTTP call before another worker may take the attempt
CLAIM_MARGIN_SECONDS = 50
ERROR_MAX_LENGTH = 500

_local = threading.local()


def _session() -> requests.Session:
    """One keep-alive session per worker thread (requests.Session is not thread-safe)."""
    session = getattr(_local, "session", None)
    if session is None:
        session = requests.Session()
        session.trust_env = False  # never send webhooks through an environment proxy
        _local.session = session
    return session


@dataclass(frozen=True)
class Outcome:
    status_code: int | None
    error: str
    latency_ms: int
    #: no later attempt can succeed (the key was revoked): the delivery fails at once
    permanent: bool = False

    @property
    def succeeded(self) -> bool:
        return not self.error and self.status_code is not None and 200 <= self.status_code < 300


def _claim(delivery_id, *, now: datetime) -> tuple[Delivery, uuid.UUID] | None:
    """Takes the due attempt of `delivery_id`, or None if it is not ours to send."""
    token = uuid.uuid4()
    lease = timedelta(seconds=settings.WEBHOOK_TIMEOUT_SECONDS + CLAIM_MARGIN_SECONDS)
    with transaction.atomic():
        claimed = (
            Delivery.objects.filter(
                pk=delivery_id, status=DeliveryStatus.PENDING, next_attempt_at__lte=now
            )
            .filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now))
            .update(claim_token=token, claimed_until=now + lease)
        )
        if not claimed:
            return None
        delivery = Delivery.objects.select_related("event", "api_key").get(pk=delivery_id)
        if delivery.event.is_open:
            # From now on the event is being sent: a newer change opens a new event instead of
            # replacing this payload (decisions §7). The lock waits for a transaction that is
            # replacing the payload right now, so we send its newer payload.
            event = Event.objects.select_for_update().get(pk=delivery.event_id)
            Event.objects.filter(pk=event.pk).update(is_open=False)
            event.is_open = False
            delivery.event = event
    return delivery, token


def _error_text(message: str) -> str:
    return message[:ERROR_MAX_LENGTH]


def _post(url: str, request: signing.SignedRequest) -> Outcome:
    """POSTs once; success is a 2xx within WEBHOOK_TIMEOUT_SECONDS (redirects not followed)."""
    total = float(settings.WEBHOOK_TIMEOUT_SECONDS)
    # Connecting gets at most 3 s; reading gets what is left of the total (urllib3 `total`).
    timeout = Timeout(connect=min(3.0, total), read=total, total=total)
    started = time.monotonic()

    def elapsed_ms() -> int:
        return int((time.monotonic() - started) * 1000)

    try:
        with _session().post(
            url,
            data=request.body,
            headers=request.headers,
            timeout=timeout,
            allow_redirects=False,
            stream=True,
        ) as response:
            read = 0
            for chunk in response.iter_content(8192):
                read += len(chunk)
                if read > MAX_RESPONSE_BYTES or time.monotonic() - started > total:
                    break
            status_code = response.status_code
    except requests.Timeout:
        return Outcome(None, f"Timed out after {total:g} s", elapsed_ms())
    except requests.RequestException as exc:
        return Outcome(None, _error_text(f"{type(exc).__name__}: {exc}"), elapsed_ms())
    latency = elapsed_ms()
    if latency > total * 1000:
        return Outcome(status_code, f"Timed out after {total:g} s", latency)
    if not 200 <= status_code < 300:
        return Outcome(status_code, f"HTTP {status_code}", latency)
    return Outcome(status_code, "", latency)


def _send(delivery: Delivery) -> Outcome:
    api_key = delivery.api_key
    if not api_key.is_active:
        return Outcome(None, "API key is revoked", 0, permanent=True)
    try:
        validate_webhook_url(delivery.url)  # decisions §3: checked again at delivery time
    except WebhookUrlRefused as refused:
        return Outcome(None, _error_text(str(refused)), 0)
    try:
        # The key's current secrets: after a rotation the new ones sign.
        request = signing.signed_request(
            event=delivery.event,
            api_key_value=decrypt_text(api_key.encrypted_value),
            webhook_secret=decrypt_text(api_key.encrypted_webhook_secret),
        )
    except InvalidToken:
        return Outcome(None, "Signing secret cannot be decrypted", 0)
    return _post(delivery.url, request)


def _record(delivery: Delivery, token: uuid.UUID, outcome: Outcome, started_at) -> None:
    """Writes the attempt and moves the delivery on, unless our claim was taken from us."""
    number = delivery.attempts + 1
    attempt_in_round = number - delivery.round_start_attempts
    now = timezone.now()
    state: dict = {
        "attempts": number,
        "last_status_code": outcome.status_code,
        "last_error": outcome.error,
        "claim_token": None,
        "claimed_until": None,
    }
    if outcome.succeeded:
        state.update(status=DeliveryStatus.DELIVERED, delivered_at=now, next_attempt_at=None)
    elif outcome.permanent or attempt_in_round >= len(services.retry_schedule()):
        state.update(status=DeliveryStatus.FAILED, next_attempt_at=None)
    else:
        due = services.attempt_due_at(
            schedule_start=delivery.schedule_start, attempt_in_round=attempt_in_round + 1
        )
        # Nothing queued for the retry: the sweep picks it up once due.
        state.update(next_attempt_at=max(due, now), queued_at=None)
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
        updated = Delivery.objects.filter(pk=delivery.id, claim_token=token).update(**state)
    if not updated:
        logger.info("webhook delivery %s was redelivered during attempt %s", delivery.id, number)


def delivery_attempt(*, delivery_id) -> bool:
    """Makes the due attempt of a delivery if no one else is making it; True if it did.

    Safe to call any number of times, from any number of workers at once.
    """
    now = timezone.now()
    claimed = _claim(delivery_id, now=now)
    if claimed is None:
        return False
    delivery, token = claimed
    outcome = _send(delivery)
    _record(delivery, token, outcome, started_at=now)
    if not outcome.succeeded:
        logger.info(
            "webhook delivery %s attempt %s failed: %s",
            delivery.id,
            delivery.attempts + 1,
            outcome.error,
        )
    return True
