"""orders_transition: the status machine's move for many orders at once (a plan's commit), by the
same rule as order_transition, in a few statements whatever their number (contract "Orders")."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from integrations.errors import DriverInactive, TransitionNotAllowed
from integrations.models import Order, OrderStatus, OrderStatusEvent
from integrations.services.orders import OrderMove, order_transition, orders_transition
from tests import builders
from webhooks.models import Delivery, Event

pytestmark = pytest.mark.django_db

T0 = datetime(2030, 1, 6, 9, 0, tzinfo=UTC)
ETA = datetime(2030, 1, 6, 10, 30, tzinfo=UTC)


@pytest.fixture
def driver(organization):
    return builders.driver(organization, "Dora Driver")


@pytest.fixture
def zone(organization):
    return builders.zone(organization, "Mitte")


def orders(organization, zone, *refs: str, family: str = "partner") -> list[Order]:
    return [
        builders.order_row(organization, family=family, zone=zone, external_ref=ref) for ref in refs
    ]


def locked(order_list: list[Order]) -> list[Order]:
    """The orders read again under their row locks, as a commit holds them."""
    by_id = (
        Order.objects.select_for_update(of=("self",))
        .select_related("zone")
        .in_bulk([order.pk for order in order_list])
    )
    return [by_id[order.pk] for order in order_list]


def assign(order: Order, driver, eta=ETA) -> OrderMove:
    return OrderMove(order=order, to_status=OrderStatus.ASSIGNED, driver=driver, eta=eta)


def state(order: Order) -> tuple:
    order.refresh_from_db()
    history = list(
        order.status_events.order_by("at", "id").values_list(
            "from_status", "to_status", "actor", "reason"
        )
    )
    payloads = [
        {key: value for key, value in event.payload.items() if key not in ("id", "externalRef")}
        for event in Event.objects.filter(payload__id=str(order.id)).order_by("created_at")
    ]
    return (order.status, order.driver_id, order.eta, order.released_at, history, payloads)


def test_many_orders_move_exactly_as_one_by_one(organization, zone, driver):
    builders.api_key(organization, "partner_a", webhook_url="http://127.0.0.1:9/in")
    one_by_one = orders(organization, zone, "S-1", "S-2")
    together = orders(organization, zone, "B-1", "B-2")

    with time_machine.travel(T0, tick=False):
        order_transition(order=one_by_one[0], to_status="dispatching", actor="dispatch")
        for order in one_by_one:
            order_transition(
                order=order, to_status="assigned", actor="dispatch", driver=driver, eta=ETA
            )
        with transaction.atomic():
            first, second = locked(together)
            orders_transition(
                moves=[
                    OrderMove(order=first, to_status="dispatching"),
                    assign(first, driver),
                    assign(second, driver),
                ],
                actor="dispatch",
            )

    assert [state(order) for order in together] == [state(order) for order in one_by_one]
    (payload,) = state(together[0])[-1]
    assert payload["driver"] == {"id": str(driver.id), "name": "Dora Driver", "phone": driver.phone}
    assert payload["eta"] == "2030-01-06T11:30:00+01:00"
    assert Delivery.objects.count() == 4


def test_erp_orders_move_without_partner_events(organization, zone, driver):
    (order,) = orders(organization, zone, "E-1", family="erp")

    with transaction.atomic():
        orders_transition(moves=[assign(locked([order])[0], driver)])

    order.refresh_from_db()
    assert (order.status, order.driver_id) == ("assigned", driver.id)
    assert not Event.objects.filter(family="partner").exists()


def test_a_move_the_machine_refuses_is_its_409_and_nothing_stays(organization, zone, driver):
    waiting, cancelled = orders(organization, zone, "W-1", "C-1")
    builders.order_cancel(cancelled)

    with pytest.raises(TransitionNotAllowed) as refused, transaction.atomic():
        orders_transition(moves=[assign(order, driver) for order in locked([waiting, cancelled])])

    assert str(refused.value) == "Order C-1 cannot be assigned in status cancelled"
    waiting.refresh_from_db()
    assert (waiting.status, waiting.driver_id) == ("pending", None)
    assert not OrderStatusEvent.objects.filter(to_status="assigned").exists()
    assert not Event.objects.filter(name="order.assigned").exists()


def test_an_inactive_driver_is_refused_as_one_by_one(organization, zone, driver):
    (order,) = orders(organization, zone, "I-1")
    driver.is_active = False
    driver.save(update_fields=["is_active"])

    with pytest.raises(DriverInactive), transaction.atomic():
        orders_transition(moves=[assign(locked([order])[0], driver)])


@pytest.mark.parametrize("to_status", ["cancelled", "failed"])
def test_moves_that_free_capacity_are_order_transitions_alone(organization, zone, to_status):
    (order,) = orders(organization, zone, "F-1")
    with pytest.raises(ValueError, match="frees capacity"):
        orders_transition(moves=[OrderMove(order=order, to_status=to_status)])


def statements_of(organization, zone, driver, refs: list[str]) -> int:
    with transaction.atomic():
        moves = [assign(order, driver) for order in locked(orders(organization, zone, *refs))]
        with CaptureQueriesContext(connection) as queries:
            orders_transition(moves=moves, actor="dispatch")
    return len(queries.captured_queries)


def test_the_statements_do_not_grow_with_the_orders(organization, zone, driver):
    builders.api_key(organization, "partner_a", webhook_url="http://127.0.0.1:9/in")
    few = statements_of(organization, zone, driver, ["N-1", "N-2"])
    many = statements_of(organization, zone, driver, [f"M-{n}" for n in range(12)])

    assert few == many
    assert Order.objects.filter(status="assigned").count() == 14
    assert Delivery.objects.count() == 14


def test_an_order_may_move_twice_in_order(organization, zone, driver):
    (order,) = orders(organization, zone, "T-1")
    other = builders.driver(organization, "Tom Berger")
    builders.advance(order, "assigned", driver=driver)

    with time_machine.travel(T0, tick=False), transaction.atomic():
        (held,) = locked([order])
        orders_transition(
            moves=[
                OrderMove(order=held, to_status="dispatching", reason="Re-planned"),
                assign(held, other, eta=ETA + timedelta(minutes=5)),
            ]
        )

    order.refresh_from_db()
    assert (order.status, order.driver_id, order.released_at) == ("assigned", other.id, T0)
    history = list(order.status_events.order_by("at", "id").values_list("to_status", "reason"))
    assert history[-2:] == [("dispatching", "Re-planned"), ("assigned", "")]
