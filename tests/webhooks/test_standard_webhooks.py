"""Standard Webhooks headers beside the contract's signatures, checked by the specification's
own Python library (`standardwebhooks` from PyPI), not by our code."""

import base64
import secrets
from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from delivery.encryption import encrypt_text
from tenants.models import ApiKey
from tests import builders
from tests.webhooks.conftest import independent_hmac_hex
from webhooks import events as webhook_events
from webhooks import tasks
from webhooks.models import Delivery

pytestmark = pytest.mark.django_db


def emit_order_created(organization, ref="SO-1"):
    builders.order_event(organization, ref)


def deliver_all(organization) -> None:
    for delivery in Delivery.objects.filter(organization=organization):
        assert tasks.deliver(str(delivery.id)) is True


def test_new_webhook_secrets_are_in_the_specifications_form(organization):
    issued = builders.api_key(organization, "partner_a")
    assert issued.webhook_secret.startswith("whsec_")
    key = base64.b64decode(issued.webhook_secret.removeprefix("whsec_"), validate=True)
    assert len(key) == 32


def test_partner_delivery_verifies_with_the_standard_webhooks_library(organization, receiver):
    issued = builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    emit_order_created(organization)
    deliver_all(organization)

    (request,) = receiver.wait_for(1)
    document = Webhook(issued.webhook_secret).verify(request.body, request.headers)
    assert document == request.json
    assert request.headers["Webhook-Id"] == request.json["id"]
    assert abs(int(request.headers["Webhook-Timestamp"]) - timezone.now().timestamp()) < 5
    # The contract's signature is still there, unchanged.
    assert request.headers["X-Service-Signature"] == (
        f"sha256={independent_hmac_hex(issued.webhook_secret, request.body)}"
    )


def test_erp_delivery_verifies_with_the_standard_webhooks_library(organization, receiver):
    issued = builders.api_key(organization, "erp", webhook_url=receiver.url)
    webhook_events.polygon_updated_emit(zone=builders.zone_row(organization, "North"))
    deliver_all(organization)

    (request,) = receiver.wait_for(1)
    # Keyed with the ERP key's webhook secret; the contract's header keeps the key value.
    document = Webhook(issued.webhook_secret).verify(request.body, request.headers)
    assert document["event"] == "erp.polygon.updated"
    assert request.headers["Webhook-Id"] == document["eventId"]
    assert request.headers["X-Webhook-Signature"] == independent_hmac_hex(
        issued.value, request.body
    )


def test_a_replayed_delivery_is_rejected_by_the_library(organization, receiver):
    issued = builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    emit_order_created(organization)
    deliver_all(organization)
    (request,) = receiver.wait_for(1)
    webhook = Webhook(issued.webhook_secret)
    webhook.verify(request.body, request.headers)

    # The same bytes and headers, presented six minutes later (the library allows five).
    with (
        time_machine.travel(timezone.now() + timedelta(minutes=6)),
        pytest.raises(WebhookVerificationError, match="too old"),
    ):
        webhook.verify(request.body, request.headers)


def test_an_altered_delivery_is_rejected_by_the_library(organization, receiver):
    issued = builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    emit_order_created(organization, ref="SO-1")
    deliver_all(organization)
    (request,) = receiver.wait_for(1)
    webhook = Webhook(issued.webhook_secret)

    altered = request.body.replace(b"SO-1", b"SO-2")
    assert altered != request.body
    with pytest.raises(WebhookVerificationError, match="No matching signature"):
        webhook.verify(altered, request.headers)
    # A signature of another timestamp does not verify either (no swapping headers).
    # (one second before the signed one: "now - 1" equals it when the attempt took a second)
    signed_at = int(request.headers["Webhook-Timestamp"])
    headers = {**request.headers, "Webhook-Timestamp": str(signed_at - 1)}
    with pytest.raises(WebhookVerificationError, match="No matching signature"):
        webhook.verify(request.body, headers)
    # Nor does another key's secret.
    other = builders.api_key(organization, "partner_b")
    with pytest.raises(WebhookVerificationError):
        Webhook(other.webhook_secret).verify(request.body, request.headers)


def test_each_attempt_is_signed_at_its_own_time_under_the_same_id(organization, receiver):
    issued = builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    receiver.statuses = [503]
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        emit_order_created(organization)
        deliver_all(organization)
    with time_machine.travel(start + timedelta(seconds=61), tick=False):
        deliver_all(organization)

    first, second = receiver.wait_for(2)
    assert first.headers["Webhook-Id"] == second.headers["Webhook-Id"]
    assert int(second.headers["Webhook-Timestamp"]) - int(first.headers["Webhook-Timestamp"]) == 61
    with time_machine.travel(start + timedelta(seconds=62), tick=False):
        Webhook(issued.webhook_secret).verify(second.body, second.headers)


def test_a_secret_issued_before_maps_to_the_specifications_form(organization, receiver):
    """Older secrets were `whsec_` + URL-safe base64 without padding: the same 32 bytes,
    written in the specification's form as docs/webhooks.md shows."""
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    legacy_secret = f"whsec_{secrets.token_urlsafe(32)}"
    ApiKey.objects.filter(organization=organization).update(
        encrypted_webhook_secret=encrypt_text(legacy_secret)
    )
    emit_order_created(organization)
    deliver_all(organization)
    (request,) = receiver.wait_for(1)

    # The snippet of docs/webhooks.md, verbatim.
    raw = legacy_secret.removeprefix("whsec_")
    key = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4))
    converted = "whsec_" + base64.b64encode(key).decode()
    Webhook(converted).verify(request.body, request.headers)
    # The contract's signature is keyed with the secret string as it always was.
    assert request.headers["X-Service-Signature"] == (
        f"sha256={independent_hmac_hex(legacy_secret, request.body)}"
    )
