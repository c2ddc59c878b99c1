"""A test event sent at once to a key's webhook URL (docs/contract.md "Management API").

It is an ordinary event with an ordinary delivery, sent through the same path as every other
attempt (`sending.delivery_attempt`: the address check, the timeout, both families' signatures
and the Standard Webhooks headers) and recorded the same way. Unlike other deliveries it gets
one attempt only: a partner pressing "test" wants the answer now, not five retries over two
hours. A failed test ends `failed` and can be redelivered like any delivery.
"""

import uuid
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from tenants.errors import ApiKeyRevoked
from tenants.models import ApiKey, Platform
from webhooks import catalog, sending, services
from webhooks.errors import WebhookUrlMissing
from webhooks.models import Delivery, DeliveryAttempt, DeliveryStatus, Event, Family

#: the error of a test whose destination was at its in-flight limit: it is sent when a slot frees
DESTINATION_BUSY = "Destination is busy (too many attempts in flight); the test event is queued"


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
    """Sends a signed `webhook.test` event to the key's URL now and reports how it went.

    400 `API key has no webhook URL`; 409 `API key is revoked`. Whatever the key's event
    filter, the test event is sent. Not to be called inside a transaction (the HTTP call would
    hold it open).
    """
    if not api_key.is_active:
        raise ApiKeyRevoked()
    if not api_key.webhook_url:
        raise WebhookUrlMissing()
    delivery = _test_delivery_create(api_key=api_key)
    if not sending.delivery_attempt(delivery_id=delivery.id):
        # Its destination is at the in-flight limit: the delivery is parked and sent, with the
        # usual retries, as soon as a slot frees.
        return TestWebhookResult(delivery, False, None, 0, DESTINATION_BUSY)
    # One attempt only: a test that failed ends `failed` instead of waiting for its retry.
    Delivery.objects.filter(
        pk=delivery.pk, status=DeliveryStatus.PENDING, claim_token__isnull=True
    ).update(status=DeliveryStatus.FAILED, next_attempt_at=None)
    delivery.refresh_from_db()
    attempt = DeliveryAttempt.objects.filter(delivery=delivery).order_by("-number", "-id").first()
    return TestWebhookResult(
        delivery=delivery,
        delivered=delivery.status == DeliveryStatus.DELIVERED,
        status_code=attempt.status_code if attempt else None,
        latency_ms=attempt.latency_ms if attempt else 0,
        error=(attempt.error or None) if attempt else None,
    )
