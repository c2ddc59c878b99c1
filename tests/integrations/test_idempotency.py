"""Idempotency-Key on Create Order (contract "Orders"): replay, 422, 409, concurrency, expiry."""

import json
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
import time_machine
from django.db import connection
from django.utils import timezone

from integrations.models import IdempotencyKey, IdempotencyStatus, Order
from integrations.services.idempotency import idempotency_keys_expire, request_fingerprint
from integrations.tasks import expire_idempotency_keys
from tests import builders
from tests.conftest import assert_error
from webhooks.models import Event

ORDERS = "/api/integrations/partner-a/orders"


def post(client, body, key):
    return client.post(ORDERS, body, format="json", HTTP_IDEMPOTENCY_KEY=key)


def assert_created_not_replayed(response) -> None:
    """A new order: 201 from this request itself, not a replay of a stored answer."""
    assert response.status_code == 201, response.content
    assert "Idempotent-Replayed" not in response.headers


@pytest.fixture
def client(organization):
    builders.zone(organization)
    return builders.partner_client(organization)


@pytest.mark.django_db
def test_repeat_with_the_same_key_and_body_replays_the_first_response(client, organization):
    first = post(client, builders.partner_order(), "key-1")
    second = post(client, builders.partner_order(), "key-1")

    assert_created_not_replayed(first)
    assert second.status_code == 201
    assert second.headers["Idempotent-Replayed"] == "true"
    assert second.json() == first.json()
    assert Order.objects.count() == 1
    assert len(builders.events_named("order.created", organization)) == 1


@pytest.mark.django_db
def test_replay_ignores_key_order_and_spacing_of_the_body(client):
    body = builders.partner_order()
    assert post(client, body, "key-1").status_code == 201

    reordered = dict(reversed(list(body.items())))
    response = client.post(
        ORDERS,
        json.dumps(reordered, indent=4),
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY="key-1",
    )

    assert response.status_code == 201, response.content
    assert response.headers["Idempotent-Replayed"] == "true"


@pytest.mark.django_db
def test_same_key_with_a_different_body_is_422(client):
    assert post(client, builders.partner_order(), "key-1").status_code == 201

    response = post(client, builders.partner_order(recipientName="Someone Else"), "key-1")

    assert_error(response, 422, "Idempotency-Key was already used with a different request body")
    assert Order.objects.count() == 1


def post_over_a_claim(organization, body: dict, *, locked_at=None):
    """POSTs `body` with Idempotency-Key `key-1` of a new partner_b key while the row of a first
    request with that key (the default order body) says it is still working, or, with
    `locked_at`, that it died then."""
    issued = builders.api_key(organization, "partner_b")
    path = "/api/integrations/partner-b/orders"
    IdempotencyKey.objects.create(
        api_key=issued.api_key,
        key="key-1",
        request_hash=request_fingerprint(method="POST", path=path, body=builders.partner_order()),
        locked_at=locked_at or timezone.now(),
    )
    return builders.key_client(issued).post(path, body, format="json", HTTP_IDEMPOTENCY_KEY="key-1")


@pytest.mark.django_db
def test_same_key_while_the_first_request_runs_is_409(client, organization):
    response = post_over_a_claim(organization, builders.partner_order())

    assert_error(response, 409, "A request with this Idempotency-Key is in progress")
    assert not Order.objects.exists()


@pytest.mark.django_db
def test_different_body_while_the_first_request_runs_is_422(client, organization):
    response = post_over_a_claim(organization, builders.partner_order(notes="changed"))

    assert_error(response, 422, "Idempotency-Key was already used with a different request body")


@pytest.mark.django_db
def test_a_claim_abandoned_by_a_dead_request_is_taken_over_after_its_lease(client, organization):
    response = post_over_a_claim(
        organization, builders.partner_order(), locked_at=timezone.now() - timedelta(minutes=5)
    )

    assert response.status_code == 201, response.content
    row = IdempotencyKey.objects.get(key="key-1")
    assert row.status == IdempotencyStatus.COMPLETED
    assert row.response_status == 201
    assert row.response_body["id"] == response.json()["id"]


@pytest.mark.django_db
def test_keys_are_scoped_to_the_api_key(client, organization, other_organization):
    builders.zone(other_organization)
    theirs = builders.partner_client(other_organization)

    assert post(client, builders.partner_order(), "shared-key").status_code == 201
    response = post(theirs, builders.partner_order(recipientName="Other Org"), "shared-key")

    assert_created_not_replayed(response)
    assert Order.objects.count() == 2


@pytest.mark.django_db
def test_a_failed_request_releases_its_key(client):
    invalid = post(client, builders.partner_order(recipientPhone="nope"), "key-1")
    assert invalid.status_code == 400

    fixed = post(client, builders.partner_order(), "key-1")

    assert_created_not_replayed(fixed)


@pytest.mark.django_db
def test_a_conflict_is_not_stored_either(client):
    assert client.post(ORDERS, builders.partner_order(), format="json").status_code == 201

    duplicate = post(client, builders.partner_order(), "key-1")

    assert_error(duplicate, 409, "Order with externalRef PO-1001 already exists")
    assert not IdempotencyKey.objects.exists()


@pytest.mark.django_db
def test_without_a_key_a_repeat_is_a_duplicate_external_ref(client):
    assert client.post(ORDERS, builders.partner_order(), format="json").status_code == 201

    response = client.post(ORDERS, builders.partner_order(), format="json")

    assert_error(response, 409, "Order with externalRef PO-1001 already exists")


@pytest.mark.django_db
@pytest.mark.parametrize("key", ["", "k" * 256, "clé"])
def test_malformed_idempotency_key_is_400(client, key):
    response = post(client, builders.partner_order(), key)

    assert_error(response, 400, ["Idempotency-Key must be 1 to 255 printable ASCII characters"])


def posted_25_hours_ago(client, key: str):
    with time_machine.travel(timezone.now() - timedelta(hours=25), tick=False):
        return post(client, builders.partner_order(), key)


@pytest.mark.django_db
def test_keys_expire_after_24_hours(client, caplog):
    assert posted_25_hours_ago(client, "old-key").status_code == 201
    assert post(client, builders.partner_order(externalRef="PO-2"), "fresh-key").status_code == 201
    caplog.set_level(logging.INFO)

    assert expire_idempotency_keys() == 1
    assert expire_idempotency_keys() == 0

    # The periodic task writes one line when it deleted keys, none when there were none.
    assert [
        (r.getMessage(), r.fields) for r in caplog.records if r.name == "integrations.tasks"
    ] == [
        (
            "integrations.expire_idempotency_keys deleted 1 expired Idempotency-Keys",
            {"task": "integrations.expire_idempotency_keys", "deleted": 1},
        )
    ]

    assert list(IdempotencyKey.objects.values_list("key", flat=True)) == ["fresh-key"]


@pytest.mark.django_db
def test_expiry_goes_in_batches(client):
    """Retention's batches (delivery/retention.py): 5 expired keys, 2 a batch, all deleted."""
    for n in range(5):
        with time_machine.travel(timezone.now() - timedelta(hours=25, seconds=n), tick=False):
            body = builders.partner_order(externalRef=f"PO-{n}")
            assert post(client, body, f"key-{n}").status_code == 201

    assert idempotency_keys_expire(batch_size=2) == 5
    assert not IdempotencyKey.objects.exists()


@pytest.mark.django_db
def test_an_expired_key_not_yet_swept_is_a_new_key(client):
    assert posted_25_hours_ago(client, "key-1").status_code == 201

    response = post(client, builders.partner_order(externalRef="PO-2"), "key-1")

    assert_created_not_replayed(response)
    assert Order.objects.count() == 2


@pytest.mark.django_db
def test_expiry_keeps_keys_younger_than_24_hours(client):
    assert post(client, builders.partner_order(), "key-1").status_code == 201

    assert idempotency_keys_expire(now=timezone.now() + timedelta(hours=23)) == 0
    assert idempotency_keys_expire(now=timezone.now() + timedelta(hours=24, seconds=1)) == 1


@pytest.mark.django_db(transaction=True)
def test_concurrent_requests_with_one_key_create_exactly_one_order(organization):
    builders.zone(organization)
    issued = builders.api_key(organization, "partner_a")
    threads = 12
    barrier = threading.Barrier(threads)

    def attempt(_):
        try:
            barrier.wait()
            response = builders.key_client(issued).post(
                ORDERS, builders.partner_order(), format="json", HTTP_IDEMPOTENCY_KEY="race-key"
            )
            return response.status_code, response.headers.get("Idempotent-Replayed"), response
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=threads) as pool:
        results = list(pool.map(attempt, range(threads)))

    statuses = sorted(status for status, _, _ in results)
    created = [r for status, replayed, r in results if status == 201 and replayed is None]
    assert len(created) == 1
    assert set(statuses) <= {201, 409}
    for status, _, response in results:
        if status == 409:
            assert response.json()["message"] == (
                "A request with this Idempotency-Key is in progress"
            )
        if status == 201:
            assert response.json()["id"] == created[0].json()["id"]
    assert Order.objects.count() == 1
    assert Event.objects.filter(name="order.created").count() == 1


@pytest.mark.django_db(transaction=True)
def test_concurrent_retries_after_the_first_finished_all_replay(organization):
    builders.zone(organization)
    issued = builders.api_key(organization, "partner_a")
    first = builders.key_client(issued).post(
        ORDERS, builders.partner_order(), format="json", HTTP_IDEMPOTENCY_KEY="retry-key"
    )
    assert first.status_code == 201

    def retry(_):
        try:
            response = builders.key_client(issued).post(
                ORDERS, builders.partner_order(), format="json", HTTP_IDEMPOTENCY_KEY="retry-key"
            )
            return response.status_code, response.headers.get("Idempotent-Replayed")
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(retry, range(8)))

    assert results == [(201, "true")] * 8
    assert Order.objects.count() == 1
