"""Moving a stop, or an unassigned order, in a ready plan (contract "Dispatch", "Adjusting a
ready plan"): both routes re-timed, the rules the move breaks named, only ready plans."""

from datetime import time

from dispatch.models import Plan, PlanLeftOut, PlanStatus, PlanStop
from tests import builders
from tests.conftest import assert_error
from tests.dispatch.conftest import DAY, at, order, parse, plans_url, solved


def moves_url(organization, plan) -> str:
    return f"{plans_url(organization)}/{plan['id']}/moves"


def two_routes(client, organization, mitte):
    ana = builders.driver(organization, "Ana", capacity=2, shift_start=time(9), shift_end=time(12))
    ben = builders.driver(organization, "Ben", capacity=2, shift_start=time(9), shift_end=time(12))
    window = (at(9), at(11))
    for n in range(4):
        order(organization, mitte, window=window, north_m=400 * n, east_m=300 * (n % 2))
    plan = solved(client, organization, {"date": DAY.isoformat()})
    assert [len(route["stops"]) for route in plan["routes"]] == [2, 2]
    return plan, ana, ben


def test_a_stop_moves_to_another_route_both_re_timed_and_capacity_named(
    client, organization, mitte
):
    plan, _, _ = two_routes(client, organization, mitte)
    source, target = plan["routes"]
    moving = source["stops"][0]

    response = client.post(
        moves_url(organization, plan),
        {"orderId": moving["orderId"], "routeId": target["id"], "position": 1},
        format="json",
    )

    assert response.status_code == 200, response.content
    route = response.json()
    assert route["id"] == target["id"]
    assert [stop["orderId"] for stop in route["stops"]] == [
        moving["orderId"],
        *(stop["orderId"] for stop in target["stops"]),
    ]
    assert [stop["sequence"] for stop in route["stops"]] == [1, 2, 3]
    etas = [parse(stop["eta"]) for stop in route["stops"]]
    assert etas == sorted(etas)
    assert all(parse(stop["windowStart"]) <= parse(stop["eta"]) for stop in route["stops"])
    assert route["warnings"] == [
        {
            "reason": "capacity",
            "orderId": None,
            "externalRef": None,
            "message": "The route carries 3 orders, over the capacity of 2",
        }
    ]
    after = client.get(f"{plans_url(organization)}/{plan['id']}").json()
    left = next(r for r in after["routes"] if r["id"] == source["id"])
    assert [stop["sequence"] for stop in left["stops"]] == [1]
    assert left["travelSeconds"] <= source["travelSeconds"]
    assert parse(left["endAt"]) < parse(source["endAt"])  # one stop fewer to serve
    assert after["summary"]["assigned"] == 4


def test_a_stop_moves_within_its_route_and_a_late_window_is_named(client, organization, mitte):
    builders.driver(organization, "Ana", shift_start=time(9), shift_end=time(12))
    near = order(organization, mitte, window=(at(9), at(9, 20)), north_m=100)
    far = order(organization, mitte, window=(at(9), at(11)), north_m=-6000, east_m=6000)
    plan = solved(client, organization, {"date": DAY.isoformat()})
    route = plan["routes"][0]
    assert [stop["orderId"] for stop in route["stops"]] == [str(near.id), str(far.id)]

    response = client.post(
        moves_url(organization, plan),
        {"orderId": str(near.id), "routeId": route["id"], "position": 2},
        format="json",
    )

    body = response.json()
    assert [stop["orderId"] for stop in body["stops"]] == [str(far.id), str(near.id)]
    assert [warning["reason"] for warning in body["warnings"]] == ["time_window"]
    assert body["warnings"][0]["orderId"] == str(near.id)
    assert body["warnings"][0]["message"].startswith(f"Order {near.external_ref} is reached ")


def test_an_unassigned_order_moves_onto_a_route(client, organization, mitte):
    plan, _, _ = two_routes(client, organization, mitte)
    extra = order(organization, mitte, window=(at(9), at(11)), east_m=-700)
    Plan.objects.filter(pk=plan["id"]).update(status=PlanStatus.READY)
    PlanLeftOut.objects.create(
        plan_id=plan["id"], order=extra, reason="capacity", window_start=at(9), window_end=at(11)
    )
    target = plan["routes"][1]

    response = client.post(
        moves_url(organization, plan),
        {"orderId": str(extra.id), "routeId": target["id"], "position": 3},
        format="json",
    )

    assert response.status_code == 200, response.content
    assert response.json()["stops"][2]["orderId"] == str(extra.id)
    after = client.get(f"{plans_url(organization)}/{plan['id']}").json()
    assert after["unassigned"] == []
    assert after["summary"]["assigned"] == 5
    assert PlanStop.objects.filter(plan_id=plan["id"], order=extra).count() == 1


def test_only_a_ready_plan_moves(client, organization, mitte):
    plan, _, _ = two_routes(client, organization, mitte)
    stop = plan["routes"][0]["stops"][0]
    body = {"orderId": stop["orderId"], "routeId": plan["routes"][1]["id"], "position": 1}
    for status in ("committed", "superseded", "failed", "planning"):
        Plan.objects.filter(pk=plan["id"]).update(status=status)
        response = client.post(moves_url(organization, plan), body, format="json")
        assert_error(response, 409, f"Plan is {status}", code="plan_not_ready")


def test_bad_moves_answer_the_contract_error_body(client, organization, other_organization, mitte):
    plan, _, _ = two_routes(client, organization, mitte)
    route = plan["routes"][0]
    stop = route["stops"][0]
    collect = order(organization, mitte, service_type="click_collect")
    PlanLeftOut.objects.create(
        plan_id=plan["id"], order=collect, reason="click_collect", excluded=True
    )
    outsider = order(organization, mitte)
    foreign = order(other_organization, builders.zone(other_organization, "Theirs"))
    url = moves_url(organization, plan)

    def move(**changes):
        body = {"orderId": stop["orderId"], "routeId": route["id"], "position": 1, **changes}
        return client.post(url, {k: v for k, v in body.items() if v is not ...}, format="json")

    assert_error(move(orderId=..., routeId=..., position=...), 400, "orderId is required")
    assert_error(move(position=0), 400, "position: must be between 1 and 10001")
    assert_error(move(position="1"), 400, "position: must be an integer")
    assert_error(move(position=3), 400, "position must be between 1 and 2")
    assert_error(move(routeId="nope"), 404, "Route not found", code="route_not_found")
    assert_error(move(orderId="nope"), 404, "Order not found")
    assert_error(move(orderId=str(foreign.id)), 404, "Order not found")
    assert_error(
        move(orderId=str(outsider.id)),
        400,
        f"Order {outsider.external_ref} is not in this plan",
        code="order_not_in_plan",
    )
    assert_error(
        move(orderId=str(collect.id)),
        400,
        f"Order {collect.external_ref} is excluded from routing",
        code="order_excluded",
    )
