"""A test event sent at once to a key's webhook URL (docs/contract.md "Management API").

It is an ordinary event with an ordinary delivery, sent by the Celery worker through the same
path as every other attempt (the address check, the timeout, both families' signatures and the
Standard Webhooks headers) and recorded the same way. Unlike other deliveries its first round
is one attempt only (sending._next_state): a partner pressing "test" wants the answer now, not
five retries over two hours. A failed test ends `failed` and can be redelivered like any
delivery.

The web worker never makes the HTTP call itself (a receiver that hangs would hold it for the
whole timeout): it queues the attempt and watches the delivery's row for at most
WEBHOOK_TEST_WAIT_SECONDS, then answers with what it knows.
"""

import time
import uuid
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from delivery import fairness
from tenants.errors import ApiKeyRevoked
from tenants.models import ApiKey, Platform
from webhooks import catalog, queueing, services
from webhooks.errors import WebhookUrlMissing
from webhooks.models import Delivery, DeliveryAttempt, DeliveryStatus, Event, Family

#: how often the web worker reads the test delivery's row while it waits
POLL_SECONDS = 0.05


def waiting_timed_out(wait_seconds: float) -> str:
    """The error of a test whose attempt started but did not end within the wait."""
    return (
        f"Timed out after {wait_seconds:g} s waiting for the receiver; the attempt goes on "
        "and is recorded in the deliveries"
    )


def waiting_not_started(wait_seconds: float) -> str:
    """The error of a test that no worker started within the wait (its destination at its
    in-flight limit, or every worker thread busy): it is sent as soon as one can."""
    return (
        f"Not sent within {wait_seconds:g} s (the destination or the workers are busy); the "
        "test event is queued and its attempt is recorded in the deliveries"
    )


@dataclass(frozen=True)
class TestWebhookResult:
    delivery: Delivery
    delivered: bool
    status_code: int | None
    latency_ms: int
    error: str | None


@transaction.atomic
def _test_delivery_create(*, api_key: ApiKey) -> Delivery:
    now = timezone.now()
    event = Event.objects.create(
        organization_id=api_key.organization_id,
        family=Family.ERP if api_key.platform == Platform.ERP else Family.PARTNER,
        name=catalog.TEST_EVENT,
        event_id=f"evt_{uuid.uuid4().hex}",
        payload={
            "test": True,
            "apiKeyId": str(api_key.id),
            "message": "A test event sent at your request: your endpoint is reachable.",
        },
        created_at=now,
        updated_at=now,
    )
    delivery = Delivery(
        organization_id=api_key.organization_id,
        event=event,
        api_key=api_key,
        url=api_key.webhook_url,
        created_at=now,
    )
    # Due now and marked queued, so the sweep leaves it to us; no message is published.
    services.delivery_round_start(delivery, now=now)
    delivery.save(force_insert=True)
    return delivery


def api_key_webhook_test(*, api_key: ApiKey) -> TestWebhookResult:
    """Queues a signed `webhook.test` event to the key's URL and reports how its attempt went,
    waiting for it at most WEBHOOK_TEST_WAIT_SECONDS (then `delivered` false with an error
    saying so, while the worker goes on and records the attempt).

    400 `API key has no webhook URL`; 409 `API key is revoked`. Whatever the key's event
    filter, the test event is sent. Not to be called inside a transaction (the worker must see
    the delivery, and the wait reads its row as the worker writes it).
    """
    if not api_key.is_active:
        raise ApiKeyRevoked()
    if not api_key.webhook_url:
        raise WebhookUrlMissing()
    delivery = _test_delivery_create(api_key=api_key)
    started = time.monotonic()
    queueing.delivery_enqueue(delivery.id)
    return _test_result_wait(delivery, started=started)


def _test_result_wait(delivery: Delivery, *, started: float) -> TestWebhookResult:
    """Reads the test delivery's row until its attempt is recorded (the delivery is no longer
    pending: a test's first round has one attempt) or the wait is over."""
    wait_seconds = float(settings.WEBHOOK_TEST_WAIT_SECONDS)
    deadline = started + wait_seconds
    # Seconds of waiting: the tenant's other requests in this web worker go meanwhile.
    with fairness.turn_given_up():
        while True:
            delivery.refresh_from_db(
                fields=["status", "attempts", "claim_token", "last_status_code"]
            )
            if delivery.status != DeliveryStatus.PENDING or time.monotonic() >= deadline:
                break
            time.sleep(min(POLL_SECONDS, max(0.0, deadline - time.monotonic())))
    if delivery.status == DeliveryStatus.PENDING:
        waited_ms = int((time.monotonic() - started) * 1000)
        started_sending = delivery.claim_token is not None or delivery.attempts > 0
        error = waiting_timed_out if started_sending else waiting_not_started
        return TestWebhookResult(delivery, False, None, waited_ms, error(wait_seconds))
    attempt = DeliveryAttempt.objects.filter(delivery=delivery).order_by("-number", "-id").first()
    return TestWebhookResult(
        delivery=delivery,
        delivered=delivery.status == DeliveryStatus.DELIVERED,
        status_code=attempt.status_code if attempt else None,
        latency_ms=attempt.latency_ms if attempt else 0,
        error=(attempt.error or None) if attempt else None,
    )
