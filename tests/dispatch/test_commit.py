"""POST /api/manage/organizations/:orgId/dispatch/plans/:planId/commit (contract "Dispatch",
"Commit"): orders assigned with driver, route, sequence and ETA; changed orders skipped, never
overwritten; a new commit supersedes the old; started stops never move."""

from zoneinfo import ZoneInfo

import pytest

from dispatch.models import Plan, PlanRoute, PlanStatus, PlanStop
from integrations.models import Order
from tests import builders
from tests.conftest import assert_error
from tests.dispatch import committed_world as world

pytestmark = pytest.mark.django_db


def commit_path(organization, plan) -> str:
    return f"/api/manage/organizations/{organization.id}/dispatch/plans/{plan}/commit"


def commit(manager, organization, plan):
    response = manager.post(commit_path(organization, plan.id))
    assert response.status_code == 200, response.content
    return response.json()


@pytest.fixture
def mitte(organization):
    return world.depot_zone(organization)


@pytest.fixture
def samira(organization):
    return builders.driver(organization, "Samira Haddad")


@pytest.fixture
def tom(organization):
    return builders.driver(organization, "Tom Berger")


def assigned_events(organization, order):
    return [
        event.payload
        for event in builders.events_named("order.assigned", organization)
        if event.payload["id"] == str(order.id)
    ]


def test_commit_assigns_each_order_with_its_driver_route_sequence_and_eta(
    manager, organization, mitte, samira, tom
):
    a1, a2, b1 = (world.window_order(organization, mitte, ref) for ref in ("A-1", "A-2", "B-1"))
    plan = world.ready_plan(organization, [mitte], {samira: [a1, a2], tom: [b1]})

    body = commit(manager, organization, plan)

    assert body["assigned"] == 3
    assert body["skipped"] == []
    assert body["plan"]["status"] == "committed"
    assert world.committed_routes(organization) == {
        "Samira Haddad": ["A-1", "A-2"],
        "Tom Berger": ["B-1"],
    }
    for route in PlanRoute.objects.filter(plan=plan):
        world.route_check(route)
        for stop in route.stops.select_related("order"):
            assert stop.order.status == "assigned"
            assert stop.order.driver_id == route.driver_id
            assert stop.order.eta == stop.eta
    a1.refresh_from_db()
    (payload,) = assigned_events(organization, a1)
    assert payload["driver"] == {
        "id": str(samira.id),
        "name": "Samira Haddad",
        "phone": samira.phone,
    }
    # In Berlin time, as partners read windows.
    assert payload["eta"] == a1.eta.astimezone(ZoneInfo("Europe/Berlin")).isoformat()
    assert payload["eta"].endswith("+01:00")


def test_an_order_changed_since_planning_is_skipped_never_overwritten(
    manager, organization, mitte, samira, tom
):
    kept, cancelled, by_hand, moved = (
        world.window_order(organization, mitte, ref) for ref in ("K-1", "C-1", "H-1", "M-1")
    )
    plan = world.ready_plan(organization, [mitte], {samira: [kept, cancelled, by_hand, moved]})
    builders.order_cancel(cancelled)
    builders.advance(by_hand, "assigned", driver=tom)
    Order.objects.filter(pk=moved.pk).update(
        delivery_window_start=world.WINDOW[0].replace(hour=12),
        delivery_window_end=world.WINDOW[1].replace(hour=15),
    )

    body = commit(manager, organization, plan)

    assert body["assigned"] == 1
    assert body["skipped"] == sorted(
        [
            {"orderId": str(cancelled.id), "reason": "cancelled"},
            {"orderId": str(by_hand.id), "reason": "reassigned"},
            {"orderId": str(moved.id), "reason": "rescheduled"},
        ],
        key=lambda item: item["orderId"],
    )
    assert world.committed_routes(organization) == {"Samira Haddad": ["K-1"]}
    statuses = dict(Order.objects.values_list("external_ref", "status"))
    assert statuses == {"K-1": "assigned", "C-1": "cancelled", "H-1": "assigned", "M-1": "pending"}
    by_hand.refresh_from_db()
    assert by_hand.driver_id == tom.id
    world.route_check(PlanRoute.objects.get(plan=plan))


def test_an_order_delivered_since_planning_is_skipped(manager, organization, mitte, samira):
    done, waiting = (world.window_order(organization, mitte, ref) for ref in ("D-1", "D-2"))
    plan = world.ready_plan(organization, [mitte], {samira: [done, waiting]})
    builders.advance(done, "assigned", "picked_up", "in_transit", "delivered", driver=samira)

    body = commit(manager, organization, plan)

    assert body["skipped"] == [{"orderId": str(done.id), "reason": "delivered"}]
    assert world.committed_routes(organization) == {"Samira Haddad": ["D-2"]}


def test_a_release_is_not_a_change_that_skips(manager, organization, mitte, samira):
    order = world.window_order(organization, mitte, "R-1")
    plan = world.ready_plan(organization, [mitte], {samira: [order]})
    builders.advance(order, "dispatching")

    body = commit(manager, organization, plan)

    assert (body["assigned"], body["skipped"]) == (1, [])


@pytest.mark.parametrize("status", ["committed", "superseded", "failed", "planning"])
def test_only_a_ready_plan_is_committed(manager, organization, mitte, samira, status):
    order = world.window_order(organization, mitte, "N-1")
    plan = world.ready_plan(organization, [mitte], {samira: [order]})
    Plan.objects.filter(pk=plan.pk).update(status=status)

    assert_error(
        manager.post(commit_path(organization, plan.id)),
        409,
        f"Plan is {status}",
        code="plan_not_ready",
    )
    order.refresh_from_db()
    assert order.status == "pending"


def test_committing_twice_answers_409_the_second_time(manager, organization, mitte, samira):
    order = world.window_order(organization, mitte, "T-1")
    plan = world.ready_plan(organization, [mitte], {samira: [order]})
    commit(manager, organization, plan)

    assert_error(manager.post(commit_path(organization, plan.id)), 409, "Plan is committed")
    assert len(assigned_events(organization, order)) == 1


@pytest.mark.parametrize("plan_id", ["5b0f3c52-8d2e-4c47-9a64-2f6f1c4e7d10", "not-a-uuid"])
def test_an_unknown_plan_is_404(manager, organization, plan_id):
    assert_error(manager.post(commit_path(organization, plan_id)), 404, "Plan not found")


def test_another_organizations_plan_is_404(manager, organization, other_organization):
    zone = world.depot_zone(other_organization)
    driver = builders.driver(other_organization)
    order = world.window_order(other_organization, zone, "O-1")
    plan = world.ready_plan(other_organization, [zone], {driver: [order]})

    assert_error(manager.post(commit_path(organization, plan.id)), 404, "Plan not found")
    plan.refresh_from_db()
    assert plan.status == "ready"


def test_without_a_token_is_401(api_client, organization, mitte, samira):
    order = world.window_order(organization, mitte, "U-1")
    plan = world.ready_plan(organization, [mitte], {samira: [order]})
    assert_error(api_client.post(commit_path(organization, plan.id)), 401)


# ----- a new commit supersedes the old -----


def test_a_new_commit_supersedes_the_old_and_a_moved_order_gets_a_new_assigned_event(
    manager, organization, mitte, samira, tom
):
    stays, moves = (world.window_order(organization, mitte, ref) for ref in ("S-1", "V-1"))
    first = world.ready_plan(organization, [mitte], {samira: [stays, moves]})
    commit(manager, organization, first)
    stays.refresh_from_db()
    first_eta = stays.eta
    second = world.ready_plan(organization, [mitte], {samira: [stays], tom: [moves]})

    body = commit(manager, organization, second)

    assert body["assigned"] == 2
    first.refresh_from_db()
    assert first.status == "superseded"
    assert world.committed_routes(organization) == {
        "Samira Haddad": ["S-1"],
        "Tom Berger": ["V-1"],
    }
    # Kept by its driver: no second event. Moved: dispatching, then a new order.assigned.
    assert len(assigned_events(organization, stays)) == 1
    assert [payload["driver"]["id"] for payload in assigned_events(organization, moves)] == [
        str(samira.id),
        str(tom.id),
    ]
    history = list(moves.status_events.order_by("at", "id").values_list("to_status", flat=True))
    assert history == ["pending", "assigned", "dispatching", "assigned"]
    stays.refresh_from_db()
    assert stays.eta == PlanStop.objects.get(plan=second, order=stays).eta
    assert first_eta is not None


def test_a_plan_of_other_zones_supersedes_nothing(manager, organization, mitte, samira, tom):
    other = world.depot_zone(organization, "Pankow")
    here, there = (
        world.window_order(organization, mitte, "Z-1"),
        world.window_order(organization, other, "Z-2"),
    )
    first = world.ready_plan(organization, [mitte], {samira: [here]})
    second = world.ready_plan(organization, [other], {tom: [there]})
    commit(manager, organization, first)

    commit(manager, organization, second)

    assert set(Plan.objects.values_list("status", flat=True)) == {"committed"}
    assert world.committed_routes(organization) == {
        "Samira Haddad": ["Z-1"],
        "Tom Berger": ["Z-2"],
    }


def test_a_driver_on_a_route_of_other_zones_is_skipped_as_busy(
    manager, organization, mitte, samira
):
    other = world.depot_zone(organization, "Pankow")
    here, there = (
        world.window_order(organization, mitte, "Y-1"),
        world.window_order(organization, other, "Y-2"),
    )
    first = world.ready_plan(organization, [mitte], {samira: [here]})
    second = world.ready_plan(organization, [other], {samira: [there]})
    commit(manager, organization, first)

    body = commit(manager, organization, second)

    assert body["skipped"] == [{"orderId": str(there.id), "reason": "driver_busy"}]
    assert world.committed_routes(organization) == {"Samira Haddad": ["Y-1"]}


def test_a_started_stop_never_moves_and_stays_first_on_its_drivers_route(
    manager, organization, mitte, samira, tom
):
    started, waiting, new = (
        world.window_order(organization, mitte, ref) for ref in ("P-1", "P-2", "P-3")
    )
    first = world.ready_plan(organization, [mitte], {samira: [waiting, started]})
    commit(manager, organization, first)
    # Planned while P-1 was still only assigned: the new plan gives it to Tom.
    second = world.ready_plan(organization, [mitte], {samira: [waiting, new], tom: [started]})
    builders.advance(started, "picked_up")

    body = commit(manager, organization, second)

    assert body["skipped"] == [{"orderId": str(started.id), "reason": "started"}]
    assert world.committed_routes(organization) == {"Samira Haddad": ["P-1", "P-2", "P-3"]}
    started.refresh_from_db()
    assert (started.status, started.driver_id) == ("picked_up", samira.id)
    world.route_check(PlanRoute.objects.get(plan=second, driver=samira))


def test_an_assignment_by_hand_since_planning_is_carried_onto_the_new_plan(
    manager, organization, mitte, samira, tom
):
    planned, by_hand = (world.window_order(organization, mitte, ref) for ref in ("Q-1", "Q-2"))
    second = world.ready_plan(organization, [mitte], {samira: [planned, by_hand]})
    response = manager.post(
        f"/api/manage/organizations/{organization.id}/orders/{by_hand.id}/transition",
        {"status": "assigned", "driverId": str(tom.id)},
        format="json",
    )
    assert response.status_code == 200, response.content

    body = commit(manager, organization, second)

    assert body["skipped"] == [{"orderId": str(by_hand.id), "reason": "reassigned"}]
    assert world.committed_routes(organization) == {
        "Samira Haddad": ["Q-1"],
        "Tom Berger": ["Q-2"],
    }
    assert Plan.objects.filter(status="superseded").count() == 1


def test_an_assigned_order_the_new_plan_leaves_out_waits_for_a_driver_again(
    manager, organization, mitte, samira
):
    kept, dropped = (world.window_order(organization, mitte, ref) for ref in ("L-1", "L-2"))
    commit(
        manager, organization, world.ready_plan(organization, [mitte], {samira: [kept, dropped]})
    )
    second = world.ready_plan(organization, [mitte], {samira: [kept]}, unassigned=[dropped])

    commit(manager, organization, second)

    dropped.refresh_from_db()
    assert (dropped.status, dropped.driver_id, dropped.eta) == ("dispatching", None, None)
    assert world.committed_routes(organization) == {"Samira Haddad": ["L-1"]}


def test_superseded_orders_of_zones_the_new_plan_does_not_cover_keep_their_route(
    manager, organization, mitte, samira, tom
):
    other = world.depot_zone(organization, "Pankow")
    here, there = (
        world.window_order(organization, mitte, "W-1"),
        world.window_order(organization, other, "W-2"),
    )
    commit(
        manager,
        organization,
        world.ready_plan(organization, [mitte, other], {samira: [here], tom: [there]}),
    )
    second = world.ready_plan(organization, [mitte], {samira: [here]})

    commit(manager, organization, second)

    assert world.committed_routes(organization) == {
        "Samira Haddad": ["W-1"],
        "Tom Berger": ["W-2"],
    }
    second.refresh_from_db()
    assert set(second.zone_ids) == {mitte.id, other.id}
    assert PlanStatus.SUPERSEDED in set(Plan.objects.values_list("status", flat=True))
