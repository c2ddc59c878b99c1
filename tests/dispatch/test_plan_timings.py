"""A solve records how long each of its steps took (the dispatch benchmark reads them), and the
solver's iteration bound, when set, is the one it searches with."""

from datetime import time

from dispatch.models import PlanStatus
from tests import builders
from tests.dispatch.conftest import at, order, plan_of, solved


def test_a_solved_plan_records_the_milliseconds_of_each_step(client, organization, mitte):
    builders.driver(organization, "Ana", capacity=5, shift_start=time(8), shift_end=time(16))
    for n in range(3):
        order(organization, mitte, window=(at(9), at(12)), north_m=300 * n)

    plan = solved(client, organization, {"date": "2031-01-08"})

    stored = plan_of(plan["id"])
    assert stored.status == PlanStatus.READY
    assert set(stored.timings) == {"reading", "matrix", "solving", "writing"}
    assert all(isinstance(ms, int) and ms >= 0 for ms in stored.timings.values())
    assert stored.timings["solving"] >= stored.solver_ms - 1
    assert "timings" not in plan  # not part of the API


def test_an_iteration_bound_gives_the_same_plan_again(client, organization, mitte, settings):
    settings.DISPATCH_SOLVER_TIME_LIMIT_SECONDS = 30.0
    settings.DISPATCH_SOLVER_MAX_ITERATIONS = 50
    builders.driver(organization, "Ana", capacity=4, shift_start=time(8), shift_end=time(16))
    builders.driver(organization, "Ben", capacity=4, shift_start=time(8), shift_end=time(16))
    for n in range(6):
        order(organization, mitte, window=(at(9), at(14)), north_m=250 * n, east_m=-150 * n)

    def routes(plan: dict) -> list:
        return [[stop["orderId"] for stop in route["stops"]] for route in plan["routes"]]

    first = solved(client, organization, {"date": "2031-01-08"})
    second = solved(client, organization, {"date": "2031-01-08"})

    assert routes(first) == routes(second)
    assert plan_of(second["id"]).solver_ms < 30_000
