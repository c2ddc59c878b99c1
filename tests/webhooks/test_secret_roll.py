"""Rolling a key's webhook secret without downtime (docs/webhooks.md "Rolling the secret"): the
deliveries a real local receiver gets are checked with the specification's own library
(`standardwebhooks` from PyPI) and an HMAC written out in the tests, not with our signing code."""

from datetime import timedelta

import pytest
from django.utils import timezone
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from delivery.encryption import decrypt_text
from tenants.models import ApiKey
from tests import builders
from tests.conftest import assert_error
from tests.webhooks.conftest import independent_hmac_hex
from webhooks import events as webhook_events
from webhooks import tasks
from webhooks.models import Delivery, DeliveryStatus

pytestmark = pytest.mark.django_db


def roll_path(organization, api_key_id) -> str:
    return f"/api/manage/organizations/{organization.id}/api-keys/{api_key_id}/webhook-secret/roll"


def roll(manager, organization, issued, body=None):
    response = manager.post(roll_path(organization, issued.api_key.id), body, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def deliver_pending(organization) -> None:
    for delivery in Delivery.objects.filter(organization=organization, status="pending"):
        tasks.deliver(str(delivery.id))


def order_created_delivered(organization, receiver, ref: str):
    """An order.created sent now through the worker's path; the request the receiver got."""
    count = len(receiver.requests)
    builders.order_event(organization, ref)
    deliver_pending(organization)
    return receiver.wait_for(count + 1)[-1]


def verifies(secret: str, request) -> bool:
    try:
        Webhook(secret).verify(request.body, request.headers)
    except WebhookVerificationError:
        return False
    return True


def test_during_the_overlap_receivers_on_either_secret_verify(organization, manager, receiver):
    issued = builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    old = issued.webhook_secret

    new = roll(manager, organization, issued, {"overlapHours": 24})["webhookSecret"]
    request = order_created_delivered(organization, receiver, "SO-1")

    assert new != old
    assert verifies(old, request)
    assert verifies(new, request)
    entries = request.headers["Webhook-Signature"].split(" ")
    assert len(entries) == 2
    assert verifies(new, _with_signature(request, entries[0]))  # the new secret's comes first
    assert not verifies(new, _with_signature(request, entries[1]))
    # The contract's one-signature header stays on the old secret while the overlap lasts.
    assert request.headers["X-Service-Signature"] == (
        f"sha256={independent_hmac_hex(old, request.body)}"
    )


def _with_signature(request, signature: str):
    class Only:
        body = request.body
        headers = {**request.headers, "Webhook-Signature": signature}

    return Only


def test_after_the_overlap_only_the_new_secret_signs(traveller, organization, manager, receiver):
    issued = builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    old = issued.webhook_secret
    new = roll(manager, organization, issued, {"overlapHours": 2})["webhookSecret"]

    traveller.move_to(builders.NOW + timedelta(hours=2, seconds=1))
    request = order_created_delivered(organization, receiver, "SO-1")

    assert verifies(new, request)
    assert not verifies(old, request)
    assert " " not in request.headers["Webhook-Signature"]
    assert request.headers["X-Service-Signature"] == (
        f"sha256={independent_hmac_hex(new, request.body)}"
    )


def test_a_retry_after_the_overlap_is_signed_by_the_new_secret_only(
    traveller, organization, manager, receiver
):
    issued = builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    old = issued.webhook_secret
    new = roll(manager, organization, issued, {"overlapHours": 1})["webhookSecret"]
    receiver.statuses = [503]

    first = order_created_delivered(organization, receiver, "SO-1")
    assert verifies(old, first) and verifies(new, first)
    traveller.move_to(builders.NOW + timedelta(hours=1, minutes=1))
    deliver_pending(organization)
    retry = receiver.wait_for(2)[-1]

    assert first.body == retry.body
    assert verifies(new, retry)
    assert not verifies(old, retry)
    assert retry.headers["X-Service-Signature"] == (
        f"sha256={independent_hmac_hex(new, retry.body)}"
    )
    assert Delivery.objects.get(organization=organization).status == DeliveryStatus.DELIVERED


def test_overlap_zero_switches_at_once(organization, manager, receiver):
    issued = builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    body = roll(manager, organization, issued, {"overlapHours": 0})

    request = order_created_delivered(organization, receiver, "SO-1")

    assert body["previousSecretExpiresAt"] is None
    assert verifies(body["webhookSecret"], request)
    assert not verifies(issued.webhook_secret, request)
    assert request.headers["X-Service-Signature"] == (
        f"sha256={independent_hmac_hex(body['webhookSecret'], request.body)}"
    )


def test_erp_deliveries_carry_both_standard_signatures_and_keep_the_key_value_signature(
    organization, manager, receiver
):
    issued = builders.api_key(organization, "erp", webhook_url=receiver.url)
    new = roll(manager, organization, issued)["webhookSecret"]

    webhook_events.polygon_updated_emit(zone=builders.zone_row(organization, "North"))
    deliver_pending(organization)
    (request,) = receiver.wait_for(1)

    assert verifies(issued.webhook_secret, request)
    assert verifies(new, request)
    assert request.headers["X-Webhook-Signature"] == independent_hmac_hex(
        issued.value, request.body
    )


@pytest.mark.django_db(transaction=True)  # the worker sends it (webhooks/probes.py)
def test_the_test_event_is_signed_by_both_secrets_during_the_overlap(
    celery_worker, organization, manager, receiver
):
    issued = builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    new = roll(manager, organization, issued)["webhookSecret"]

    response = manager.post(
        f"/api/manage/organizations/{organization.id}/api-keys/{issued.api_key.id}/test-webhook"
    )
    (request,) = receiver.wait_for(1)

    assert response.json()["delivered"] is True
    assert request.json["event"] == "webhook.test"
    assert verifies(issued.webhook_secret, request) and verifies(new, request)


def test_the_answer_is_the_listed_key_with_the_new_secret_and_the_overlap_end(
    traveller, organization, manager
):
    issued = builders.api_key(organization, "partner_a", webhook_url="https://hooks.example/a")
    listed = manager.get(f"/api/manage/organizations/{organization.id}/api-keys").json()[0]

    body = roll(manager, organization, issued)

    assert body == {
        **listed,
        "webhookSecret": body["webhookSecret"],
        "previousSecretExpiresAt": "2030-01-02T09:00:00Z",  # NOW + the default 24 hours
    }
    assert body["webhookSecret"].startswith("whsec_")
    stored = ApiKey.objects.get(pk=issued.api_key.pk)
    # Both secrets are stored encrypted, never as they are.
    assert issued.webhook_secret not in stored.encrypted_previous_webhook_secret
    assert decrypt_text(stored.encrypted_previous_webhook_secret) == issued.webhook_secret
    assert decrypt_text(stored.encrypted_webhook_secret) == body["webhookSecret"]
    assert stored.previous_webhook_secret_expires_at == builders.NOW + timedelta(hours=24)
    assert decrypt_text(stored.encrypted_value) == issued.value  # the key value stays


def test_rolling_again_during_the_overlap_keeps_the_newest_previous_secret(
    organization, manager, receiver
):
    issued = builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    second = roll(manager, organization, issued, {"overlapHours": 24})["webhookSecret"]
    third = roll(manager, organization, issued, {"overlapHours": 24})["webhookSecret"]

    request = order_created_delivered(organization, receiver, "SO-1")

    assert verifies(third, request)
    assert verifies(second, request)
    assert not verifies(issued.webhook_secret, request)
    assert request.headers["X-Service-Signature"] == (
        f"sha256={independent_hmac_hex(second, request.body)}"
    )


def test_rotating_the_key_ends_a_pending_overlap(
    organization, manager, provisioning_client, receiver
):
    issued = builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    roll(manager, organization, issued, {"overlapHours": 24})

    rotated = provisioning_client.post(
        f"/api/provisioning/organizations/{organization.id}/api-keys/{issued.api_key.id}/rotate"
    ).json()
    request = order_created_delivered(organization, receiver, "SO-1")

    assert verifies(rotated["webhookSecret"], request)
    assert " " not in request.headers["Webhook-Signature"]
    assert request.headers["X-Service-Signature"] == (
        f"sha256={independent_hmac_hex(rotated['webhookSecret'], request.body)}"
    )
    stored = ApiKey.objects.get(pk=issued.api_key.pk)
    assert stored.encrypted_previous_webhook_secret == ""
    assert stored.previous_webhook_secret_expires_at is None


@pytest.mark.parametrize(
    ("body", "hours"),
    [({"overlapHours": 0}, 0), ({"overlapHours": 168}, 168), (None, 24), ({}, 24)],
)
def test_overlap_hours_within_bounds_is_accepted(traveller, organization, manager, body, hours):
    issued = builders.api_key(organization, "partner_a")

    answer = roll(manager, organization, issued, body)

    expected = None if hours == 0 else builders.NOW + timedelta(hours=hours)
    stored = ApiKey.objects.get(pk=issued.api_key.pk)
    assert stored.previous_webhook_secret_expires_at == expected
    if expected is not None:
        assert answer["previousSecretExpiresAt"] == expected.isoformat().replace("+00:00", "Z")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (169, "overlapHours: must be between 0 and 168"),
        (-1, "overlapHours: must be between 0 and 168"),
        (2**63, "overlapHours: must be between 0 and 168"),
        ("24", "overlapHours: must be an integer"),
        (None, "overlapHours: must be an integer"),
        (True, "overlapHours: must be an integer"),
        (1.5, "overlapHours: must be an integer"),
    ],
)
def test_overlap_hours_outside_its_range_or_not_an_integer_is_a_400(
    organization, manager, value, message
):
    issued = builders.api_key(organization, "partner_a")
    before = ApiKey.objects.get(pk=issued.api_key.pk).encrypted_webhook_secret

    response = manager.post(
        roll_path(organization, issued.api_key.id), {"overlapHours": value}, format="json"
    )

    assert_error(response, 400, message)
    assert ApiKey.objects.get(pk=issued.api_key.pk).encrypted_webhook_secret == before


def test_a_body_that_is_not_an_object_is_a_400(organization, manager):
    issued = builders.api_key(organization, "partner_a")
    response = manager.post(roll_path(organization, issued.api_key.id), [24], format="json")
    assert_error(response, 400)


def test_another_organizations_key_is_not_found(organization, other_organization, manager):
    theirs = builders.api_key(other_organization, "partner_a")
    before = ApiKey.objects.get(pk=theirs.api_key.pk).encrypted_webhook_secret

    response = manager.post(roll_path(organization, theirs.api_key.id), {}, format="json")

    assert_error(response, 404, "API key not found")
    assert ApiKey.objects.get(pk=theirs.api_key.pk).encrypted_webhook_secret == before


def test_a_revoked_key_cannot_be_rolled(organization, manager, provisioning_client):
    issued = builders.api_key(organization, "partner_a")
    revoked = provisioning_client.delete(
        f"/api/provisioning/organizations/{organization.id}/api-keys/{issued.api_key.id}"
    )
    assert revoked.status_code == 200

    response = manager.post(roll_path(organization, issued.api_key.id), {}, format="json")

    assert_error(response, 409, "API key is revoked")


def test_rolling_needs_an_admin_token(organization, api_client):
    issued = builders.api_key(organization, "partner_a")
    response = api_client.post(roll_path(organization, issued.api_key.id), {}, format="json")
    assert_error(response, 401)


def test_an_expired_overlap_is_not_used_even_when_stored(organization, manager, receiver):
    """The expiry, not a cleanup job, ends the overlap: a previous secret past its time is
    ignored at the attempt."""
    issued = builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    new = roll(manager, organization, issued)["webhookSecret"]
    ApiKey.objects.filter(pk=issued.api_key.pk).update(
        previous_webhook_secret_expires_at=timezone.now() - timedelta(seconds=1)
    )

    request = order_created_delivered(organization, receiver, "SO-1")

    assert verifies(new, request)
    assert not verifies(issued.webhook_secret, request)
