"""The lifecycle sandbox over the management API (docs/webhooks.md "Sandbox"): who may ask,
what is refused, and steps that are safe to run twice. The worker-driven run end to end is in
tests/webhooks/test_sandbox_lifecycle.py."""

import base64
import json
import time

import pytest
from django.conf import settings

from integrations.models import Order, OrderStatusEvent
from integrations.services import sandbox
from tests import builders
from tests.conftest import assert_error
from tests.integrations.test_admin_orders import act
from tests.webhooks.conftest import dead_broker, test_broker  # noqa: F401 - fixtures, by name
from webhooks.models import Event

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _zone(organization):
    return builders.zone(organization)


@pytest.fixture
def test_key_client(organization):
    return builders.key_client(builders.api_key(organization, "partner_a", test=True))


@pytest.fixture
def live_key_client(organization):
    return builders.key_client(builders.api_key(organization, "partner_b"))


def simulate(client, order: Order, body=None):
    path = f"/api/manage/organizations/{order.organization_id}/orders/{order.id}/simulate"
    return client.post(path, body if body is not None else {"outcome": "delivered"}, format="json")


def order_of(client, ref: str, family: str = "partner-a") -> Order:
    path = f"/api/integrations/{family}/orders"
    assert builders.create_order(client, path, externalRef=ref).status_code == 201
    return Order.objects.get(external_ref=ref)


def test_orders_remember_the_key_that_created_them(organization, test_key_client):
    order = order_of(test_key_client, "SB-1")

    assert order.api_key.test is True
    assert order.api_key.organization_id == organization.id


def test_simulate_answers_202_with_the_plan(manager, test_key_client, test_broker):  # noqa: F811
    order = order_of(test_key_client, "SB-1")

    response = simulate(manager, order, {"outcome": "failed", "stepSeconds": 2})

    assert response.status_code == 202, response.content
    body = response.json()
    driver_id = body.pop("driverId")
    assert body == {
        "orderId": str(order.id),
        "externalRef": "SB-1",
        "status": "pending",
        "outcome": "failed",
        "stepSeconds": 2,
        "steps": ["assigned", "picked_up", "in_transit", "failed"],
    }
    driver = order.organization.drivers.get(id=driver_id)
    assert (driver.name, driver.vehicle_type, driver.is_active) == (
        "Sandbox driver",
        "sandbox",
        True,
    )
    with test_broker.connection_for_write() as connection:
        assert connection.default_channel.client.llen("celery") == 1  # the first step, queued


def test_step_seconds_defaults_to_five_and_the_sandbox_driver_is_reused(
    manager,
    test_key_client,
    test_broker,  # noqa: F811
):
    first = simulate(manager, order_of(test_key_client, "SB-1")).json()
    second = simulate(manager, order_of(test_key_client, "SB-2")).json()

    assert first["stepSeconds"] == 5
    assert first["driverId"] == second["driverId"]


def test_an_order_of_a_live_key_is_refused(manager, live_key_client):
    order = order_of(live_key_client, "LIVE-1", "partner-b")

    response = simulate(manager, order)

    assert_error(response, 409, "Order LIVE-1 was not created with a test key")


def test_an_order_without_a_key_is_refused(manager, organization):
    issued = builders.api_key(organization, "partner_c", test=True)
    order = order_of(builders.key_client(issued), "OLD-1", "partner-c")
    Order.objects.filter(pk=order.pk).update(api_key=None)  # created before keys were recorded

    assert_error(simulate(manager, order), 409, "Order OLD-1 was not created with a test key")


@pytest.mark.parametrize(
    ("statuses", "outcome", "message"),
    [
        (("cancelled",), "delivered", "Order SB-1 cannot be delivered in status cancelled"),
        (
            ("assigned", "picked_up", "in_transit", "delivered"),
            "failed",
            "Order SB-1 cannot be failed in status delivered",
        ),
    ],
)
def test_a_terminal_order_gets_the_status_machines_409(
    manager, test_key_client, organization, statuses, outcome, message
):
    order = builders.advance(
        order_of(test_key_client, "SB-1"), *statuses, driver=builders.driver(organization)
    )

    assert_error(simulate(manager, order, {"outcome": outcome}), 409, message)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "outcome is required"),
        ({"outcome": "lost"}, "outcome must be one of: delivered, failed"),
        ({"outcome": "delivered", "stepSeconds": 0}, "stepSeconds: must be between 1 and 300"),
        ({"outcome": "delivered", "stepSeconds": 301}, "stepSeconds: must be between 1 and 300"),
        ({"outcome": "delivered", "stepSeconds": "5"}, "stepSeconds: must be an integer"),
        ({"outcome": "delivered", "stepSeconds": True}, "stepSeconds: must be an integer"),
        ({"outcome": "delivered", "stepSeconds": 1.5}, "stepSeconds: must be an integer"),
    ],
)
def test_bad_requests_are_400(manager, test_key_client, body, message):
    order = order_of(test_key_client, "SB-1")

    assert_error(simulate(manager, order, body), 400, message)


def test_another_organizations_order_is_404(test_key_client, other_organization):
    order = order_of(test_key_client, "SB-1")
    stranger = builders.manager_client(other_organization, email="stranger@example.com")
    path = f"/api/manage/organizations/{other_organization.id}/orders/{order.id}/simulate"

    assert_error(stranger.post(path, {"outcome": "delivered"}, format="json"), 404)
    assert_error(simulate(stranger, order), 404)  # not an admin of the order's organization


def test_a_step_is_safe_to_run_twice(organization, test_key_client):
    order = order_of(test_key_client, "SB-1")
    driver = sandbox.sandbox_driver_get_or_create(organization_id=organization.id)
    step = {
        "order_id": str(order.id),
        "from_status": "pending",
        "to_status": "assigned",
        "outcome": "delivered",
        "step_seconds": 1,
        "driver_id": str(driver.id),
        "actor": "sandbox (test)",
    }

    # Scheduling the next step needs a broker; these calls run the step itself, twice.
    first = sandbox.order_simulation_step(**step)
    second = sandbox.order_simulation_step(**step)

    assert (first, second) == ("assigned", None)
    assert Order.objects.get(pk=order.pk).driver_id == driver.id
    assert OrderStatusEvent.objects.filter(order=order, to_status="assigned").count() == 1
    assert Event.objects.filter(name="order.assigned", organization=organization).count() == 1


def test_a_step_stops_when_someone_else_moved_the_order(organization, test_key_client):
    order = order_of(test_key_client, "SB-1")
    builders.advance(order, "cancelled")

    entered = sandbox.order_simulation_step(
        order_id=str(order.id),
        from_status="pending",
        to_status="assigned",
        outcome="delivered",
        step_seconds=1,
        driver_id=str(sandbox.sandbox_driver_get_or_create(organization_id=organization.id).id),
    )

    assert entered is None
    assert Order.objects.get(pk=order.pk).status == "cancelled"


def test_openapi_lists_simulate_with_its_errors(api_client):
    schema = api_client.get("/api/schema", HTTP_ACCEPT="application/json").json()
    operation = schema["paths"]["/api/manage/organizations/{org_id}/orders/{order_id}/simulate"]

    assert set(operation["post"]["responses"]) == {
        "202",
        "400",
        "401",
        "404",
        "409",
        "415",
        "429",
        "503",
    }


def test_admin_actions_simulate_test_orders_and_refuse_the_others(
    organization,
    test_key_client,
    live_key_client,
    test_broker,  # noqa: F811
):
    sandboxed = order_of(test_key_client, "SB-1")
    live = order_of(live_key_client, "LIVE-1", "partner-b")
    client = builders.admin_site_client(organization)

    response = act(client, "simulate_delivered", [sandboxed, live])

    assert response.status_code == 200
    shown = [str(message) for message in response.context["messages"]]
    assert "Simulating 1 order(s) until delivered, one status every 5 s." in shown
    assert "Order LIVE-1 was not created with a test key" in shown
    with test_broker.connection_for_write() as connection:
        assert connection.default_channel.client.llen("celery") == 1


def test_a_broker_that_is_away_answers_503(manager, test_key_client, dead_broker):  # noqa: F811
    order = order_of(test_key_client, "SB-1")

    response = simulate(manager, order)

    assert_error(response, 503, "Service temporarily unavailable")
    assert Order.objects.get(pk=order.pk).status == "pending"


# ----- one simulation per order at a time -----


def _claim_holder(order: Order) -> bytes | None:
    return sandbox._redis_for(settings.REDIS_URL).get(sandbox._claim_key(order.id))


def _queued_steps(broker) -> list[dict]:
    with broker.connection_for_write() as connection:
        client = connection.default_channel.client
        # kombu pushes on the left and pops on the right: oldest last in the list
        messages = [json.loads(raw) for raw in reversed(client.lrange("celery", 0, -1))]
    return [json.loads(base64.b64decode(message["body"]))[1] for message in messages]


def test_a_second_simulation_of_the_same_order_is_409(
    manager,
    test_key_client,
    test_broker,  # noqa: F811
):
    order = order_of(test_key_client, "SB-1")
    assert simulate(manager, order, {"outcome": "delivered", "stepSeconds": 2}).status_code == 202

    second = simulate(manager, order, {"outcome": "failed"})

    assert_error(second, 409, "Order SB-1 is already being simulated")
    queued = _queued_steps(test_broker)
    assert [step["outcome"] for step in queued] == ["delivered"]  # the second queued nothing
    assert sandbox.SimulationInProgress.code == "simulation_in_progress"
    # the claim lasts the four steps still to go, plus the margin
    ttl = sandbox._redis_for(settings.REDIS_URL).ttl(sandbox._claim_key(order.id))
    assert 4 * 2 + sandbox.CLAIM_MARGIN_SECONDS - 2 <= ttl <= 4 * 2 + sandbox.CLAIM_MARGIN_SECONDS
    # another order is not held by it
    assert simulate(manager, order_of(test_key_client, "SB-2")).status_code == 202


def test_the_claim_is_released_when_the_chain_ends(
    manager,
    organization,
    test_key_client,
    test_broker,  # noqa: F811
):
    order = order_of(test_key_client, "SB-1")
    assert simulate(manager, order).status_code == 202
    (first_step,) = _queued_steps(test_broker)
    assert _claim_holder(order) == first_step["simulation_id"].encode()

    # The worker takes the first step (run here); a human then cancels the order, so the
    # next step finds it moved and ends the chain.
    assert sandbox.order_simulation_step(**first_step) == "assigned"
    assert _claim_holder(order) == first_step["simulation_id"].encode()
    builders.advance(order, "cancelled")
    second_step = _queued_steps(test_broker)[-1]
    assert sandbox.order_simulation_step(**second_step) is None

    assert _claim_holder(order) is None


def test_a_duplicate_step_message_keeps_the_claim_of_its_run(
    manager,
    test_key_client,
    test_broker,  # noqa: F811
):
    order = order_of(test_key_client, "SB-1")
    assert simulate(manager, order).status_code == 202
    (first_step,) = _queued_steps(test_broker)

    assert sandbox.order_simulation_step(**first_step) == "assigned"
    assert sandbox.order_simulation_step(**first_step) is None  # redelivered: its twin went on

    assert _claim_holder(order) == first_step["simulation_id"].encode()
    assert_error(simulate(manager, order), 409, "Order SB-1 is already being simulated")


def test_the_last_step_releases_the_claim_and_the_order_can_be_simulated_again(
    manager,
    organization,
    test_key_client,
    test_broker,  # noqa: F811
):
    order = order_of(test_key_client, "SB-1")
    builders.advance(
        order, "assigned", "picked_up", "in_transit", driver=builders.driver(order.organization)
    )
    assert simulate(manager, order, {"outcome": "failed"}).status_code == 202
    (last_step,) = _queued_steps(test_broker)

    assert sandbox.order_simulation_step(**last_step) == "failed"

    assert _claim_holder(order) is None


def test_a_late_step_of_a_given_up_chain_does_not_act(
    manager,
    organization,
    test_key_client,
    test_broker,  # noqa: F811
):
    order = order_of(test_key_client, "SB-1")
    assert simulate(manager, order).status_code == 202
    (stale,) = _queued_steps(test_broker)
    # Its claim expired and a second simulation took the order.
    sandbox._redis_for(settings.REDIS_URL).delete(sandbox._claim_key(order.id))
    assert simulate(manager, order, {"outcome": "failed"}).status_code == 202

    assert sandbox.order_simulation_step(**stale) is None

    assert Order.objects.get(pk=order.pk).status == "pending"
    assert _claim_holder(order) is not None  # still the second simulation's


def test_a_claim_left_by_a_dead_worker_expires(
    manager,
    test_key_client,
    test_broker,  # noqa: F811
    monkeypatch,
):
    monkeypatch.setattr(sandbox, "CLAIM_MARGIN_SECONDS", 0)
    order = order_of(test_key_client, "SB-1")
    builders.advance(
        order, "assigned", "picked_up", "in_transit", driver=builders.driver(order.organization)
    )
    # One step to go, one second apart: the claim lasts 1 s; nobody runs the step.
    assert simulate(manager, order, {"outcome": "delivered", "stepSeconds": 1}).status_code == 202
    assert simulate(manager, order).status_code == 409

    time.sleep(1.5)

    assert simulate(manager, order).status_code == 202


def test_a_failed_publish_releases_the_claim(manager, test_key_client, dead_broker):  # noqa: F811
    order = order_of(test_key_client, "SB-1")

    assert simulate(manager, order).status_code == 503

    assert _claim_holder(order) is None
