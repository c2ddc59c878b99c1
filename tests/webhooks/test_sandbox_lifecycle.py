"""The lifecycle sandbox end to end (docs/webhooks.md "Sandbox"): a real Celery worker takes the
steps on their schedule, a real receiver gets every webhook in order, and the public tracking
API ends on the final status."""

import itertools

import pytest

from integrations.models import Order
from tests import builders
from tests.webhooks.test_worker import wait_until

STEP_SECONDS = 1


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def sandbox_order(receiver, ref: str):
    organization = builders.organization()
    builders.zone(organization)
    issued = builders.api_key(organization, "partner_a", webhook_url=receiver.url, test=True)
    assert builders.create_order(builders.key_client(issued), externalRef=ref).status_code == 201
    return organization, Order.objects.get(organization=organization, external_ref=ref)


def simulate(organization, order, outcome: str, manager=None):
    manager = manager or builders.manager_client(organization)
    return manager.post(
        f"/api/manage/organizations/{organization.id}/orders/{order.id}/simulate",
        {"outcome": outcome, "stepSeconds": STEP_SECONDS},
        format="json",
    )


def tracked_status(api_client, order) -> dict:
    return api_client.get(f"/api/track/{order.tracking_token}").json()


def test_a_test_order_is_delivered_step_by_step(celery_worker, receiver, api_client):
    organization, order = sandbox_order(receiver, "SB-DELIVER")
    receiver.wait_for(1)  # order.created

    response = simulate(organization, order, "delivered")
    assert response.status_code == 202, response.content
    received = receiver.wait_for(5, timeout=30)

    names = [request.json["event"] for request in received]
    assert names == [
        "order.created",
        "order.assigned",
        "order.picked_up",
        "order.in_transit",
        "order.delivered",
    ]
    assert [request.json["payload"]["status"] for request in received[1:]] == [
        "assigned",
        "picked_up",
        "in_transit",
        "delivered",
    ]
    assigned = received[1].json["payload"]
    assert assigned["driver"]["name"] == "Sandbox driver"
    # One status every stepSeconds (the first at once): the schedule, not a burst.
    gaps = [later.at - earlier.at for earlier, later in itertools.pairwise(received[1:])]
    assert all(STEP_SECONDS - 0.25 <= gap <= STEP_SECONDS + 5 for gap in gaps), gaps

    tracking = tracked_status(api_client, order)
    assert tracking["status"] == "delivered"
    assert [event["status"] for event in tracking["events"]] == [
        "pending",
        "assigned",
        "picked_up",
        "in_transit",
        "delivered",
    ]
    assert tracking["driver"] is not None


def test_a_test_order_can_be_driven_to_failed(celery_worker, receiver, api_client):
    organization, order = sandbox_order(receiver, "SB-FAIL")
    receiver.wait_for(1)

    manager = builders.manager_client(organization)
    assert simulate(organization, order, "failed", manager).status_code == 202
    received = receiver.wait_for(5, timeout=30)

    assert [request.json["event"] for request in received][1:] == [
        "order.assigned",
        "order.picked_up",
        "order.in_transit",
        "order.failed",
    ]
    assert received[-1].json["payload"]["reason"] == "Sandbox: simulated failed delivery"
    wait_until(lambda: tracked_status(api_client, order)["status"] == "failed")
    # Nothing more comes: the chain ends with the terminal status.
    again = simulate(organization, order, "delivered", manager)
    assert again.json()["message"] == "Order SB-FAIL cannot be delivered in status failed"
    assert len(receiver.requests) == 5
