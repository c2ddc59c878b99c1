"""A manual assignment (the management `transition` to `assigned`, and the admin's) appends the
order to the end of the driver's route of its day, creating the route if needed, with an ETA
(contract "Dispatch", "Manual assignment")."""

from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest

from dispatch.models import Plan, PlanRoute, PlanStatus
from tests import builders
from tests.conftest import assert_error
from tests.dispatch import committed_world as world

pytestmark = pytest.mark.django_db
BERLIN = ZoneInfo("Europe/Berlin")


@pytest.fixture
def mitte(organization):
    return world.depot_zone(organization)


@pytest.fixture
def samira(organization):
    return builders.driver(organization, "Samira Haddad")


def assign(manager, organization, order, driver):
    return manager.post(
        f"/api/manage/organizations/{organization.id}/orders/{order.id}/transition",
        {"status": "assigned", "driverId": str(driver.id)},
        format="json",
    )


def test_the_first_assignment_of_the_day_creates_the_drivers_route(
    manager, organization, mitte, samira
):
    order = world.window_order(organization, mitte, "M-1")

    response = assign(manager, organization, order, samira)

    assert response.status_code == 200, response.content
    route = PlanRoute.objects.get(driver=samira, date=world.DAY)
    assert route.plan.status == PlanStatus.COMMITTED
    assert route.plan.zone_ids == [mitte.id]
    (stop,) = route.stops.all()
    order.refresh_from_db()
    assert (order.status, order.driver_id, order.eta) == ("assigned", samira.id, stop.eta)
    # The shift starts at 08:00 with the window: the drive from the depot, then the stop.
    assert world.WINDOW[0] < stop.eta < world.WINDOW[0] + timedelta(minutes=5)
    world.route_check(route)
    (event,) = builders.events_named("order.assigned", organization)
    assert event.payload["eta"] == stop.eta.astimezone(BERLIN).isoformat()
    assert event.payload["driver"]["id"] == str(samira.id)


def test_a_later_assignment_joins_the_end_of_the_committed_route(
    manager, organization, mitte, samira
):
    first, second = (world.window_order(organization, mitte, ref) for ref in ("C-1", "C-2"))
    plan = world.ready_plan(organization, [mitte], {samira: [first, second]})
    commit = manager.post(
        f"/api/manage/organizations/{organization.id}/dispatch/plans/{plan.id}/commit"
    )
    assert commit.status_code == 200, commit.content
    late = world.window_order(organization, mitte, "C-3", north_m=1500.0)

    assert assign(manager, organization, late, samira).status_code == 200

    assert world.committed_routes(organization) == {"Samira Haddad": ["C-1", "C-2", "C-3"]}
    assert Plan.objects.count() == 1
    route = PlanRoute.objects.get(plan=plan)
    world.route_check(route)
    late.refresh_from_db()
    assert late.eta == route.stops.get(sequence=3).eta
    assert late.eta > route.stops.get(sequence=2).eta


def test_reassigning_by_hand_moves_the_order_to_the_new_drivers_route(
    manager, organization, mitte, samira
):
    tom = builders.driver(organization, "Tom Berger")
    order = world.window_order(organization, mitte, "R-1")
    assert assign(manager, organization, order, samira).status_code == 200
    builders.advance(order, "dispatching")

    assert assign(manager, organization, order, tom).status_code == 200

    assert world.committed_routes(organization) == {"Samira Haddad": [], "Tom Berger": ["R-1"]}


def test_a_refused_assignment_leaves_no_route(manager, organization, mitte, samira):
    order = world.window_order(organization, mitte, "X-1")
    builders.order_cancel(order)

    assert_error(
        assign(manager, organization, order, samira),
        409,
        "Order X-1 cannot be assigned in status cancelled",
    )
    assert not PlanRoute.objects.exists()


def test_an_inactive_driver_is_refused_and_leaves_no_route(manager, organization, mitte, samira):
    samira.is_active = False
    samira.save(update_fields=["is_active"])
    order = world.window_order(organization, mitte, "I-1")

    assert_error(assign(manager, organization, order, samira), 400)
    assert not PlanRoute.objects.exists()
    assert not Plan.objects.exists()


def test_an_order_without_coordinates_is_assigned_without_a_route(
    manager, organization, mitte, samira
):
    order = builders.order_row(organization, zone=mitte, window=world.WINDOW)

    assert assign(manager, organization, order, samira).status_code == 200

    order.refresh_from_db()
    assert (order.status, order.eta) == ("assigned", None)
    assert not PlanRoute.objects.exists()
    (event,) = builders.events_named("order.assigned", organization)
    assert event.payload["eta"] is None


def test_the_admin_assignment_joins_the_route_too(organization, mitte, samira):
    order = world.window_order(organization, mitte, "A-1")
    client = builders.admin_site_client(organization)

    response = client.post(
        "/admin/integrations/order/",
        {
            "action": "transition_to_assigned",
            "_selected_action": [str(order.pk)],
            "driver_id": str(samira.pk),
        },
        follow=True,
    )

    assert response.status_code == 200
    order.refresh_from_db()
    assert order.status == "assigned"
    assert order.eta is not None
    assert world.committed_routes(organization) == {"Samira Haddad": ["A-1"]}


def test_unassigning_by_hand_takes_the_order_off_the_route(manager, organization, mitte, samira):
    kept, dropped = (world.window_order(organization, mitte, ref) for ref in ("U-1", "U-2"))
    for order in (kept, dropped):
        assert assign(manager, organization, order, samira).status_code == 200

    response = manager.post(
        f"/api/manage/organizations/{organization.id}/orders/{dropped.id}/transition",
        {"status": "dispatching"},
        format="json",
    )

    assert response.status_code == 200, response.content
    assert world.committed_routes(organization) == {"Samira Haddad": ["U-1"]}
    dropped.refresh_from_db()
    assert (dropped.status, dropped.driver_id, dropped.eta) == ("dispatching", None, None)
    world.route_check(PlanRoute.objects.get(driver=samira))
