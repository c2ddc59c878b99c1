"""Read, release and cancel a partner order; held orders released on their day (contract
"Orders")."""

import logging
from datetime import UTC, datetime

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext

from integrations.models import Order, OrderStatus, OrderStatusEvent
from integrations.partner.services import held_orders_release
from integrations.services.orders import order_transition
from integrations.tasks import release_held_orders
from tests import builders
from tests.conftest import assert_error

pytestmark = pytest.mark.django_db

ORDERS = "/api/integrations/partner-a/orders"
# Thursday 3 January 2030, 10:00 in Berlin; the orders below are for Sunday 6 January.
NOW = datetime(2030, 1, 3, 9, 0, tzinfo=UTC)
SUNDAY_MORNING = "2030-01-06T09:00:00+01:00"


@pytest.fixture
def client(organization):
    builders.zone(organization)
    return builders.partner_client(organization)


@pytest.fixture
def driver(organization):
    return organization.drivers.create(name="Dora Driver", phone="+491709999999")


def move(order: Order, *statuses: str, driver=None) -> Order:
    for status in statuses:
        order = order_transition(
            order=order,
            to_status=status,
            driver=driver if status == "assigned" else None,
            failure_reason="recipient_absent" if status == "failed" else "",
        )
    return order


def order_in(client, status: str, driver, ref: str = "PO-1001") -> Order:
    assert builders.create_order(client, externalRef=ref).status_code == 201
    order = Order.objects.get(external_ref=ref)
    path = {
        "pending": (),
        "dispatching": ("dispatching",),
        "assigned": ("assigned",),
        "picked_up": ("assigned", "picked_up"),
        "in_transit": ("assigned", "picked_up", "in_transit"),
        "delivered": ("assigned", "picked_up", "in_transit", "delivered"),
        "failed": ("assigned", "failed"),
        "cancelled": ("cancelled",),
    }[status]
    return move(order, *path, driver=driver)


def order_identity(created: dict) -> dict:
    """How the answers to reading and releasing name the order: the partner's reference and
    the service's own id (contract "Orders")."""
    return {"externalRef": created["externalRef"], "serviceOrderId": created["id"]}


# ----- read -----


def test_read_returns_the_partner_order(client):
    created = builders.create_order(client, deliveryWindowStart=SUNDAY_MORNING).json()

    response = client.get(f"{ORDERS}/PO-1001")

    assert response.status_code == 200, response.content
    assert response.json() == {
        **order_identity(created),
        "status": "pending",
        "driver": None,
        "eta": None,
        "attempt": 1,
        "deliveryWindowStart": SUNDAY_MORNING,
        "deliveryWindowEnd": "2030-01-06T12:00:00+01:00",
        "trackingToken": created["trackingToken"],
        "trackingUrl": f"http://testserver/track/{created['trackingToken']}",
        "currentMappingStatus": "created",
    }


def test_read_shows_the_assigned_driver(client, driver):
    order_in(client, "assigned", driver)

    body = client.get(f"{ORDERS}/PO-1001").json()

    assert body["driver"] == {"id": str(driver.id), "name": "Dora Driver", "phone": "+491709999999"}
    assert body["currentMappingStatus"] == "assigned"


def test_read_is_one_query_without_sorting_or_the_zone_polygon(client, driver):
    order_in(client, "assigned", driver)

    with CaptureQueriesContext(connection) as queries:
        body = client.get(f"{ORDERS}/PO-1001").json()

    assert body["driver"]["name"] == "Dora Driver"
    order_queries = [q["sql"] for q in queries.captured_queries if "integrations_order" in q["sql"]]
    assert len(order_queries) == 1
    assert "ORDER BY" not in order_queries[0]
    assert "geodata" not in order_queries[0]


@pytest.mark.parametrize(
    ("status", "mapping"),
    [
        ("pending", "created"),
        ("dispatching", "released"),
        ("assigned", "assigned"),
        ("picked_up", "picked_up"),
        ("in_transit", "in_transit"),
        ("delivered", "delivered"),
        ("failed", "failed"),
        ("cancelled", "cancelled"),
    ],
)
def test_current_mapping_status_per_status(client, driver, status, mapping):
    order_in(client, status, driver)

    body = client.get(f"{ORDERS}/PO-1001").json()

    assert (body["status"], body["currentMappingStatus"]) == (status, mapping)


def test_unknown_external_ref_is_404(client):
    assert_error(client.get(f"{ORDERS}/NOPE"), 404, "Order not found")


def test_external_ref_with_slash_and_hash_is_readable(client):
    assert builders.create_order(client, externalRef="SO/2030#7").status_code == 201

    response = client.get(f"{ORDERS}/SO/2030%237")
    slashed = client.get(f"{ORDERS}/SO/2030%237/")

    assert response.status_code == 200, response.content
    assert response.json()["externalRef"] == "SO/2030#7"
    assert slashed.json()["externalRef"] == "SO/2030#7"


# ----- release -----


def test_release_moves_pending_to_dispatching(client, organization):
    created = builders.create_order(client).json()

    with time_machine.travel(NOW, tick=False):
        response = client.post(f"{ORDERS}/PO-1001/release")

    assert response.status_code == 200, response.content
    assert response.json() == {
        **order_identity(created),
        "status": "dispatching",
        "currentMappingStatus": "released",
        "releasedAt": "2030-01-03T09:00:00Z",
    }
    history = OrderStatusEvent.objects.filter(order_id=created["id"]).order_by("at", "id")
    assert [(e.from_status, e.to_status) for e in history] == [
        ("", "pending"),
        ("pending", "dispatching"),
    ]


def test_releasing_again_answers_200_with_the_same_release(client):
    builders.create_order(client)
    with time_machine.travel(NOW, tick=False):
        first = client.post(f"{ORDERS}/PO-1001/release")
    second = client.post(f"{ORDERS}/PO-1001/release/")

    assert second.status_code == 200
    assert second.json() == first.json()
    assert OrderStatusEvent.objects.filter(to_status="dispatching").count() == 1


@pytest.mark.parametrize(
    "status", ["assigned", "picked_up", "in_transit", "delivered", "failed", "cancelled"]
)
def test_release_in_any_other_status_is_409(client, driver, status):
    order_in(client, status, driver)

    response = client.post(f"{ORDERS}/PO-1001/release")

    assert_error(response, 409, f"Order PO-1001 cannot be released in status {status}")


def test_release_of_unknown_order_is_404(client):
    assert_error(client.post(f"{ORDERS}/NOPE/release"), 404, "Order not found")


def test_release_sends_no_partner_event(client, organization):
    builders.create_order(client)
    client.post(f"{ORDERS}/PO-1001/release")

    names = set(organization.orders.get().status_events.values_list("to_status", flat=True))
    assert names == {"pending", "dispatching"}
    assert [e.name for e in builders.events_named("order.created", organization)] == [
        "order.created"
    ]


# ----- cancel -----


@pytest.mark.parametrize("status", ["pending", "dispatching", "assigned"])
def test_cancel_is_allowed_before_pickup(client, driver, organization, status):
    order_in(client, status, driver)

    response = client.post(
        f"{ORDERS}/PO-1001/cancel", {"reason": "Customer changed mind"}, format="json"
    )

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["status"], body["currentMappingStatus"]) == ("cancelled", "cancelled")
    assert body["externalRef"] == "PO-1001"
    last = OrderStatusEvent.objects.filter(to_status="cancelled").get()
    assert (last.from_status, last.reason) == (status, "Customer changed mind")
    event = builders.events_named("order.cancelled", organization)[0]
    assert event.payload["status"] == "cancelled"
    assert event.payload["reason"] == "Customer changed mind"


def test_cancel_without_a_body(client):
    builders.create_order(client)

    response = client.post(f"{ORDERS}/PO-1001/cancel")

    assert response.status_code == 200, response.content
    assert OrderStatusEvent.objects.get(to_status="cancelled").reason == ""


@pytest.mark.parametrize(("body", "status"), [("null", 200), ("[]", 400), ("0", 400), ('""', 400)])
def test_cancel_body_null_is_no_body_and_any_other_non_object_is_400(client, body, status):
    builders.create_order(client)

    response = client.post(f"{ORDERS}/PO-1001/cancel", body, content_type="application/json")

    assert response.status_code == status, response.content
    assert Order.objects.get().status == ("cancelled" if status == 200 else "pending")


@pytest.mark.parametrize("status", ["picked_up", "in_transit", "delivered", "failed", "cancelled"])
def test_cancel_after_pickup_or_when_terminal_is_409(client, driver, status):
    order_in(client, status, driver)

    response = client.post(f"{ORDERS}/PO-1001/cancel")

    assert_error(response, 409, f"Order PO-1001 cannot be cancelled in status {status}")


def test_cancel_reason_too_long_is_400(client):
    builders.create_order(client)

    response = client.post(f"{ORDERS}/PO-1001/cancel", {"reason": "r" * 501}, format="json")

    assert_error(response, 400, ["reason must be at most 500 characters"])
    assert Order.objects.get().status == OrderStatus.PENDING


def test_cancel_of_unknown_order_is_404(client):
    assert_error(client.post(f"{ORDERS}/NOPE/cancel"), 404, "Order not found")


# ----- held orders -----


def test_an_order_for_a_later_day_is_held_until_midnight_zone_time(client):
    with time_machine.travel(NOW, tick=False):
        assert builders.create_order(client, deliveryWindowStart=SUNDAY_MORNING).status_code == 201

    order = Order.objects.get()
    # 00:00 on Sunday in Berlin (+01:00) is 23:00 UTC on Saturday.
    assert order.held_until == datetime(2030, 1, 5, 23, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "created_at",
    [
        pytest.param(datetime(2030, 1, 6, 7, 0, tzinfo=UTC), id="sunday_morning"),
        # 23:30 UTC on Saturday is already 00:30 on Sunday in Berlin: midnight is counted in
        # zone time, not UTC.
        pytest.param(datetime(2030, 1, 5, 23, 30, tzinfo=UTC), id="saturday_23_30_utc"),
    ],
)
def test_an_order_for_today_is_not_held(client, created_at):
    with time_machine.travel(created_at, tick=False):
        assert builders.create_order(client, deliveryWindowStart=SUNDAY_MORNING).status_code == 201

    assert Order.objects.get().held_until is None


def test_held_orders_are_released_at_midnight_of_their_day(client, organization, caplog):
    with time_machine.travel(NOW, tick=False):
        builders.create_order(client, deliveryWindowStart=SUNDAY_MORNING)
        builders.create_order(client, externalRef="TODAY")

    def task_lines() -> list[tuple[str, dict]]:
        lines = [
            (r.getMessage(), r.fields) for r in caplog.records if r.name == "integrations.tasks"
        ]
        caplog.clear()
        return lines

    caplog.set_level(logging.INFO)
    with time_machine.travel(datetime(2030, 1, 5, 22, 59, tzinfo=UTC), tick=False):
        assert release_held_orders() == 0
        assert task_lines() == []  # a periodic run that did nothing says nothing
    with time_machine.travel(datetime(2030, 1, 5, 23, 0, 30, tzinfo=UTC), tick=False):
        assert release_held_orders() == 1
        assert task_lines() == [
            (
                "integrations.release_held_orders released 1 held orders",
                {"task": "integrations.release_held_orders", "released": 1},
            )
        ]
        assert release_held_orders() == 0  # safe to run twice
        assert task_lines() == []

    held = Order.objects.get(external_ref="PO-1001")
    assert held.status == OrderStatus.DISPATCHING
    assert held.released_at == datetime(2030, 1, 5, 23, 0, 30, tzinfo=UTC)
    assert held.held_until is None
    event = OrderStatusEvent.objects.get(order=held, to_status="dispatching")
    assert (event.actor, event.reason) == ("system", "Delivery day started")
    assert Order.objects.get(external_ref="TODAY").status == OrderStatus.PENDING


def test_a_held_order_released_by_hand_is_not_released_again(client):
    with time_machine.travel(NOW, tick=False):
        builders.create_order(client, deliveryWindowStart=SUNDAY_MORNING)
        client.post(f"{ORDERS}/PO-1001/release")

    assert held_orders_release(now=datetime(2030, 1, 6, 8, tzinfo=UTC)) == 0
    assert OrderStatusEvent.objects.filter(to_status="dispatching").count() == 1


def test_a_held_order_cancelled_before_its_day_stays_cancelled(client):
    with time_machine.travel(NOW, tick=False):
        builders.create_order(client, deliveryWindowStart=SUNDAY_MORNING)
        client.post(f"{ORDERS}/PO-1001/cancel")

    assert held_orders_release(now=datetime(2030, 1, 6, 8, tzinfo=UTC)) == 0
    assert Order.objects.get().status == OrderStatus.CANCELLED
