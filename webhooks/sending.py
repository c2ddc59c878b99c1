"""One delivery attempt: claim it, sign, POST, record (contract "Webhooks").

The claim is a conditional UPDATE (healthchecks' way): a worker owns the attempt only if it
moved `claim_token` while the delivery was pending, due and unclaimed, so two workers never
send the same attempt. The claim is a lease longer than any HTTP call; a worker that dies
mid-attempt leaves a lease that expires, and the sweep hands the attempt to another worker.
No transaction is held open across the HTTP call. The URL's host is resolved once per
attempt and the POST goes to the address just checked (delivery/netguard.py), with the URL's
host as `Host`, TLS server name and certificate name.
"""

import logging
import threading
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime

import certifi
import urllib3
from cryptography.fernet import InvalidToken
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from urllib3.exceptions import HTTPError, NewConnectionError, ProtocolError, SSLError
from urllib3.exceptions import TimeoutError as Urllib3Timeout
from urllib3.util import Timeout

from delivery import metrics, netguard
from delivery.encryption import decrypt_text
from delivery.netguard import Destination, WebhookUrlRefused
from tenants.models import ApiKey
from webhooks import queueing, signing, statements
from webhooks.models import Delivery, DeliveryStatus, Event

logger = logging.getLogger(__name__)

#: how much of a response body we read (only to let the connection be reused)
MAX_RESPONSE_BYTES = 64 * 1024
ERROR_MAX_LENGTH = 500

#: the certificate authorities a receiver's certificate must chain to
CA_CERTS = certifi.where()
#: keep-alive connection pools per worker thread, one per (address, host name)
POOLS_PER_THREAD = 32

_local = threading.local()


def _pools() -> urllib3.PoolManager:
    """One pool manager per worker thread; no environment proxy is ever used."""
    pools = getattr(_local, "pools", None)
    if pools is None:
        pools = urllib3.PoolManager(num_pools=POOLS_PER_THREAD, maxsize=1, retries=False)
        _local.pools = pools
    return pools


def _pool(destination: Destination, address: str):
    """The keep-alive pool that connects to `address` (already checked) and speaks to the
    host of the URL: `Host` header, TLS server name (SNI) and certificate check all use the
    URL's host name, never the address."""
    pool_kwargs: dict = {}
    if destination.scheme == "https":
        pool_kwargs = {
            "server_hostname": destination.hostname,
            "assert_hostname": destination.hostname,
            "cert_reqs": "CERT_REQUIRED",
            "ca_certs": CA_CERTS,
        }
    return _pools().connection_from_host(
        address, port=destination.port, scheme=destination.scheme, pool_kwargs=pool_kwargs
    )


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
    lease = queueing.claim_lease()
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
                "in_flight_after": queueing.in_flight_after(now),
            },
        )
        row = statements.named_row(cursor)
        early = None
        if row is None:
            # Not ours, not due, done, or its destination is at the in-flight limit: then it is
            # parked, and the next attempt to that destination that ends hands it its slot.
            cursor.execute(statements.PARK, {"id": delivery_id, "now": now})
            if cursor.fetchone() is not None:
                logger.info("webhook delivery %s waits: its destination is busy", delivery_id)
            else:
                cursor.execute(
                    statements.EARLY,
                    {"id": delivery_id, "now": now, "horizon": now + queueing.countdown_horizon()},
                )
                early = cursor.fetchone()
    if early is not None:
        queueing.delivery_enqueue_on_commit(delivery_id, eta=early[0])
    if row is None:
        return None
    return _claimed_delivery(row), token


def _claimed_delivery(row: dict) -> Delivery:
    """The delivery, its event and its key from CLAIM's row: only the fields sending reads,
    without a query more (the event is closed first when it is still open)."""
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
    api_key = ApiKey(
        id=row["api_key_id"],
        organization_id=row["organization_id"],
        is_active=row["api_key_is_active"],
        encrypted_value=row["encrypted_value"],
        encrypted_webhook_secret=row["encrypted_webhook_secret"],
    )
    return Delivery(
        id=row["id"],
        organization_id=row["organization_id"],
        event=event,
        api_key=api_key,
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


def _error_text(message: str) -> str:
    return message[:ERROR_MAX_LENGTH]


def _read_some(response, *, started: float, total: float) -> bool:
    """Reads the answer's body up to MAX_RESPONSE_BYTES within the time left; True if it was
    read to the end (then the connection can be kept alive)."""
    read = 0
    for chunk in response.stream(8192):
        read += len(chunk)
        if read > MAX_RESPONSE_BYTES or time.monotonic() - started > total:
            return False
    return True


def _post(destination: Destination, request: signing.SignedRequest) -> Outcome:
    """POSTs once to the checked address; success is a 2xx within WEBHOOK_TIMEOUT_SECONDS
    (redirects not followed). An address that refuses the connection hands over to the next
    one (nothing was sent to it)."""
    total = float(settings.WEBHOOK_TIMEOUT_SECONDS)
    # Connecting gets at most 3 s; reading gets what is left of the total (urllib3 `total`).
    timeout = Timeout(connect=min(3.0, total), read=total, total=total)
    headers = {**request.headers, "Host": destination.host_header}
    started = time.monotonic()

    def elapsed_ms() -> int:
        return int((time.monotonic() - started) * 1000)

    status_code = None
    for number, address in enumerate(destination.addresses, start=1):
        try:
            response = _pool(destination, address).urlopen(
                "POST",
                destination.target,
                body=request.body,
                headers=headers,
                timeout=timeout,
                retries=False,
                redirect=False,
                assert_same_host=False,
                preload_content=False,
            )
            complete = False
            try:
                complete = _read_some(response, started=started, total=total)
                status_code = response.status
            finally:
                if not complete:
                    response.close()  # not reusable: unread bytes are still on the wire
                response.release_conn()
            break
        except NewConnectionError as exc:
            # (urllib3 makes it a subclass of its connect timeout: caught first.)
            if number < len(destination.addresses):
                continue
            reason = exc.__cause__ or exc
            return Outcome(None, _error_text(f"ConnectionError: {address}: {reason}"), elapsed_ms())
        except Urllib3Timeout:
            return Outcome(None, f"Timed out after {total:g} s", elapsed_ms())
        except SSLError as exc:
            return Outcome(None, _error_text(f"SSLError: {exc}"), elapsed_ms())
        except ProtocolError as exc:
            return Outcome(None, _error_text(f"ConnectionError: {exc}"), elapsed_ms())
        except HTTPError as exc:
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
        # Checked again at delivery time, resolving once: the connection goes to these
        # addresses, so a DNS answer that changed since (rebinding) is never used.
        destination = netguard.webhook_destination(delivery.url)
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
    return _post(destination, request)


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
    elif outcome.permanent or attempt_in_round >= len(queueing.retry_schedule()):
        status = DeliveryStatus.FAILED
        metrics.webhook_attempt_recorded("failed")
    else:
        metrics.webhook_attempt_recorded("retry")
        due = queueing.attempt_due_at(
            schedule_start=delivery.schedule_start, attempt_in_round=attempt_in_round + 1
        )
        next_attempt_at = max(due, now)
    # A retry due before the sweep could see it is queued now, with a countdown to its due
    # time; a later one is queued by the sweep that runs just before it is due.
    queued_at = None
    if next_attempt_at is not None and next_attempt_at <= now + queueing.countdown_horizon():
        queued_at = now
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
                "queued_at": queued_at,
                "now": now,
                "api_key_id": delivery.api_key.id,
            },
        )
        updated, handed_over = cursor.fetchone()
    if not updated:
        logger.info("webhook delivery %s was redelivered during attempt %s", delivery.id, number)
    elif queued_at is not None:
        queueing.delivery_enqueue_on_commit(delivery.id, eta=next_attempt_at)
    if handed_over is not None:
        queueing.delivery_enqueue_on_commit(handed_over)


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
