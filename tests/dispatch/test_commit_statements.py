"""A commit is set-based (contract "Dispatch", "Commit"; docs/performance.md "Query paths"): its
statements do not grow with the plan's orders, whether it assigns waiting orders, re-plans
assigned ones to other drivers, or carries and releases the superseded plan's."""

from itertools import pairwise

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from dispatch.services import committing
from integrations.models import Order
from tests import builders
from tests.dispatch import committed_world as world

pytestmark = pytest.mark.django_db


def statements_of_commit(organization, plan) -> tuple[int, committing.CommitResult]:
    with CaptureQueriesContext(connection) as queries:
        result = committing.plan_commit(organization_id=organization.id, plan_id=plan.id)
    return len(queries.captured_queries), result


def day_of(organization, size: int):
    """A zone, a partner key with a webhook URL, two drivers and `size` orders of the day."""
    zone = world.depot_zone(organization, f"Zone {size}")
    drivers = [builders.driver(organization, f"Driver {size}-{n}") for n in range(2)]
    orders = [
        world.window_order(organization, zone, f"O-{size}-{n}", north_m=100.0 * (n + 1))
        for n in range(size)
    ]
    return zone, drivers, orders


def halves(orders: list) -> tuple[list, list]:
    return orders[: len(orders) // 2], orders[len(orders) // 2 :]


@pytest.fixture(autouse=True)
def webhook_key(organization):
    builders.api_key(organization, "partner_a", webhook_url="http://127.0.0.1:9/hooks")


def test_a_first_commit_costs_the_same_statements_for_few_and_many_orders(organization):
    counts = []
    for size in (2, 6, 16):
        zone, (first, second), orders = day_of(organization, size)
        one, other = halves(orders)
        plan = world.ready_plan(organization, [zone], {first: one, second: other})
        count, result = statements_of_commit(organization, plan)
        assert (result.assigned, result.skipped) == (size, [])
        counts.append(count)

    assert counts[0] == counts[1] == counts[2], counts
    assert Order.objects.filter(status="assigned").count() == 24


def test_a_superseding_commit_costs_the_same_statements_for_few_and_many_orders(organization):
    """The first driver's orders go to the second (dispatching, then assigned again), the
    second's stay (only their ETAs move) but for one picked up (carried) and those the new plan
    leaves out (back to dispatching)."""
    counts = []
    for size in (8, 12, 16):
        zone, (first, second), orders = day_of(organization, size)
        moved, other = halves(orders)
        committed = world.ready_plan(organization, [zone], {first: moved, second: other})
        committing.plan_commit(organization_id=organization.id, plan_id=committed.id)
        started, *stays = other[: len(other) // 2]
        left_out = other[len(other) // 2 :]
        builders.advance(started, "picked_up")
        plan = world.ready_plan(organization, [zone], {second: stays + moved}, unassigned=left_out)

        count, result = statements_of_commit(organization, plan)

        assert (result.assigned, result.skipped) == (len(stays) + len(moved), [])
        statuses = dict(
            Order.objects.filter(pk__in=[o.pk for o in orders]).values_list(
                "external_ref", "status"
            )
        )
        assert statuses[started.external_ref] == "picked_up"
        assert {statuses[o.external_ref] for o in left_out} == {"dispatching"}
        assert {statuses[o.external_ref] for o in stays + moved} == {"assigned"}
        counts.append(count)

    assert all(a == b for a, b in pairwise(counts)), counts
