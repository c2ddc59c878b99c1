"""Management API of orders (contract "Management API", "Orders"): list, detail, transition."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from integrations.models import Order
from tests import builders
from tests.conftest import assert_error

pytestmark = pytest.mark.django_db


@pytest.fixture
def partner(organization, mitte):
    return builders.partner_client(organization)


@pytest.fixture
def driver(organization):
    return organization.drivers.create(name="Dora", phone="+491700000000")


def orders_path(organization, suffix=""):
    return f"/api/manage/organizations/{organization.id}/orders{suffix}"


def make_orders(partner, count, **overrides):
    for n in range(count):
        assert (
            builders.create_order(partner, externalRef=f"R-{n:03d}", **overrides).status_code == 201
        )


def test_list_is_paginated_newest_first(manager, partner, organization):
    make_orders(partner, 5)

    first = manager.get(orders_path(organization), {"pageSize": 2})
    third = manager.get(orders_path(organization), {"pageSize": 2, "page": 3})

    assert first.status_code == 200, first.content
    body = first.json()
    assert (body["page"], body["pageSize"], body["total"]) == (1, 2, 5)
    assert [o["externalRef"] for o in body["items"]] == ["R-004", "R-003"]
    assert [o["externalRef"] for o in third.json()["items"]] == ["R-000"]


def test_list_order_is_stable_when_creation_times_tie(manager, partner, organization):
    make_orders(partner, 4)
    Order.objects.update(created_at=Order.objects.order_by("created_at").first().created_at)

    pages = [
        manager.get(orders_path(organization), {"pageSize": 1, "page": n}).json()["items"][0]["id"]
        for n in range(1, 5)
    ]

    assert len(set(pages)) == 4


def test_list_item_shape(manager, partner, organization, mitte):
    builders.create_order(partner, weightKg=2.5, codAmount=12.5, temperatureClass="Chilled")

    item = manager.get(orders_path(organization)).json()["items"][0]

    # The management view adds what only operators see: every optional field, where the order
    # came from, its zone, driver and release.
    assert set(item) == builders.PARTNER_ORDER_FIELDS | {
        "family",
        "platform",
        "currentMappingStatus",
        "weightKg",
        "temperatureClass",
        "deliveryMethod",
        "serviceType",
        "codAmount",
        "expectedBarcode",
        "zoneId",
        "zoneName",
        "driver",
        "releasedAt",
    }
    assert item["family"] == "partner"
    assert item["platform"] == "partner_a"
    assert item["zoneId"] == str(mitte.id)
    assert item["zoneName"] == "Mitte"
    assert item["weightKg"] == 2.5
    assert item["codAmount"] == 12.5
    assert item["deliveryMethod"] is None


def test_list_filters_by_status(manager, partner, organization):
    make_orders(partner, 3)
    partner.post("/api/integrations/partner-a/orders/R-001/cancel")

    body = manager.get(orders_path(organization), {"status": "cancelled"}).json()

    assert [o["externalRef"] for o in body["items"]] == ["R-001"]
    assert body["total"] == 1


def test_list_filters_by_zone(manager, partner, organization):
    alex = builders.zone(organization, name="Alexanderplatz", geodata=builders.ALEX_GEODATA)
    builders.create_order(
        partner,
        externalRef="IN-ALEX",
        dropoffLat=builders.ALEX[0],
        dropoffLng=builders.ALEX[1],
    )
    builders.create_order(partner, externalRef="IN-MITTE")

    body = manager.get(orders_path(organization), {"zoneId": str(alex.id)}).json()

    assert [o["externalRef"] for o in body["items"]] == ["IN-ALEX"]


def test_list_filters_by_delivery_day_in_zone_time(manager, partner, organization):
    # 08:30 Berlin on Sunday 6 January; and 00:30 UTC on the 7th is still the 7th in Berlin.
    builders.create_order(
        partner, externalRef="SUNDAY", deliveryWindowStart="2030-01-06T08:30:00+01:00"
    )
    builders.create_order(
        partner, externalRef="MONDAY", deliveryWindowStart="2030-01-07T09:00:00+01:00"
    )
    builders.create_order(partner, externalRef="NO-WINDOW")

    sunday = manager.get(orders_path(organization), {"date": "2030-01-06"}).json()
    monday = manager.get(orders_path(organization), {"date": "2030-01-07"}).json()

    assert [o["externalRef"] for o in sunday["items"]] == ["SUNDAY"]
    assert [o["externalRef"] for o in monday["items"]] == ["MONDAY"]


def test_list_query_count_is_constant(manager, partner, organization, driver):
    make_orders(partner, 2)
    manager.get(orders_path(organization))  # warm the token and organization lookups

    with CaptureQueriesContext(connection) as few:
        manager.get(orders_path(organization))
    for n in range(10, 20):
        builders.create_order(partner, externalRef=f"R-{n}")
    for order in Order.objects.all()[:5]:
        manager.post(
            orders_path(organization, f"/{order.id}/transition"),
            {"status": "assigned", "driverId": str(driver.id)},
            format="json",
        )
    with CaptureQueriesContext(connection) as many:
        body = manager.get(orders_path(organization)).json()

    assert body["total"] == 12
    assert len(many.captured_queries) == len(few.captured_queries)


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (
            {"status": "lost"},
            "status must be one of: pending, dispatching, assigned, picked_up, in_transit, "
            "delivered, failed, cancelled",
        ),
        ({"date": "2030-13-01"}, "date must be a valid date (format: YYYY-MM-DD)"),
        ({"zoneId": "not-a-uuid"}, "zoneId must be a UUID"),
        ({"page": "0"}, "page must be a positive integer"),
        ({"pageSize": "101"}, "pageSize must be an integer from 1 to 100"),
        # ASCII digits only: what int() would also read is refused, not read as a number
        ({"page": "1_000"}, "page must be a positive integer"),
        ({"page": " 2"}, "page must be a positive integer"),
        ({"page": "+2"}, "page must be a positive integer"),
        ({"page": "2.0"}, "page must be a positive integer"),
        ({"page": "\u0662"}, "page must be a positive integer"),  # ARABIC-INDIC DIGIT TWO
        ({"pageSize": "1_0"}, "pageSize must be an integer from 1 to 100"),
        ({"pageSize": "5 "}, "pageSize must be an integer from 1 to 100"),
    ],
)
def test_bad_list_query_is_400(manager, organization, query, message):
    assert_error(manager.get(orders_path(organization), query), 400, [message])


def test_detail_has_the_status_history_oldest_first(manager, partner, organization, driver):
    builders.create_order(partner)
    order = Order.objects.get()
    manager.post(
        orders_path(organization, f"/{order.id}/transition"),
        {"status": "assigned", "driverId": str(driver.id), "reason": "Nearest"},
        format="json",
    )

    body = manager.get(orders_path(organization, f"/{order.id}")).json()

    assert body["externalRef"] == "PO-1001"
    assert body["driver"] == {"id": str(driver.id), "name": "Dora", "phone": "+491700000000"}
    assert [(e["fromStatus"], e["toStatus"], e["reason"]) for e in body["statusHistory"]] == [
        (None, "pending", ""),
        ("pending", "assigned", "Nearest"),
    ]
    assert body["statusHistory"][1]["actor"] == "ops@example.com"


def test_transition_answers_200_with_the_order(manager, partner, organization):
    builders.create_order(partner)
    order = Order.objects.get()

    response = manager.post(
        orders_path(organization, f"/{order.id}/transition"),
        {"status": "dispatching"},
        format="json",
    )

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["status"], body["currentMappingStatus"]) == ("dispatching", "released")
    assert body["releasedAt"] is not None


def test_transition_through_the_life_of_an_order_emits_every_event(
    manager, partner, organization, driver
):
    builders.create_order(partner)
    order = Order.objects.get()
    path = orders_path(organization, f"/{order.id}/transition")

    for step in (
        {"status": "assigned", "driverId": str(driver.id)},
        {"status": "picked_up"},
        {"status": "in_transit"},
        {"status": "delivered"},
    ):
        assert manager.post(path, step, format="json").status_code == 200

    for name in (
        "order.created",
        "order.assigned",
        "order.picked_up",
        "order.in_transit",
        "order.delivered",
    ):
        assert len(builders.events_named(name, organization)) == 1, name


def test_assigning_without_a_driver_is_400(manager, partner, organization):
    builders.create_order(partner)
    order = Order.objects.get()

    response = manager.post(
        orders_path(organization, f"/{order.id}/transition"), {"status": "assigned"}, format="json"
    )

    assert_error(response, 400, ["driverId is required for status assigned"])


def test_assigning_an_unknown_or_foreign_driver_is_404(
    manager, partner, organization, other_organization
):
    builders.create_order(partner)
    order = Order.objects.get()
    theirs = other_organization.drivers.create(name="Theirs")
    path = orders_path(organization, f"/{order.id}/transition")

    for driver_id in ("not-a-uuid", str(theirs.id)):
        response = manager.post(path, {"status": "assigned", "driverId": driver_id}, format="json")
        assert_error(response, 404, "Driver not found")


def test_a_transition_not_in_the_machine_is_409(manager, partner, organization):
    builders.create_order(partner)
    order = Order.objects.get()

    response = manager.post(
        orders_path(organization, f"/{order.id}/transition"), {"status": "delivered"}, format="json"
    )

    assert_error(response, 409, "Order PO-1001 cannot be delivered in status pending")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "status required"),
        (
            {"status": "lost"},
            "status must be one of: pending, dispatching, assigned, picked_up, "
            "in_transit, delivered, failed, cancelled",
        ),
        ({"status": "cancelled", "reason": "r" * 501}, "reason must be at most 500 characters"),
    ],
)
def test_bad_transition_body_is_400(manager, partner, organization, body, message):
    builders.create_order(partner)
    order = Order.objects.get()

    response = manager.post(
        orders_path(organization, f"/{order.id}/transition"), body, format="json"
    )

    assert_error(response, 400, [message])


def test_another_organizations_order_is_404(manager, organization, other_organization):
    builders.zone(other_organization)
    builders.create_order(builders.partner_client(other_organization))
    theirs = Order.objects.get()

    assert_error(manager.get(orders_path(organization, f"/{theirs.id}")), 404, "Order not found")
    assert_error(
        manager.post(
            orders_path(organization, f"/{theirs.id}/transition"),
            {"status": "cancelled"},
            format="json",
        ),
        404,
        "Order not found",
    )
    assert manager.get(orders_path(organization)).json()["total"] == 0


def test_malformed_order_id_is_404(manager, organization):
    assert_error(manager.get(orders_path(organization, "/123")), 404, "Order not found")


def test_admin_of_another_organization_gets_404(organization, other_organization):
    outsider = builders.manager_client(other_organization, email="outsider@example.com")

    assert_error(outsider.get(orders_path(organization)), 404, "Organization not found")


def test_without_a_token_is_401(api_client, organization):
    assert_error(api_client.get(orders_path(organization)), 401, "Invalid or missing token")
