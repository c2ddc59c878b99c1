"""order_transition: the one function every status change goes through (contract "Orders")."""

import pytest

from delivery.errors import ValidationFailed
from integrations.errors import FailureReasonRequired, TransitionNotAllowed
from integrations.models import Order, OrderStatus, OrderStatusEvent
from integrations.services.orders import (
    ALLOWED_TRANSITIONS,
    TRANSITION_VERBS,
    order_transition,
)
from tenants.errors import DriverNotFound
from tests import builders
from webhooks.models import Event

pytestmark = pytest.mark.django_db

STATUSES = list(OrderStatus.values)
EDGES = {
    ("pending", "dispatching"),
    ("pending", "assigned"),
    ("pending", "cancelled"),
    ("dispatching", "assigned"),
    ("dispatching", "pending"),
    ("dispatching", "cancelled"),
    ("assigned", "picked_up"),
    ("assigned", "dispatching"),
    ("assigned", "cancelled"),
    ("assigned", "failed"),
    ("picked_up", "in_transit"),
    ("picked_up", "failed"),
    ("in_transit", "delivered"),
    ("in_transit", "failed"),
}
# A path from `pending` to each status, through allowed edges only.
PATHS = {
    "pending": [],
    "dispatching": ["dispatching"],
    "assigned": ["assigned"],
    "picked_up": ["assigned", "picked_up"],
    "in_transit": ["assigned", "picked_up", "in_transit"],
    "delivered": ["assigned", "picked_up", "in_transit", "delivered"],
    "failed": ["assigned", "failed"],
    "cancelled": ["cancelled"],
}


@pytest.fixture
def driver(organization):
    return organization.drivers.create(name="Dora", phone="+491700000000")


def new_order(organization, family="partner", ref="R-1") -> Order:
    return builders.order_row(
        organization, family=family, external_ref=ref, dropoff_address="Somewhere 1"
    )


def walk(order: Order, statuses, driver) -> Order:
    for status in statuses:
        order = order_transition(
            order=order,
            to_status=status,
            driver=driver if status == "assigned" else None,
            failure_reason="recipient_absent" if status == "failed" else "",
        )
    return order


def test_the_table_is_the_decisions_table():
    table = {(a, b) for a, targets in ALLOWED_TRANSITIONS.items() for b in targets}

    assert table == EDGES


@pytest.mark.parametrize("from_status", STATUSES)
@pytest.mark.parametrize("to_status", STATUSES)
def test_every_transition_is_allowed_exactly_when_in_the_table(
    organization, driver, from_status, to_status
):
    order = walk(new_order(organization), PATHS[from_status], driver)

    if (from_status, to_status) in EDGES:
        moved = order_transition(
            order=order, to_status=to_status, driver=driver, failure_reason="refused"
        )
        assert moved.status == to_status
        assert Order.objects.get(pk=order.pk).status == to_status
    else:
        with pytest.raises(TransitionNotAllowed) as refused:
            order_transition(
                order=order, to_status=to_status, driver=driver, failure_reason="refused"
            )
        assert refused.value.status_code == 409
        assert refused.value.message == (
            f"Order R-1 cannot be {TRANSITION_VERBS[to_status]} in status {from_status}"
        )
        assert Order.objects.get(pk=order.pk).status == from_status


@pytest.mark.parametrize("from_status", ["assigned", "picked_up", "in_transit"])
def test_failing_an_order_needs_a_failure_reason(organization, driver, from_status):
    order = walk(new_order(organization), PATHS[from_status], driver)

    with pytest.raises(FailureReasonRequired) as refused:
        order_transition(order=order, to_status="failed")

    assert refused.value.status_code == 400
    assert refused.value.message == ["failureReason is required for status failed"]
    assert Order.objects.get(pk=order.pk).status == from_status


def test_a_failure_reason_is_kept_and_sent_with_order_failed(organization, driver):
    order = walk(new_order(organization), ["assigned"], driver)

    order_transition(order=order, to_status="failed", failure_reason="address_not_found")

    assert Order.objects.get(pk=order.pk).failure_reason == "address_not_found"
    event = builders.events_named("order.failed", organization)[0]
    assert event.payload["failureReason"] == "address_not_found"


def test_history_records_who_when_from_to_and_why(organization, driver):
    order = new_order(organization)

    order_transition(order=order, to_status="assigned", driver=driver, actor="ops@example.com")
    order_transition(
        order=order,
        to_status="failed",
        actor="driver app",
        reason="Nobody home",
        failure_reason="recipient_absent",
    )

    history = list(OrderStatusEvent.objects.filter(order=order).order_by("at", "id"))
    assert [(e.from_status, e.to_status, e.actor, e.reason) for e in history] == [
        ("", "pending", "", ""),
        ("pending", "assigned", "ops@example.com", ""),
        ("assigned", "failed", "driver app", "Nobody home"),
    ]
    assert history[0].at <= history[1].at <= history[2].at


def test_a_refused_transition_writes_nothing(organization):
    order = walk(new_order(organization), ["cancelled"], None)
    before = Event.objects.count()

    with pytest.raises(TransitionNotAllowed):
        order_transition(order=order, to_status="pending")

    assert OrderStatusEvent.objects.filter(order=order).count() == 2
    assert Event.objects.count() == before


@pytest.mark.parametrize(
    ("path", "event"),
    [
        (["assigned"], "order.assigned"),
        (["assigned", "picked_up"], "order.picked_up"),
        (["assigned", "picked_up", "in_transit"], "order.in_transit"),
        (["assigned", "picked_up", "in_transit", "delivered"], "order.delivered"),
        (["assigned", "failed"], "order.failed"),
        (["assigned", "picked_up", "failed"], "order.failed"),
        (["cancelled"], "order.cancelled"),
        (["dispatching", "cancelled"], "order.cancelled"),
    ],
)
def test_each_partner_event_is_emitted_on_entering_its_status(organization, driver, path, event):
    order = walk(new_order(organization), path, driver)

    emitted = Event.objects.filter(organization=organization, name=event).get()

    assert emitted.family == "partner"
    assert emitted.payload["id"] == str(order.id)
    assert emitted.payload["status"] == path[-1]
    assert emitted.payload["externalRef"] == "R-1"


def test_the_whole_life_of_an_order_emits_its_events_in_order(organization, driver):
    walk(
        new_order(organization),
        ["dispatching", "assigned", "picked_up", "in_transit", "delivered"],
        driver,
    )

    names = list(
        Event.objects.filter(organization=organization)
        .order_by("created_at")
        .values_list("name", flat=True)
    )
    assert names == ["order.assigned", "order.picked_up", "order.in_transit", "order.delivered"]


def test_dispatching_and_pending_emit_no_partner_event(organization, driver):
    walk(new_order(organization), ["dispatching", "pending", "dispatching"], driver)

    assert not Event.objects.filter(organization=organization).exists()


def test_assigned_event_names_the_driver(organization, driver):
    walk(new_order(organization), ["assigned"], driver)

    payload = Event.objects.get(name="order.assigned").payload
    assert payload["driver"] == {"id": str(driver.id), "name": "Dora", "phone": "+491700000000"}


def test_erp_orders_emit_no_partner_events(organization, driver):
    walk(new_order(organization, family="erp"), ["assigned", "picked_up", "failed"], driver)

    assert not Event.objects.filter(organization=organization, family="partner").exists()


def test_assigning_needs_a_driver(organization):
    order = new_order(organization)

    with pytest.raises(ValidationFailed) as refused:
        order_transition(order=order, to_status="assigned")

    assert refused.value.message == ["driverId is required for status assigned"]


def test_assigning_another_organizations_driver_is_refused(organization, other_organization):
    order = new_order(organization)
    theirs = other_organization.drivers.create(name="Not Ours")

    with pytest.raises(DriverNotFound):
        order_transition(order=order, to_status="assigned", driver=theirs)


def test_assigning_an_inactive_driver_is_refused(organization):
    order = new_order(organization)
    retired = organization.drivers.create(name="Retired", is_active=False)

    with pytest.raises(ValidationFailed) as refused:
        order_transition(order=order, to_status="assigned", driver=retired)

    assert refused.value.message == ["driverId must name an active driver"]


def test_unassigning_clears_the_driver(organization, driver):
    order = walk(new_order(organization), ["assigned"], driver)
    assert order.driver == driver

    order = order_transition(order=order, to_status="dispatching")

    assert order.driver is None
    assert Order.objects.get(pk=order.pk).driver is None


def test_entering_dispatching_sets_released_at_once(organization, driver):
    order = walk(new_order(organization), ["dispatching"], driver)
    first = order.released_at

    order = walk(order, ["assigned", "dispatching"], driver)

    assert first is not None
    assert order.released_at == first


@pytest.mark.parametrize("path", [["cancelled"], ["assigned", "failed"]])
def test_cancelled_and_failed_orders_free_their_window_place(organization, driver, path):
    builders.zone(organization, window_capacity=1)
    client = builders.partner_client(organization)
    assert (
        builders.create_order(
            client, deliveryWindowStart=f"{builders.DELIVERY_DAY}T09:00:00+01:00"
        ).status_code
        == 201
    )
    order = Order.objects.get()
    assert order.window_load.booked == 1

    walk(order, path, driver)

    order.window_load.refresh_from_db()
    assert order.window_load.booked == 0


def test_a_failed_order_frees_its_slot_booking_through_the_slots_service(organization, driver):
    # Orders without a slot booking go through the slots service without effect or error.
    order = walk(new_order(organization, family="erp"), ["assigned"], driver)

    order = order_transition(order=order, to_status="failed", failure_reason="refused")

    assert order.status == "failed"


def test_transition_works_from_a_stale_instance(organization, driver):
    order = new_order(organization)
    stale = Order.objects.get(pk=order.pk)
    order_transition(order=order, to_status="cancelled")

    with pytest.raises(TransitionNotAllowed) as refused:
        order_transition(order=stale, to_status="dispatching")

    assert refused.value.message == "Order R-1 cannot be released in status cancelled"


def test_unknown_status_is_a_programming_error(organization):
    with pytest.raises(ValueError, match="unknown order status"):
        order_transition(order=new_order(organization), to_status="lost")
