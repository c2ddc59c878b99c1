"""Bad plan requests answer the contract's error body; other tenants' plans, zones and drivers
are 404 (contract "Dispatch", "Errors")."""

import pytest
from rest_framework.test import APIClient

from dispatch.models import Plan
from tests import builders
from tests.conftest import assert_error
from tests.dispatch.conftest import DAY, at, order, plans_url, solved


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "date is required"),
        ({"date": None}, "date is required"),
        ({"date": "2031-02-30"}, "date must be a valid date (format: YYYY-MM-DD)"),
        ({"date": "tomorrow"}, "date must be a valid date (format: YYYY-MM-DD)"),
        ({"date": 20310108}, "date must be a valid date (format: YYYY-MM-DD)"),
        ({"date": DAY.isoformat(), "zoneIds": "all"}, "zoneIds must be an array of ids"),
        ({"date": DAY.isoformat(), "driverIds": [7]}, "driverIds: must be a string"),
    ],
)
def test_a_malformed_request_is_a_400_naming_the_field(client, organization, mitte, body, message):
    response = client.post(plans_url(organization), body, format="json")

    assert_error(response, 400, message, code="validation_failed")
    assert Plan.objects.count() == 0


def test_unknown_or_foreign_zones_and_drivers_are_404(
    client, organization, other_organization, mitte
):
    foreign_zone = builders.zone(other_organization, "Theirs")
    foreign_driver = builders.driver(other_organization)
    day = DAY.isoformat()
    cases = [
        ({"date": day, "zoneIds": [str(foreign_zone.id)]}, "Zone not found"),
        ({"date": day, "zoneIds": ["not-a-uuid"]}, "Zone not found"),
        ({"date": day, "driverIds": [str(foreign_driver.id)]}, "Driver not found"),
        ({"date": day, "driverIds": ["00000000-0000-0000-0000-000000000000"]}, "Driver not found"),
    ]
    for body, message in cases:
        assert_error(client.post(plans_url(organization), body, format="json"), 404, message)
    assert Plan.objects.count() == 0


def test_an_inactive_driver_is_a_400(client, organization, mitte):
    resting = builders.driver(organization, is_active=False)
    order(organization, mitte, window=(at(9), at(12)))

    response = client.post(
        plans_url(organization),
        {"date": DAY.isoformat(), "driverIds": [str(resting.id)]},
        format="json",
    )

    assert_error(response, 400, "driverId must name an active driver", code="driver_inactive")


def test_a_zone_without_depot_is_a_400_when_planned(client, organization):
    bare = builders.zone(organization, "Bare")
    order(organization, bare, window=(at(9), at(12)))

    response = client.post(
        plans_url(organization), {"date": DAY.isoformat(), "zoneIds": [str(bare.id)]}, format="json"
    )
    by_default = client.post(plans_url(organization), {"date": DAY.isoformat()}, format="json")

    assert_error(response, 400, "Zone Bare has no depot", code="zone_has_no_depot")
    assert_error(by_default, 400, "Zone Bare has no depot", code="zone_has_no_depot")


def test_an_empty_day_is_a_400(client, organization, mitte):
    order(
        organization, mitte, window=(at(9, day=DAY.replace(day=9)), at(12, day=DAY.replace(day=9)))
    )

    for body in ({"date": DAY.isoformat()}, {"date": DAY.isoformat(), "zoneIds": [str(mitte.id)]}):
        response = client.post(plans_url(organization), body, format="json")
        assert_error(response, 400, "No orders to plan on 2031-01-08", code="no_orders_to_plan")


def test_another_organizations_plan_is_404(client, organization, other_organization, mitte):
    builders.driver(organization)
    order(organization, mitte, window=(at(9), at(12)))
    plan = solved(client, organization, {"date": DAY.isoformat()})
    theirs = builders.manager_client(other_organization, "them@example.com")

    for path in (
        f"{plans_url(other_organization)}/{plan['id']}",
        f"{plans_url(organization)}/{plan['id']}",
    ):
        assert_error(theirs.get(path), 404)
    assert_error(theirs.get(f"{plans_url(other_organization)}/{plan['id']}"), 404, "Plan not found")
    assert theirs.get(plans_url(other_organization)).json()["items"] == []
    assert_error(client.get(f"{plans_url(organization)}/nonsense"), 404, "Plan not found")
    move = {
        "orderId": plan["routes"][0]["stops"][0]["orderId"],
        "routeId": plan["routes"][0]["id"],
        "position": 1,
    }
    assert_error(
        theirs.post(f"{plans_url(other_organization)}/{plan['id']}/moves", move, format="json"),
        404,
        "Plan not found",
    )


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"date": "2031-13-01"}, "date must be a valid date (format: YYYY-MM-DD)"),
        (
            {"status": "done"},
            "status must be one of: planning, ready, committed, superseded, failed",
        ),
        ({"pageSize": "0"}, "pageSize must be an integer from 1 to 100"),
    ],
)
def test_bad_list_filters_are_a_400(client, organization, query, message):
    assert_error(client.get(plans_url(organization), query), 400, message)


def test_without_a_token_it_is_a_401(organization):
    assert_error(APIClient().get(plans_url(organization)), 401, "Invalid or missing token")
