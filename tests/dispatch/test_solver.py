"""The solver behind dispatch plans (docs/contract.md, "Dispatch"): every answer is re-timed here
from the matrices and the returned routes, never taken on the solver's word."""

from __future__ import annotations

import numpy as np
import pytest

from dispatch.feasibility import drop_until_feasible, route_timing, solution_problems
from dispatch.solver import Job, Problem, Solution, Vehicle, solve

HOUR = 3600


def line_matrix(positions: list[int]) -> np.ndarray:
    """Travel seconds between points on a line: |a - b|."""
    points = np.array(positions, dtype=np.int64)
    return np.abs(points[:, None] - points[None, :])


def problem_of(positions, vehicles, jobs, **options) -> Problem:
    matrix = line_matrix(positions)
    return Problem(matrix, matrix * 10, tuple(vehicles), tuple(jobs), **options)


def van(key="v1", *, capacity=10, start=0, end=None, shift=(0, 10 * HOUR)) -> Vehicle:
    end = start if end is None else end
    return Vehicle(key, capacity, start, end, shift[0], shift[1])


def job(key, location, *, kind="delivery", window=(0, 10 * HOUR), service=60, allowed=None):
    allowed = frozenset(allowed) if allowed is not None else None
    return Job(key, location, kind, window[0], window[1], service, allowed)


def recheck(problem: Problem, solution: Solution) -> dict[str, list[int]]:
    """Re-times every route by hand and fails on any broken rule; answers the arrivals."""
    jobs = {j.key: j for j in problem.jobs}
    placed = [key for route in solution.routes for key in route.job_keys]
    assert sorted(placed + list(solution.unassigned)) == sorted(jobs)
    assert [route.vehicle_key for route in solution.routes] == [v.key for v in problem.vehicles]
    arrivals = {}
    for vehicle, route in zip(problem.vehicles, solution.routes, strict=True):
        stops = [jobs[key] for key in route.job_keys]
        load = sum(stop.size for stop in stops if stop.kind == "delivery")
        assert load <= vehicle.capacity
        clock, here, times = vehicle.shift_start, vehicle.start_location, []
        for stop in stops:
            assert stop.allowed_vehicles is None or vehicle.key in stop.allowed_vehicles
            clock += int(problem.durations[here, stop.location])
            assert clock <= stop.window_end, f"{stop.key} arrives late"
            clock = max(clock, stop.window_start)
            times.append(clock)
            clock += stop.service_seconds
            here = stop.location
            load += stop.size if stop.kind == "pickup" else -stop.size
            assert load <= vehicle.capacity
        if stops:
            assert clock + int(problem.durations[here, vehicle.end_location]) <= vehicle.shift_end
        arrivals[vehicle.key] = times
    assert solution_problems(problem, solution) == []
    return arrivals


def test_capacity_leaves_the_jobs_beyond_it_unassigned_for_capacity():
    problem = problem_of(
        [0, 100, 200, 300, 400, 500],
        [van(capacity=3)],
        [job(f"j{i}", i) for i in range(1, 6)],
        max_iterations=200,
    )

    solution = solve(problem)

    recheck(problem, solution)
    assert len(solution.routes[0].job_keys) == 3
    assert len(solution.unassigned) == 2
    assert set(solution.reasons.values()) == {"capacity"}
    # all five required cannot be feasible: the second phase makes them optional
    assert solution.stats["phases"] == 2
    assert solution.stats["iterations"] == 200


def test_time_windows_decide_the_order_of_stops():
    # the far stop's window closes first: the driver passes the near one and comes back
    problem = problem_of(
        [0, 100, 1000],
        [van()],
        [job("near", 1, window=(3000, 4000)), job("far", 2, window=(0, 1200))],
        max_iterations=200,
    )

    solution = solve(problem)

    assert solution.routes[0].job_keys == ("far", "near")
    assert recheck(problem, solution) == {"v1": [1000, 3000]}
    assert solution.unassigned == ()
    assert solution.stats["phases"] == 1


def test_an_overbooked_fleet_without_an_iteration_limit_stops_at_its_time_limit():
    problem = problem_of(
        [0, *range(100, 2100, 100)],
        [van(capacity=4), van("v2", capacity=4)],
        [job(f"j{i}", i) for i in range(1, 21)],
        time_limit_seconds=1.0,
    )

    solution = solve(problem)

    recheck(problem, solution)
    assert len(solution.unassigned) == 12
    assert solution.solver_ms < 1500


def test_a_job_no_vehicle_reaches_in_its_window_is_unassigned_for_time_window():
    problem = problem_of(
        [0, 5000, 100],
        [van(shift=(1000, 20000))],
        [job("closed", 1, window=(0, 5500)), job("fine", 2)],
        max_iterations=100,
    )

    solution = solve(problem)

    recheck(problem, solution)
    assert solution.unassigned == ("closed",)
    assert solution.reasons == {"closed": "time_window"}
    assert solution.routes[0].job_keys == ("fine",)


def test_shifts_bound_the_route_from_departure_to_return():
    # two stops of an hour's service each fit in a three-hour shift only one at a time
    problem = problem_of(
        [0, 600, 600],
        [van("early", shift=(0, 3 * HOUR)), van("late", shift=(2 * HOUR, 3 * HOUR))],
        [
            job("a", 1, service=HOUR),
            job("b", 2, service=HOUR),
            job("past", 1, window=(4 * HOUR, 5 * HOUR)),
        ],
        max_iterations=300,
    )

    solution = solve(problem)

    arrivals = recheck(problem, solution)
    assert sorted(solution.routes[0].job_keys) == ["a", "b"]
    assert solution.routes[1].job_keys == ()
    assert arrivals["early"] == [600, 600 + HOUR]
    assert solution.reasons == {"past": "shift"}


def test_pickups_add_load_along_the_route_and_come_back_to_the_depot():
    # capacity 2 with two deliveries and two returns: only deliveries first fit
    positions = [0, 100, 200, 300, 400]
    jobs = [
        job("return-near", 1, kind="pickup"),
        job("return-mid", 2, kind="pickup"),
        job("deliver-mid", 3),
        job("deliver-far", 4),
    ]
    problem = problem_of(positions, [van(capacity=2)], jobs, max_iterations=300)

    solution = solve(problem)

    recheck(problem, solution)
    assert solution.unassigned == ()
    route = [next(j for j in jobs if j.key == key) for key in solution.routes[0].job_keys]
    timing = route_timing(problem, problem.vehicles[0], route)
    assert timing.loads[0] == 2
    assert max(timing.loads) == 2
    assert timing.loads[-1] == 2  # the two returns come back to the depot


def test_pickups_first_break_capacity_in_our_own_check():
    jobs = [job("p1", 1, kind="pickup"), job("d1", 2), job("d2", 3)]
    problem = problem_of([0, 10, 20, 30], [van(capacity=2)], jobs)

    timing = route_timing(problem, problem.vehicles[0], jobs)

    assert timing.loads == (2, 3, 2, 1)
    assert [(v.position, v.kind) for v in timing.violations] == [(0, "capacity")]


def test_allowed_vehicles_are_honoured_even_when_another_is_closer():
    positions = [0, 1000, 10, -500]
    problem = problem_of(
        positions,
        [van("near", start=0), van("far", start=1), van("fridge", start=1)],
        [
            job("chilled", 2, allowed={"fridge"}),
            job("anyone", 3),
            job("nobody", 2, allowed={"ghost"}),
        ],
        max_iterations=300,
    )

    solution = solve(problem)

    recheck(problem, solution)
    routes = {route.vehicle_key: route.job_keys for route in solution.routes}
    assert routes == {"near": ("anyone",), "far": (), "fridge": ("chilled",)}
    assert solution.reasons == {"nobody": "vehicle"}


def test_several_depots_start_and_end_where_each_vehicle_does():
    # a vehicle ending at another depot: its return leg is to that depot
    positions = [0, 5000, 10, 4990]
    problem = problem_of(
        positions,
        [van("west", start=0), van("east", start=1, end=0)],
        [job("w", 2), job("e", 3)],
        max_iterations=300,
    )

    solution = solve(problem)

    arrivals = recheck(problem, solution)
    # east passes both on its way to the west depot: 10 + 4980 + 10 beats any other split
    routes = {route.vehicle_key: route.job_keys for route in solution.routes}
    assert routes == {"west": (), "east": ("e", "w")}
    assert solution.stats["objective"] == 5000
    assert arrivals["east"] == [10, 10 + 60 + 4980]


def test_an_empty_problem_answers_empty_routes_or_all_unassigned():
    no_jobs = problem_of([0], [van("a"), van("b")], [])
    no_vehicles = problem_of([0, 10], [], [job("x", 1)])

    first = solve(no_jobs)
    second = solve(no_vehicles)

    assert [(r.vehicle_key, r.job_keys) for r in first.routes] == [("a", ()), ("b", ())]
    assert first.unassigned == ()
    assert second.routes == ()
    assert second.unassigned == ("x",)
    assert second.reasons == {"x": "vehicle"}


def test_a_vehicle_whose_shift_ends_before_it_starts_serves_nothing():
    problem = problem_of(
        [0, 10], [van("broken", shift=(500, 100)), van("fine")], [job("x", 1)], max_iterations=50
    )

    solution = solve(problem)

    recheck(problem, solution)
    assert [(r.vehicle_key, r.job_keys) for r in solution.routes] == [
        ("broken", ()),
        ("fine", ("x",)),
    ]


def random_problem(seed: int, jobs: int = 60, vehicles: int = 4) -> Problem:
    rng = np.random.default_rng(seed)
    points = rng.uniform(0, 10_000, size=(jobs + 2, 2))
    metres = np.rint(np.hypot(*(points[:, None, :] - points[None, :, :]).transpose(2, 0, 1)))
    seconds = np.rint(metres / 7).astype(np.int64)
    fleet = tuple(Vehicle(f"v{i}", 18, i % 2, i % 2, 8 * HOUR, 16 * HOUR) for i in range(vehicles))
    stops = []
    for i in range(jobs):
        opens = int(rng.integers(8, 14)) * HOUR
        stops.append(
            Job(
                f"j{i}",
                i + 2,
                "pickup" if i % 7 == 0 else "delivery",
                opens,
                opens + 2 * HOUR,
                240,
                frozenset({"v0", "v1"}) if i % 11 == 0 else None,
            )
        )
    return Problem(
        seconds, metres.astype(np.int64), fleet, tuple(stops), seed=7, max_iterations=400
    )


def test_the_same_seed_and_iterations_give_the_same_routes():
    problem = random_problem(3)

    first, second = solve(problem), solve(problem)

    assert first.routes == second.routes
    assert first.unassigned == second.unassigned
    assert first.stats["iterations"] == 400
    recheck(problem, first)
    assert len(first.unassigned) <= 12  # 72 places for 60 jobs: most fit


def test_several_jobs_at_one_address_with_different_vehicles_allowed():
    problem = problem_of(
        [0, 50],
        [van("a"), van("b")],
        [job("for-a", 1, allowed={"a"}), job("for-b", 1, allowed={"b"}), job("any", 1)],
        max_iterations=200,
    )

    solution = solve(problem)

    recheck(problem, solution)
    routes = {route.vehicle_key: set(route.job_keys) for route in solution.routes}
    assert "for-a" in routes["a"] and "for-b" in routes["b"]
    assert solution.unassigned == ()


@pytest.mark.parametrize(
    ("jobs", "kept", "dropped"),
    [
        # the second stop arrives after its window: it goes, the rest stays
        (
            [job("a", 1), job("late", 2, window=(0, 50)), job("c", 3)],
            ["a", "c"],
            {"late": "time_window"},
        ),
        # three deliveries for two places: the last on board at departure goes
        ([job("a", 1), job("b", 2), job("c", 3)], ["a", "b"], {"c": "capacity"}),
        # a job for another vehicle goes whatever its place
        ([job("other", 1, allowed={"v9"}), job("b", 2)], ["b"], {"other": "vehicle"}),
    ],
)
def test_a_broken_route_loses_the_stops_that_break_it(jobs, kept, dropped):
    problem = problem_of([0, 30, 60, 90], [van(capacity=2)], jobs)
    route = list(jobs)

    reasons = drop_until_feasible(problem, problem.vehicles[0], route)

    assert [j.key for j in route] == kept
    assert reasons == dropped
    assert route_timing(problem, problem.vehicles[0], route).feasible


def test_a_route_past_the_shift_loses_its_last_stops():
    problem = problem_of(
        [0, 1000, 2000], [van(shift=(0, 3000))], [job("a", 1, service=0), job("b", 2, service=0)]
    )
    route = list(problem.jobs)

    reasons = drop_until_feasible(problem, problem.vehicles[0], route)

    assert [j.key for j in route] == ["a"]
    assert reasons == {"b": "shift"}
