"""CompiledQuery (delivery/queries.py) answers exactly as the queryset it was compiled from, in one
query, for each new set of values."""

from decimal import Decimal

import pytest
from django.db.models import signals

from delivery.queries import CompiledInsert, CompiledQuery, Param, rows_insert
from integrations.models import Order, OrderFamily, OrderStatusEvent
from slots.models import SlotBooking
from tests import builders

pytestmark = pytest.mark.django_db


def _queryset(organization_id, external_ref):
    return (
        Order.objects.select_related("zone", "driver")
        .defer("zone__geodata")
        .filter(organization_id=organization_id, external_ref=external_ref)
        .order_by()[:1]
    )


ORDER_BY_REF = CompiledQuery(lambda: _queryset(Param("organization_id"), Param("external_ref")))


@pytest.fixture
def orders(organization):
    builders.zone(organization)
    client = builders.partner_client(organization)
    for ref, weight in (("PO-1", 2.5), ("PO-2", None)):
        response = client.post(
            "/api/integrations/partner-a/orders",
            builders.partner_order(externalRef=ref, weightKg=weight if weight is not None else ...),
            format="json",
        )
        assert response.status_code == 201, response.content
    return organization


def _fields(order: Order) -> dict:
    values = {f.attname: getattr(order, f.attname) for f in Order._meta.concrete_fields}
    values["zone"] = (order.zone.pk, order.zone.name, order.zone.timezone)
    values["driver"] = order.driver
    return values


@pytest.mark.parametrize("ref", ["PO-1", "PO-2"])
def test_it_reads_the_same_instance_as_the_queryset(orders, ref, django_assert_num_queries):
    expected = next(iter(_queryset(orders.id, ref)))

    with django_assert_num_queries(1):
        found = ORDER_BY_REF.first(organization_id=orders.id, external_ref=ref)
        values = _fields(found)

    assert values == _fields(expected)
    assert found.get_deferred_fields() == set()
    assert found.zone.get_deferred_fields() == {"geodata"}
    assert found._state.adding is False and found._state.db == "default"


def test_values_go_through_the_driver_with_their_own_types(orders):
    found = ORDER_BY_REF.first(organization_id=orders.id, external_ref="PO-1")

    assert found.weight_kg == Decimal("2.500")
    assert found.driver is None


def test_each_run_takes_its_own_values(orders):
    assert ORDER_BY_REF.first(organization_id=orders.id, external_ref="PO-2").external_ref == "PO-2"
    assert ORDER_BY_REF.first(organization_id=orders.id, external_ref="PO-3") is None
    assert ORDER_BY_REF.rows(organization_id=orders.id, external_ref="PO-1")[0].external_ref == (
        "PO-1"
    )


def test_another_organization_sees_nothing(orders):
    other = builders.organization()

    assert ORDER_BY_REF.first(organization_id=other.id, external_ref="PO-1") is None


def test_a_choices_member_is_sent_as_its_value(orders):
    of_family = CompiledQuery(
        lambda: Order.objects.filter(organization_id=Param("org"), family=Param("family"))
    )

    assert len(of_family.rows(org=orders.id, family=OrderFamily.PARTNER)) == 2
    assert of_family.rows(org=orders.id, family=OrderFamily.ERP) == []


WRITTEN_BY_COMPILED_INSERT = (Order, OrderStatusEvent, SlotBooking)


@pytest.mark.parametrize("model", WRITTEN_BY_COMPILED_INSERT)
def test_models_written_by_compiled_inserts_have_no_save_signal_receivers(model):
    # CompiledInsert skips pre_save/post_save: a receiver added later must change that first.
    assert not signals.pre_save.has_listeners(model)
    assert not signals.post_save.has_listeners(model)


def test_an_order_and_its_history_read_back_as_written(orders):
    order = Order.objects.get(organization_id=orders.id, external_ref="PO-1")
    history = OrderStatusEvent.objects.get(order=order)

    assert order.status == "pending" and order.weight_kg == Decimal("2.500")
    assert history.from_status == "" and history.to_status == "pending"
    assert history.at == order.created_at


def test_rows_insert_reads_back_an_auto_increment_key_in_statement_order(orders):
    order = Order.objects.get(organization_id=orders.id, external_ref="PO-2")
    first = OrderStatusEvent(order=order, from_status="pending", to_status="dispatching")
    second = OrderStatusEvent(order=order, from_status="dispatching", to_status="pending")

    rows_insert(
        (CompiledInsert(OrderStatusEvent), first), (CompiledInsert(OrderStatusEvent), second)
    )

    assert first.pk is not None and second.pk == first.pk + 1
    assert not first._state.adding and first._state.db == "default"
    assert OrderStatusEvent.objects.get(pk=second.pk).from_status == "dispatching"
