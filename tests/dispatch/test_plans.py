"""Plans (contract "Dispatch"): which orders, which drivers, routes that keep every capacity,
shift and window (checked from the plan itself), none vanishing, and the same request while
planning answered once."""

from datetime import datetime, time
from zoneinfo import ZoneInfo

import pytest

from dispatch import tasks
from dispatch.errors import ZoneHasNoDepot
from dispatch.models import DriverZone, Plan, PlanRoute, PlanStatus
from integrations.models import OrderStatus
from integrations.services.sandbox import sandbox_driver_get_or_create
from slots.services.templates import slot_policy_update
from tests import builders
from tests.dispatch.conftest import (
    DAY,
    assert_route_keeps_the_rules,
    at,
    order,
    parse,
    plans_url,
    solved,
)


def test_a_day_is_planned_into_routes_that_keep_every_rule(client, organization, mitte):
    early = builders.driver(
        organization, "Ana", capacity=3, shift_start=time(8, 0), shift_end=time(12, 0)
    )
    late = builders.driver(
        organization, "Ben", capacity=4, shift_start=time(10, 0), shift_end=time(16, 0)
    )
    morning, afternoon = (at(8), at(11)), (at(12), at(15))
    orders = [
        order(organization, mitte, window=morning, north_m=300 * n, east_m=-200 * n)
        for n in range(3)
    ] + [
        order(organization, mitte, window=afternoon, north_m=-400 * n, east_m=250 * n)
        for n in range(3)
    ]
    undated = order(organization, mitte, north_m=900)
    pickup = order(organization, mitte, window=afternoon, service_type="return", east_m=1200)

    plan = solved(client, organization, {"date": DAY.isoformat()})

    assert plan["status"] == "ready"
    assert plan["routing"] == "haversine"
    assert plan["zoneIds"] == [str(mitte.id)]
    assert plan["error"] is None
    assert plan["solverMs"] is not None and plan["solvedAt"] is not None
    routed = {stop["orderId"]: stop for route in plan["routes"] for stop in route["stops"]}
    assert set(routed) == {str(o.id) for o in [*orders, undated, pickup]}
    assert routed[str(pickup.id)]["kind"] == "pickup"
    assert plan["unassigned"] == [] and plan["excluded"] == []
    assert plan["summary"]["routes"] == len(plan["routes"]) == 2
    assert plan["summary"]["assigned"] == 8
    assert plan["summary"]["travelSeconds"] == sum(r["travelSeconds"] for r in plan["routes"])
    for route in plan["routes"]:
        driver = early if route["driver"]["id"] == str(early.id) else late
        assert route["driver"] == {"id": str(driver.id), "name": driver.name}
        shift = (
            at(driver.shift_start.hour, driver.shift_start.minute),
            at(driver.shift_end.hour),
        )
        assert_route_keeps_the_rules(route, capacity=driver.capacity, shift=shift)


def test_every_order_of_the_day_ends_up_somewhere_exactly_once(client, organization, mitte):
    ana = builders.driver(organization, "Ana", capacity=2, shift_start=time(9), shift_end=time(11))
    window = (at(9), at(10))
    fits = [order(organization, mitte, window=window, north_m=100 * n) for n in range(4)]
    too_late = order(organization, mitte, window=(at(6), at(7)))
    collect = order(organization, mitte, window=window, service_type="click_collect")
    no_place = builders.order_row(organization, zone=mitte, window=window)
    chilled = order(organization, mitte, window=window, temperature_class="Chilled")
    by_car = order(organization, mitte, window=window, delivery_method="car")
    held = order(organization, mitte, window=window)
    builders.advance(held, OrderStatus.DISPATCHING, OrderStatus.ASSIGNED, driver=ana)
    # Not of this plan: another day, a delivered order, a cancelled one, a test key's.
    order(
        organization, mitte, window=(at(9, day=DAY.replace(day=9)), at(10, day=DAY.replace(day=9)))
    )
    builders.order_deliver(order(organization, mitte, window=window))
    builders.order_cancel(order(organization, mitte, window=window))
    test_key = builders.api_key(organization, "partner_a", test=True)
    order(organization, mitte, window=window, api_key=test_key.api_key)

    # Delivering and cancelling took another driver (builders' Dora): plan with Ana alone.
    plan = solved(client, organization, {"date": DAY.isoformat(), "driverIds": [str(ana.id)]})

    placed = [stop["orderId"] for route in plan["routes"] for stop in route["stops"]]
    left = {item["orderId"]: item["reason"] for item in plan["unassigned"]}
    excluded = {item["orderId"]: item["reason"] for item in plan["excluded"]}
    everything = placed + list(left) + list(excluded)
    considered = {str(o.id) for o in [*fits, too_late, collect, no_place, chilled, by_car, held]}
    assert sorted(everything) == sorted(considered)  # each once, none missing, none foreign
    assert len(placed) == 2  # capacity 2
    assert excluded == {str(collect.id): "click_collect"}
    assert left[str(no_place.id)] == "no_coordinates"
    assert left[str(chilled.id)] == "vehicle"
    assert left[str(by_car.id)] == "vehicle"
    assert left[str(too_late.id)] in ("time_window", "shift")
    assert {left[o] for o in left if o in {str(f.id) for f in [*fits, held]}} <= {"capacity"}
    refs = {item["externalRef"] for item in plan["unassigned"]}
    assert chilled.external_ref in refs


def test_orders_of_a_zone_nobody_serves_are_unassigned_no_driver_for_zone(
    client, organization, mitte
):
    other = builders.zone(
        organization,
        "Pankow",
        builders.square_polygon(13.38, 52.56, 0.05),
        depot={"lat": 52.57, "lng": 13.40},
    )
    ana = builders.driver(organization, "Ana")
    DriverZone.objects.create(driver=ana, zone=other)
    lonely = order(organization, mitte, window=(at(9), at(12)))

    plan = solved(client, organization, {"date": DAY.isoformat(), "zoneIds": [str(mitte.id)]})

    assert plan["unassigned"] == [
        {
            "orderId": str(lonely.id),
            "externalRef": lonely.external_ref,
            "reason": "no_driver_for_zone",
        }
    ]
    assert plan["routes"] == []


def test_drivers_fit_vehicles_and_the_sandbox_driver_never_routes(client, organization, mitte):
    cold_van = builders.driver(organization, "Cold", vehicle_type="refrigerated")
    sandbox_driver_get_or_create(organization_id=organization.id)
    chilled = order(organization, mitte, window=(at(9), at(12)), temperature_class="Frozen")
    plain = order(organization, mitte, window=(at(9), at(12)), north_m=-800)

    plan = solved(client, organization, {"date": DAY.isoformat()})

    assert [route["driver"]["id"] for route in plan["routes"]] == [str(cold_van.id)]
    assert {stop["orderId"] for stop in plan["routes"][0]["stops"]} == {
        str(chilled.id),
        str(plain.id),
    }


def test_capacity_defaults_to_the_slot_policy_vehicle_entry(client, organization, mitte):
    slot_policy_update(
        organization_id=organization.id,
        default_vehicle_capacity=[{"vehicleType": "bike", "count": 3, "maxOrdersPerVehicle": 2}],
    )
    builders.driver(organization, "Bea", vehicle_type="bike")
    for n in range(3):
        order(organization, mitte, window=(at(9), at(17)), north_m=200 * n)

    plan = solved(client, organization, {"date": DAY.isoformat()})

    assert len(plan["routes"][0]["stops"]) == 2
    assert [item["reason"] for item in plan["unassigned"]] == ["capacity"]


def test_the_same_request_while_planning_answers_that_plan(client, organization, mitte):
    builders.driver(organization)
    order(organization, mitte, window=(at(9), at(12)))
    body = {"date": DAY.isoformat(), "zoneIds": [str(mitte.id)]}

    first = client.post(plans_url(organization), body, format="json")
    again = client.post(plans_url(organization), body, format="json")
    other = client.post(plans_url(organization), {"date": DAY.isoformat()}, format="json")

    assert first.status_code == 202
    assert first.json()["status"] == "planning"
    assert first.json()["solvedAt"] is None and first.json()["routes"] == []
    assert again.status_code == 200
    assert again.json()["id"] == first.json()["id"]
    assert other.status_code == 202  # zones not asked for: another request
    assert Plan.objects.count() == 2

    tasks.solve_plan(first.json()["id"])
    tasks.solve_plan(first.json()["id"])  # a repeated message does nothing
    assert Plan.objects.get(pk=first.json()["id"]).status == PlanStatus.READY
    assert PlanRoute.objects.filter(plan_id=first.json()["id"]).count() == 1
    after = client.post(plans_url(organization), body, format="json")
    assert after.status_code == 202  # no longer planning: a new plan


def test_a_driver_routed_by_a_committed_plan_of_other_zones_is_left_out(
    client, organization, mitte
):
    pankow = builders.zone(
        organization,
        "Pankow",
        builders.square_polygon(13.38, 52.56, 0.05),
        depot={"lat": 52.57, "lng": 13.40},
    )
    ana = builders.driver(organization, "Ana")
    ben = builders.driver(organization, "Ben")
    order(organization, pankow, window=(at(9), at(12)), near=(52.57, 13.40))
    first = solved(client, organization, {"date": DAY.isoformat(), "zoneIds": [str(pankow.id)]})
    Plan.objects.filter(pk=first["id"]).update(status=PlanStatus.COMMITTED)
    busy = first["routes"][0]["driver"]["id"]
    order(organization, mitte, window=(at(9), at(12)))

    plan = solved(client, organization, {"date": DAY.isoformat(), "zoneIds": [str(mitte.id)]})

    free = {str(ana.id), str(ben.id)} - {busy}
    assert [route["driver"]["id"] for route in plan["routes"]] == list(free)


def test_a_solve_that_fails_marks_the_plan_failed_with_the_error(client, organization, mitte):
    builders.driver(organization)
    order(organization, mitte, window=(at(9), at(12)))
    response = client.post(plans_url(organization), {"date": DAY.isoformat()}, format="json")
    mitte.depot_lat = mitte.depot_lng = None
    mitte.save()

    with pytest.raises(ZoneHasNoDepot):  # the task re-raises what failed it
        tasks.solve_plan(response.json()["id"])

    plan = client.get(f"{plans_url(organization)}/{response.json()['id']}").json()
    assert plan["status"] == "failed"
    assert plan["error"] == "Zone Mitte has no depot"


def test_the_slot_policy_pickup_address_stands_in_for_a_missing_depot(client, organization):
    zone = builders.zone(organization, "Mitte")
    slot_policy_update(organization_id=organization.id, default_pickup_address="52.5219,13.4132")
    builders.driver(organization)
    order(organization, zone, window=(at(9), at(12)))

    plan = solved(client, organization, {"date": DAY.isoformat()})

    assert plan["status"] == "ready"
    assert len(plan["routes"]) == 1


def test_plans_are_listed_newest_first_and_filtered(client, organization, mitte):
    builders.driver(organization)
    order(organization, mitte, window=(at(9), at(12)))
    ready = solved(client, organization, {"date": DAY.isoformat()})
    planning = client.post(
        plans_url(organization),
        {"date": DAY.isoformat(), "zoneIds": [str(mitte.id)]},
        format="json",
    ).json()

    listed = client.get(plans_url(organization)).json()
    assert [item["id"] for item in listed["items"]] == [planning["id"], ready["id"]]
    assert listed["total"] == 2 and listed["page"] == 1 and listed["pageSize"] == 20
    assert listed["items"][1] == ready
    only_ready = client.get(plans_url(organization), {"status": "ready"}).json()
    assert [item["id"] for item in only_ready["items"]] == [ready["id"]]
    other_day = client.get(plans_url(organization), {"date": "2031-01-09"}).json()
    assert other_day["items"] == []


def test_a_failing_osrm_server_falls_back_to_straight_lines_and_says_so(
    client, organization, mitte, settings
):
    settings.ROUTING = "osrm"
    settings.OSRM_URL = "http://127.0.0.1:1"  # nobody listens
    settings.OSRM_TIMEOUT_SECONDS = 1.0
    builders.driver(organization)
    order(organization, mitte, window=(at(9), at(12)))

    plan = solved(client, organization, {"date": DAY.isoformat()})

    assert plan["routing"] == "haversine-fallback"
    assert len(plan["routes"]) == 1


def test_zones_of_different_time_zones_share_one_clock(client, organization, mitte):
    lisbon = builders.zone(
        organization,
        "Lisboa",
        builders.square_polygon(-9.2, 38.7, 0.05),
        timezone_name="Europe/Lisbon",
        depot={"lat": 38.72, "lng": -9.14},
    )
    ana = builders.driver(organization, "Ana", shift_start=time(9), shift_end=time(12))
    rui = builders.driver(organization, "Rui", shift_start=time(9), shift_end=time(12))
    DriverZone.objects.create(driver=ana, zone=mitte)
    DriverZone.objects.create(driver=rui, zone=lisbon)
    berlin_order = order(organization, mitte, window=(at(9), at(10)))
    lisbon_tz = ZoneInfo("Europe/Lisbon")
    lisbon_window = (
        datetime.combine(DAY, time(9), tzinfo=lisbon_tz),
        datetime.combine(DAY, time(10), tzinfo=lisbon_tz),
    )
    lisbon_order = order(organization, lisbon, window=lisbon_window, near=(38.72, -9.14))

    plan = solved(client, organization, {"date": DAY.isoformat()})

    stops = {stop["orderId"]: (route, stop) for route in plan["routes"] for stop in route["stops"]}
    route, stop = stops[str(lisbon_order.id)]
    assert route["driver"]["id"] == str(rui.id)
    # 09:00 in Lisbon is 10:00 in Berlin: Rui's shift and the window are Lisbon wall times.
    assert lisbon_window[0] <= parse(stop["eta"]) <= lisbon_window[1]
    assert parse(route["startAt"]) >= datetime.combine(DAY, time(9), tzinfo=lisbon_tz)
    assert_route_keeps_the_rules(
        route,
        capacity=20,
        shift=(
            datetime.combine(DAY, time(9), tzinfo=lisbon_tz),
            datetime.combine(DAY, time(12), tzinfo=lisbon_tz),
        ),
        depot=(38.72, -9.14),
    )
    assert stops[str(berlin_order.id)][0]["driver"]["id"] == str(ana.id)
