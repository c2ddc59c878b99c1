"""Send a test event: `POST /manage/organizations/:orgId/api-keys/:keyId/test-webhook` and the
admin action on keys, through the one sending path (the Celery worker's), recorded like every
attempt; the web worker waits for it at most WEBHOOK_TEST_WAIT_SECONDS."""

import threading
import time

import pytest
from django.db import connection
from standardwebhooks import Webhook

from tenants.services import api_key_revoke
from tests import builders
from tests.conftest import assert_error
from tests.webhooks.conftest import independent_hmac_hex
from webhooks.models import Delivery, DeliveryAttempt, DeliveryStatus

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_worker")]


@pytest.fixture
def client(organization):
    return builders.manager_client(organization, "admin@example.com")


def probe_url(organization, key) -> str:
    return f"/api/manage/organizations/{organization.id}/api-keys/{key.api_key.id}/test-webhook"


def test_a_test_event_is_sent_at_once_signed_and_recorded(client, organization, receiver):
    issued = builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    response = client.post(probe_url(organization, issued))

    assert response.status_code == 200, response.content
    body = response.json()
    assert set(body) == {"delivered", "statusCode", "latencyMs", "error"}
    assert body["delivered"] is True
    assert body["statusCode"] == 200
    assert body["error"] is None
    assert isinstance(body["latencyMs"], int)
    assert body["latencyMs"] >= 0

    (request,) = receiver.requests  # already there: sent before the answer
    document = Webhook(issued.webhook_secret).verify(request.body, request.headers)
    assert document["event"] == "webhook.test"
    assert document["payload"]["test"] is True
    assert request.headers["X-Service-Event"] == "webhook.test"
    assert request.headers["X-Service-Signature"] == (
        f"sha256={independent_hmac_hex(issued.webhook_secret, request.body)}"
    )

    # Recorded like every attempt, and listed with the organization's deliveries.
    delivery = Delivery.objects.select_related("event").get(organization=organization)
    assert (delivery.status, delivery.attempts, delivery.event.name) == (
        DeliveryStatus.DELIVERED,
        1,
        "webhook.test",
    )
    (attempt,) = DeliveryAttempt.objects.filter(delivery=delivery)
    assert (attempt.status_code, attempt.succeeded, attempt.latency_ms) == (
        200,
        True,
        body["latencyMs"],
    )
    listed = client.get(f"/api/manage/organizations/{organization.id}/webhook-deliveries").json()
    assert [(d["event"], d["status"]) for d in listed["items"]] == [("webhook.test", "delivered")]


def test_a_failing_receiver_is_reported_and_the_test_is_not_retried(client, organization, receiver):
    issued = builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    receiver.statuses = [503]
    body = client.post(probe_url(organization, issued)).json()

    assert body["delivered"] is False
    assert body["statusCode"] == 503
    assert body["error"] == "HTTP 503"
    delivery = Delivery.objects.get(organization=organization)
    assert (delivery.status, delivery.attempts, delivery.next_attempt_at) == (
        DeliveryStatus.FAILED,
        1,
        None,
    )
    assert delivery.last_status_code == 503


def test_an_unreachable_url_is_reported(client, organization):
    issued = builders.api_key(organization, "partner_a", webhook_url="http://127.0.0.1:9/hook")
    body = client.post(probe_url(organization, issued)).json()
    assert body["delivered"] is False
    assert body["statusCode"] is None
    assert body["error"].startswith("ConnectionError")


def test_a_slow_receiver_times_out_as_every_delivery_does(client, organization, receiver, settings):
    settings.WEBHOOK_TIMEOUT_SECONDS = 0.5
    receiver.delay_seconds = 1.5
    issued = builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    body = client.post(probe_url(organization, issued)).json()
    assert body["delivered"] is False
    assert body["error"] == "Timed out after 0.5 s"


def test_the_address_check_applies(client, organization, receiver, settings):
    issued = builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False
    body = client.post(probe_url(organization, issued)).json()
    assert body["delivered"] is False
    assert "private" in body["error"]
    assert receiver.requests == []


def test_an_erp_key_gets_the_erp_envelope(client, organization, receiver):
    issued = builders.api_key(organization, "erp", webhook_url=receiver.url)
    assert client.post(probe_url(organization, issued)).json()["delivered"] is True
    (request,) = receiver.requests
    assert request.json["event"] == "webhook.test"
    assert request.json["eventId"].startswith("evt_")
    assert request.headers["X-Webhook-Signature"] == independent_hmac_hex(
        issued.value, request.body
    )
    Webhook(issued.webhook_secret).verify(request.body, request.headers)


def test_the_test_event_is_sent_whatever_the_keys_filter(client, organization, receiver):
    issued = builders.api_key(
        organization, "partner_a", webhook_url=receiver.url, webhook_events=["order.failed"]
    )
    assert client.post(probe_url(organization, issued)).json()["delivered"] is True


def test_a_key_without_url_is_400(client, organization):
    issued = builders.api_key(organization, "partner_a")
    assert_error(client.post(probe_url(organization, issued)), 400, "API key has no webhook URL")
    assert not Delivery.objects.exists()


def test_a_revoked_key_is_409(client, organization, receiver):
    issued = builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    api_key_revoke(api_key=issued.api_key)
    assert_error(client.post(probe_url(organization, issued)), 409, "API key is revoked")
    assert receiver.requests == []


def test_another_organizations_key_is_404(client, organization, receiver):
    theirs = builders.api_key(builders.organization(), "partner_a", webhook_url=receiver.url)
    response = client.post(
        f"/api/manage/organizations/{organization.id}/api-keys/{theirs.api_key.id}/test-webhook"
    )
    assert_error(response, 404, "API key not found")
    assert_error(
        client.post(f"/api/manage/organizations/{organization.id}/api-keys/nope/test-webhook"),
        404,
        "API key not found",
    )
    assert receiver.requests == []


def test_admin_action_sends_a_test_event_to_each_selected_key(organization, receiver):
    with_url = builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    without_url = builders.api_key(organization, "erp")
    client = builders.admin_site_client(organization, "keys-admin@example.com")
    response = client.post(
        "/admin/tenants/apikey/",
        {
            "action": "send_test_webhook",
            "_selected_action": [str(with_url.api_key.pk), str(without_url.api_key.pk)],
        },
        follow=True,
    )
    assert response.status_code == 200
    text = response.content.decode()
    assert f"Key {with_url.api_key.name}: delivered to {receiver.url} (HTTP 200" in text
    assert f"Key {without_url.api_key.name}: has no webhook URL, nothing sent." in text
    (request,) = receiver.requests
    assert request.json["event"] == "webhook.test"
    assert Delivery.objects.filter(organization=organization).count() == 1


def test_a_hanging_receiver_gets_an_answer_within_the_wait_and_the_attempt_goes_on(
    client, organization, hanging_receiver, settings
):
    settings.WEBHOOK_TIMEOUT_SECONDS = 3
    issued = builders.api_key(organization, "partner_a", webhook_url=hanging_receiver.url)
    started = time.monotonic()
    body = client.post(probe_url(organization, issued)).json()
    waited = time.monotonic() - started

    assert body["delivered"] is False
    assert body["statusCode"] is None
    assert body["error"] == (
        "Timed out after 2 s waiting for the receiver; the attempt goes on and is recorded in "
        "the deliveries"
    )
    assert 2.0 <= waited < 3.0
    assert 2000 <= body["latencyMs"] < 3000
    assert len(hanging_receiver.connections) == 1  # the worker is on the wire

    # The worker's attempt ends at the delivery timeout, recorded as one failed attempt.
    delivery = Delivery.objects.get(organization=organization)
    deadline = time.monotonic() + 5
    while delivery.status == DeliveryStatus.PENDING and time.monotonic() < deadline:
        time.sleep(0.05)
        delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.next_attempt_at) == (
        DeliveryStatus.FAILED,
        1,
        None,
    )
    (attempt,) = DeliveryAttempt.objects.filter(delivery=delivery)
    assert attempt.error == "Timed out after 3 s"


def test_two_tests_to_a_hanging_receiver_wait_side_by_side(organization, hanging_receiver):
    """Neither call makes the HTTP call itself: both answer within the wait, together."""
    issued = builders.api_key(organization, "partner_a", webhook_url=hanging_receiver.url)
    answers: list[tuple[float, dict]] = []
    clients = [builders.manager_client(organization, f"admin{n}@example.com") for n in range(2)]

    def call(client) -> None:
        started = time.monotonic()
        body = client.post(probe_url(organization, issued))
        answers.append((time.monotonic() - started, body.json()))
        connection.close()

    started = time.monotonic()
    threads = [threading.Thread(target=call, args=(client,)) for client in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert time.monotonic() - started < 3.2
    assert [body["delivered"] for _, body in answers] == [False, False]
    assert all(waited < 3.0 for waited, _ in answers)
    assert len(hanging_receiver.connections) == 2


def test_the_admin_action_waits_at_most_the_wait_too(organization, hanging_receiver):
    issued = builders.api_key(organization, "partner_a", webhook_url=hanging_receiver.url)
    client = builders.admin_site_client(organization, "keys-admin@example.com")
    started = time.monotonic()
    response = client.post(
        "/admin/tenants/apikey/",
        {"action": "send_test_webhook", "_selected_action": [str(issued.api_key.pk)]},
        follow=True,
    )
    assert time.monotonic() - started < 3.0
    assert (
        f"Key {issued.api_key.name}: not delivered to {hanging_receiver.url} (Timed out after 2 s "
        "waiting for the receiver" in response.content.decode()
    )
