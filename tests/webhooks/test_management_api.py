"""Delivery records in the management API (contract "Webhooks", "Management API")."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from rest_framework.test import APIClient

from tests import builders
from tests.conftest import assert_error
from webhooks import tasks
from webhooks.models import Delivery, DeliveryStatus

pytestmark = pytest.mark.django_db

T0 = datetime(2030, 3, 4, 10, 0, tzinfo=UTC)


def emit(organization, ref: str) -> Delivery:
    builders.order_event(organization, ref, order_id=f"order-{ref}")
    return Delivery.objects.select_related("event").filter(organization=organization).first()


def url(organization, suffix: str = "") -> str:
    return f"/api/manage/organizations/{organization.id}/webhook-deliveries{suffix}"


def test_list_shows_deliveries_newest_first(organization, receiver):
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    client = builders.manager_client(organization)
    with time_machine.travel(T0, tick=False) as clock:
        older = emit(organization, "A")
        clock.move_to(T0 + timedelta(minutes=1))
        newer = emit(organization, "B")
        receiver.statuses = [503]
        tasks.deliver(str(newer.id))

    response = client.get(url(organization))
    assert response.status_code == 200
    body = response.json()
    assert (body["page"], body["pageSize"], body["total"]) == (1, 50, 2)
    assert body["items"] == [
        {
            "id": str(newer.id),
            "eventId": newer.event.event_id,
            "event": "order.created",
            "url": receiver.url,
            "status": "pending",
            "attempts": 1,
            "lastStatusCode": 503,
            "lastError": "HTTP 503",
            "nextAttemptAt": "2030-03-04T10:02:00Z",
            "deliveredAt": None,
            "createdAt": "2030-03-04T10:01:00Z",
        },
        {
            "id": str(older.id),
            "eventId": older.event.event_id,
            "event": "order.created",
            "url": receiver.url,
            "status": "pending",
            "attempts": 0,
            "lastStatusCode": None,
            "lastError": None,
            "nextAttemptAt": "2030-03-04T10:00:00Z",
            "deliveredAt": None,
            "createdAt": "2030-03-04T10:00:00Z",
        },
    ]


def test_list_filters_by_status(organization, receiver):
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    client = builders.manager_client(organization)
    delivered = emit(organization, "A")
    tasks.deliver(str(delivered.id))
    emit(organization, "B")

    body = client.get(url(organization), {"status": "delivered"}).json()
    assert [item["id"] for item in body["items"]] == [str(delivered.id)]
    assert body["items"][0]["status"] == "delivered"
    assert body["items"][0]["deliveredAt"] is not None
    assert body["total"] == 1
    assert client.get(url(organization), {"status": "failed"}).json()["items"] == []


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"status": "lost"}, "status must be one of: pending, delivered, failed"),
        ({"page": "0"}, "page must be a positive integer"),
        ({"page": "x"}, "page must be a positive integer"),
        ({"page": "1_000"}, "page must be a positive integer"),
        ({"pageSize": "101"}, "pageSize must be an integer from 1 to 100"),
        ({"pageSize": "0_5"}, "pageSize must be an integer from 1 to 100"),
    ],
)
def test_bad_filters_are_400(organization, query, message):
    response = builders.manager_client(organization).get(url(organization), query)
    assert_error(response, 400, message)


def test_list_is_paginated(organization):
    builders.api_key(organization, "partner_a", webhook_url="http://127.0.0.1:9/a")
    client = builders.manager_client(organization)
    with time_machine.travel(T0, tick=False) as clock:
        for n in range(5):
            clock.move_to(T0 + timedelta(seconds=n))
            emit(organization, f"SO-{n}")
    first = client.get(url(organization), {"pageSize": 2}).json()
    third = client.get(url(organization), {"pageSize": 2, "page": 3}).json()
    assert first["total"] == third["total"] == 5
    refs = [
        Delivery.objects.get(pk=item["id"]).event.payload["externalRef"]
        for item in first["items"] + third["items"]
    ]
    assert refs == ["SO-4", "SO-3", "SO-0"]


def test_list_query_count_does_not_grow_with_data(organization, django_assert_max_num_queries):
    builders.api_key(organization, "partner_a", webhook_url="http://127.0.0.1:9/a")
    client = builders.manager_client(organization)
    emit(organization, "first")
    # 5: the in-flight limit's check that the token's admin administers the organization is one.
    with django_assert_max_num_queries(5) as few:
        client.get(url(organization))
    for n in range(30):
        emit(organization, f"SO-{n}")
    with django_assert_max_num_queries(len(few.captured_queries)):
        body = client.get(url(organization)).json()
    assert body["total"] == 31


def test_other_organizations_deliveries_are_invisible(organization, other_organization):
    builders.api_key(other_organization, "partner_a", webhook_url="http://127.0.0.1:9/a")
    theirs = emit(other_organization, "theirs")
    client = builders.manager_client(organization)
    assert client.get(url(organization)).json()["items"] == []
    response = client.post(url(organization, f"/{theirs.id}/redeliver"))
    assert_error(response, 404, "Delivery not found")
    # Their organization's path is not ours to read.
    assert_error(client.get(url(other_organization)), 404, "Organization not found")


@pytest.mark.parametrize("delivery_id", ["not-a-uuid", "6b9bc8a0-0000-4000-8000-000000000000"])
def test_redeliver_unknown_delivery_is_404(organization, delivery_id):
    response = builders.manager_client(organization).post(
        url(organization, f"/{delivery_id}/redeliver")
    )
    assert_error(response, 404, "Delivery not found")


def test_redeliver_answers_202_with_a_pending_delivery(
    organization, receiver, django_capture_on_commit_callbacks
):
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    with time_machine.travel(T0, tick=False) as clock:
        client = builders.manager_client(organization)
        delivery = emit(organization, "A")
        tasks.deliver(str(delivery.id))
        clock.move_to(T0 + timedelta(hours=1))
        with django_capture_on_commit_callbacks() as queued:
            response = client.post(url(organization, f"/{delivery.id}/redeliver/"))

    assert response.status_code == 202
    body = response.json()
    assert (body["id"], body["status"]) == (str(delivery.id), "pending")
    assert body["nextAttemptAt"] == "2030-03-04T11:00:00Z"
    assert body["deliveredAt"] is None
    assert body["attempts"] == 1  # the record of earlier attempts stays
    assert len(queued) == 1
    assert Delivery.objects.get(pk=delivery.id).status == DeliveryStatus.PENDING


def test_management_endpoints_need_a_token(organization):
    response = APIClient().get(url(organization))
    assert_error(response, 401, "Invalid or missing token")
