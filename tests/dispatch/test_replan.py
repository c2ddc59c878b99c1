"""Re-planning a day under way (contract "Dispatch"): each driver's started stops (`picked_up`,
`in_transit`) stay first on that driver's route, pinned by our code whatever the solver offers;
the rest is planned again. Checked from the stored plan."""

from datetime import time

from dispatch.models import PlanRoute
from integrations.models import Order
from tests import builders
from tests.dispatch.conftest import DAY, assert_route_keeps_the_rules, at, order, solved


def commit(client, organization, plan_id):
    response = client.post(
        f"/api/manage/organizations/{organization.id}/dispatch/plans/{plan_id}/commit"
    )
    assert response.status_code == 200, response.content
    return response.json()


def route_of(plan: dict, driver) -> dict:
    (route,) = (route for route in plan["routes"] if route["driver"]["id"] == str(driver.id))
    return route


def test_a_replan_keeps_each_drivers_started_stops_first(client, organization, mitte):
    ana = builders.driver(organization, "Ana", capacity=6, shift_start=time(8), shift_end=time(18))
    ben = builders.driver(organization, "Ben", capacity=6, shift_start=time(8), shift_end=time(18))
    day_window = (at(8), at(17))
    orders = [
        order(organization, mitte, window=day_window, north_m=400 * n, east_m=-300 * n)
        for n in range(1, 7)
    ]
    first = solved(client, organization, {"date": DAY.isoformat()})
    commit(client, organization, first["id"])
    # The driver with the longer route is the one under way.
    busiest = max(first["routes"], key=lambda route: len(route["stops"]))
    ana = ana if busiest["driver"]["id"] == str(ana.id) else ben
    ana_route = busiest["stops"]
    assert len(ana_route) >= 2
    # The driver took the last of its stops first (picked up), and is driving to its second.
    picked = Order.objects.get(pk=ana_route[-1]["orderId"])
    moving = Order.objects.get(pk=ana_route[1]["orderId"])
    builders.advance(picked, "picked_up")
    builders.advance(moving, "picked_up", "in_transit")
    late = [
        order(organization, mitte, window=day_window, north_m=-500 * n, east_m=600 * n)
        for n in range(1, 4)
    ]

    second = solved(client, organization, {"date": DAY.isoformat()})

    route = route_of(second, ana)
    refs = [stop["orderId"] for stop in route["stops"]]
    # In transit first, then picked up: pinned by our code, whatever the solver offers.
    assert refs[:2] == [str(moving.id), str(picked.id)]
    assert_route_keeps_the_rules(route, capacity=6, shift=(at(8), at(18)))
    placed = [stop["orderId"] for r in second["routes"] for stop in r["stops"]]
    left = [item["orderId"] for item in second["unassigned"] + second["excluded"]]
    assert sorted(placed + left) == sorted(str(o.id) for o in [*orders, *late])
    assert len(set(placed)) == len(placed)

    body = commit(client, organization, second["id"])

    assert body["skipped"] == []
    assert body["assigned"] == len(placed) - 2  # the started two keep their place, unmoved
    stored = PlanRoute.objects.get(plan_id=second["id"], driver=ana)
    assert [str(stop.order_id) for stop in stored.stops.order_by("sequence")][:2] == refs[:2]
    statuses = dict(Order.objects.filter(pk__in=[moving.pk, picked.pk]).values_list("pk", "status"))
    assert statuses == {moving.pk: "in_transit", picked.pk: "picked_up"}


def test_a_started_stop_stays_first_even_when_the_solver_would_start_elsewhere(
    client, organization, mitte
):
    ana = builders.driver(organization, "Ana", capacity=4, shift_start=time(8), shift_end=time(18))
    far = order(organization, mitte, window=(at(8), at(17)), north_m=1800)
    first = solved(client, organization, {"date": DAY.isoformat()})
    commit(client, organization, first["id"])
    builders.advance(far, "picked_up")
    # Near the depot, open at once: a solver starting afresh would serve it first.
    near = order(organization, mitte, window=(at(8), at(17)), north_m=100, east_m=0)

    second = solved(client, organization, {"date": DAY.isoformat()})

    route = route_of(second, ana)
    assert [stop["orderId"] for stop in route["stops"]] == [str(far.id), str(near.id)]
    assert second["unassigned"] == []
    assert_route_keeps_the_rules(route, capacity=4, shift=(at(8), at(18)))
