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
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime

import requests
from cryptography.fernet import InvalidToken
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from urllib3.util import Timeout

from delivery import metrics
from delivery.encryption import decrypt_text
from tenants.models import ApiKey
from webhooks import services, signing, statements
from webhooks.destinations import validate_webhook_url
from webhooks.errors import WebhookUrlRefused
from webhooks.models import Delivery, DeliveryStatus, Event

logger = logging.getLogger(__name__)

#: how much of a response body we read (only to let the connection be reused)
MAX_RESPONSE_BYTES = 64 * 1024
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


def _claim(delivery_id, *, now: datetime) -> tuple[Delivery, uuid.UUID] | None:
    """Takes the due attempt of `delivery_id`, or None if it is not ours to send.

    The conditional UPDATE is the claim: 0 rows means another worker has the attempt, or it is
    not due, or the delivery is done.
    """
    token = uuid.uuid4()
    lease = services.claim_lease()
    with _bookkeeping() as cursor:
        cursor.execute(statements.LOCK_DESTINATION, {"id": delivery_id})
        cursor.execute(
            statements.CLAIM,
            {
                "token": token,
                "until": now + lease,
                "id": delivery_id,
                "now": now,
                "in_flight_limit": settings.WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION,
                "in_flight_after": services.in_flight_after(now),
            },
        )
        row = cursor.fetchone()
        if row is None:
            # Not ours, not due, done, or its destination is at the in-flight limit: then it is
            # parked, and the next attempt to that destination that ends hands it its slot.
            cursor.execute(statements.PARK, {"id": delivery_id, "now": now})
            if cursor.fetchone() is not None:
                logger.info("webhook delivery %s waits: its destination is busy", delivery_id)
    if row is None:
        return None
    (
        d_id, org_id, url, attempts, round_start, schedule_start,
        e_id, family, name, event_id, payload, e_created, is_open,
        k_id, k_active, k_value, k_secret,
    ) = row  # fmt: skip
    event = Event(
        id=e_id,
        organization_id=org_id,
        family=family,
        name=name,
        event_id=event_id,
        payload=statements.payload_from_db(payload),
        created_at=e_created,
        is_open=is_open,
    )
    if is_open:
        event = _close(event)
    api_key = ApiKey(
        id=k_id,
        organization_id=org_id,
        is_active=k_active,
        encrypted_value=k_value,
        encrypted_webhook_secret=k_secret,
    )
    delivery = Delivery(
        id=d_id,
        organization_id=org_id,
        event=event,
        api_key=api_key,
        url=url,
        attempts=attempts,
        round_start_attempts=round_start,
        schedule_start=schedule_start,
    )
    return delivery, token


@transaction.atomic
def _close(event: Event) -> Event:
    """From now on the event is being sent: a newer change opens a new event instead of
    replacing this payload (decisions §7). The row lock waits for a transaction that is
    replacing the payload right now, so the newer payload is the one sent."""
    locked = Event.objects.select_for_update().get(pk=event.pk)
    if locked.is_open:
        Event.objects.filter(pk=event.pk).update(is_open=False)
        locked.is_open = False
    return locked


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
        # The key's current secrets: after a rotation the new ones sign. Both families also
        # carry the Standard Webhooks headers, keyed with the webhook secret.
        request = signing.signed_request(
            event=delivery.event,
            api_key_value=decrypt_text(api_key.encrypted_value),
            webhook_secret=decrypt_text(api_key.encrypted_webhook_secret),
        )
    except InvalidToken:
        return Outcome(None, "Signing secret cannot be decrypted", 0)
    return _post(delivery.url, request)


def _record(delivery: Delivery, token: uuid.UUID, outcome: Outcome, started_at) -> None:
    """Writes the attempt and moves the delivery on, unless our claim was taken from us
    (a redelivery cleared it): then only the attempt is recorded."""
    number = delivery.attempts + 1
    attempt_in_round = number - delivery.round_start_attempts
    now = timezone.now()
    status, next_attempt_at, delivered_at = DeliveryStatus.PENDING, None, None
    if outcome.succeeded:
        status, delivered_at = DeliveryStatus.DELIVERED, now
        metrics.webhook_attempt_recorded("delivered")
    elif outcome.permanent or attempt_in_round >= len(services.retry_schedule()):
        status = DeliveryStatus.FAILED
        metrics.webhook_attempt_recorded("failed")
    else:
        metrics.webhook_attempt_recorded("retry")
        due = services.attempt_due_at(
            schedule_start=delivery.schedule_start, attempt_in_round=attempt_in_round + 1
        )
        # Nothing is queued for the retry: the sweep picks it up once due.
        next_attempt_at = max(due, now)
    with _bookkeeping() as cursor:
        cursor.execute(
            statements.RECORD,
            {
                "id": delivery.id,
                "token": token,
                "number": number,
                "started_at": started_at,
                "status_code": outcome.status_code,
                "latency_ms": outcome.latency_ms,
                "error": outcome.error,
                "succeeded": outcome.succeeded,
                "status": status,
                "next_attempt_at": next_attempt_at,
                "delivered_at": delivered_at,
                "now": now,
                "api_key_id": delivery.api_key.id,
            },
        )
        updated, handed_over = cursor.fetchone()
    if not updated:
        logger.info("webhook delivery %s was redelivered during attempt %s", delivery.id, number)
    if handed_over is not None:
        services.delivery_enqueue_on_commit(handed_over)


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
