"""Commits racing each other and racing cancels, on real threads with their own PostgreSQL
connections (contract "Dispatch", "Commit"): no order assigned twice, none lost."""

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from delivery.errors import ApplicationError
from dispatch.models import Plan, PlanStatus, PlanStop
from dispatch.services import committing, routes_of_day
from integrations.models import Order
from tests import builders
from tests.dispatch import committed_world as world

pytestmark = pytest.mark.django_db(transaction=True)


def run_together(*calls):
    """Runs each call on its own thread and connection, all released at once; answers each
    call's result or the ApplicationError it raised."""
    barrier = threading.Barrier(len(calls))

    def run(call):
        try:
            barrier.wait()
            return call()
        except ApplicationError as exc:
            return exc
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        return list(pool.map(run, calls))


def assert_each_order_once(organization):
    """Every order on a committed route is assigned (or under way) to that route's driver, and
    is on one committed route only; an order on none is not assigned."""
    stops = PlanStop.objects.filter(
        plan__organization=organization, plan__status=PlanStatus.COMMITTED
    ).select_related("route", "order")
    places = Counter(stop.order_id for stop in stops)
    assert all(count == 1 for count in places.values()), places
    for stop in stops:
        assert stop.order.status in ("assigned", "picked_up", "in_transit"), stop.order.status
        assert stop.order.driver_id == stop.route.driver_id
    for order in Order.objects.filter(organization=organization).exclude(pk__in=places):
        assert order.status != "assigned", order.external_ref


def assigned_events_per_order(organization) -> Counter:
    return Counter(
        event.payload["externalRef"]
        for event in builders.events_named("order.assigned", organization)
    )


def day(organization, count=6):
    zone = world.depot_zone(organization)
    drivers = [builders.driver(organization, f"Driver {n}") for n in range(2)]
    orders = [world.window_order(organization, zone, f"O-{n}") for n in range(count)]
    return zone, drivers, orders


def test_the_same_plan_committed_twice_at_once_assigns_each_order_once(organization):
    zone, (first, second), orders = day(organization)
    plan = world.ready_plan(organization, [zone], {first: orders[:3], second: orders[3:]})

    results = run_together(
        *[lambda: committing.plan_commit(organization_id=organization.id, plan_id=plan.id)] * 2
    )

    committed = [result for result in results if isinstance(result, committing.CommitResult)]
    refused = [result for result in results if isinstance(result, ApplicationError)]
    assert len(committed) == 1 and committed[0].assigned == 6
    assert [str(error) for error in refused] == ["Plan is committed"]
    assert assigned_events_per_order(organization) == {order.external_ref: 1 for order in orders}
    assert_each_order_once(organization)


def test_two_plans_of_one_day_committed_at_once_leave_one_committed_plan(organization):
    zone, (first, second), orders = day(organization)
    one = world.ready_plan(organization, [zone], {first: orders[:3], second: orders[3:]})
    other = world.ready_plan(organization, [zone], {second: orders[:3], first: orders[3:]})

    results = run_together(
        lambda: committing.plan_commit(organization_id=organization.id, plan_id=one.id),
        lambda: committing.plan_commit(organization_id=organization.id, plan_id=other.id),
    )

    assert all(isinstance(result, committing.CommitResult) for result in results), results
    statuses = sorted(Plan.objects.values_list("status", flat=True))
    assert statuses == ["committed", "superseded"]
    # The later commit found every order assigned by the earlier one since its planning: it
    # skipped them all (never overwriting) and carried them, with their drivers, onto its routes.
    later = next(result for result in results if result.skipped)
    assert later.assigned == 0
    assert {item.reason for item in later.skipped} == {"reassigned"}
    assert assigned_events_per_order(organization) == {order.external_ref: 1 for order in orders}
    assert_each_order_once(organization)
    assert Order.objects.filter(status="assigned").count() == 6


def test_cancels_racing_a_commit_are_never_overwritten(organization):
    zone, (first, second), orders = day(organization, count=8)
    plan = world.ready_plan(organization, [zone], {first: orders[:4], second: orders[4:]})
    cancelled = orders[::2]

    def cancel(order):
        return lambda: builders.order_cancel(order)

    results = run_together(
        lambda: committing.plan_commit(organization_id=organization.id, plan_id=plan.id),
        *[cancel(order) for order in cancelled],
    )

    commit_result = results[0]
    assert isinstance(commit_result, committing.CommitResult), commit_result
    statuses = dict(Order.objects.values_list("external_ref", "status"))
    assert {statuses[order.external_ref] for order in cancelled} == {"cancelled"}
    assert {statuses[order.external_ref] for order in orders[1::2]} == {"assigned"}
    skipped = {str(item.order_id) for item in commit_result.skipped}
    # Each cancel came before the commit's lock (skipped) or after it (cancelled once assigned).
    assert skipped <= {str(order.id) for order in cancelled}
    assert commit_result.assigned == 8 - len(skipped)
    assert_each_order_once_or_cancelled(organization)


def assert_each_order_once_or_cancelled(organization):
    stops = PlanStop.objects.filter(
        plan__organization=organization, plan__status=PlanStatus.COMMITTED
    ).select_related("route", "order")
    places = Counter(stop.order_id for stop in stops)
    assert all(count == 1 for count in places.values()), places
    for stop in stops:
        assert stop.order.status in ("assigned", "cancelled"), stop.order.status
        if stop.order.status == "assigned":
            assert stop.order.driver_id == stop.route.driver_id
    assert not Order.objects.filter(status="assigned").exclude(pk__in=places).exists()


def test_assignments_by_hand_racing_a_commit_leave_each_order_on_one_route(organization):
    zone, (first, second), orders = day(organization)
    third = builders.driver(organization, "Driver 2")
    plan = world.ready_plan(organization, [zone], {first: orders[:3], second: orders[3:]})
    by_hand = orders[1::2]

    def assign(order):
        return lambda: routes_of_day.order_assign(order=order, driver=third, actor="test")

    results = run_together(
        lambda: committing.plan_commit(organization_id=organization.id, plan_id=plan.id),
        *[assign(order) for order in by_hand],
    )

    # An assignment before the commit makes it skip the order; one after it is refused (409).
    commit_result = results[0]
    assert isinstance(commit_result, committing.CommitResult), commit_result
    skipped = {item.order_id for item in commit_result.skipped}
    refused = [result for result in results[1:] if isinstance(result, ApplicationError)]
    assert len(skipped) + len(refused) == len(by_hand)
    assert {item.reason for item in commit_result.skipped} <= {"reassigned"}
    assert_each_order_once(organization)
    assert Order.objects.filter(status="assigned").count() == 6
