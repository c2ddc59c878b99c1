"""Re-times a route from the matrices and says what it breaks, never taking a solver's word.

The rules (docs/contract.md, "Dispatch"): a driver leaves its start location no earlier than the
shift starts, waits at a stop until its window opens and must arrive before it closes (the
window bounds the arrival, the service may run past it), and is back at its end location by the
end of the shift; deliveries are all on board when it leaves, a pickup adds its size to the
load,
and the load never exceeds the capacity. A job goes only to a vehicle it allows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from dispatch.vrp import Job, Problem, Solution, Vehicle

ViolationKind = Literal["vehicle", "time_window", "shift", "capacity"]


@dataclass(frozen=True)
class Violation:
    #: index of the stop in the route; the capacity at departure and the shift at the end use
    #: -1 and len(route)
    position: int
    kind: ViolationKind


@dataclass(frozen=True)
class RouteTiming:
    #: when the driver leaves the start location (as late as it can without arriving later)
    start_at: int
    #: service start at each stop: the arrival, or the window's opening when earlier
    arrivals: tuple[int, ...]
    end_at: int
    travel_seconds: int
    distance_meters: int
    #: load on board at departure, then after each stop
    loads: tuple[int, ...]
    violations: tuple[Violation, ...]

    @property
    def feasible(self) -> bool:
        return not self.violations


def job_allows(job: Job, vehicle: Vehicle) -> bool:
    return job.allowed_vehicles is None or vehicle.key in job.allowed_vehicles


def route_timing(problem: Problem, vehicle: Vehicle, jobs: Sequence[Job]) -> RouteTiming:
    """Times `jobs` in this order on `vehicle` and lists every rule the route breaks."""
    durations, distances = problem.durations, problem.distances
    violations: list[Violation] = []
    if not jobs:
        return RouteTiming(vehicle.shift_start, (), vehicle.shift_start, 0, 0, (0,), ())

    first = jobs[0]
    start_at = max(
        vehicle.shift_start,
        first.window_start - int(durations[vehicle.start_location, first.location]),
    )
    clock = start_at
    here = vehicle.start_location
    travel = distance = 0
    arrivals = []
    for position, job in enumerate(jobs):
        if not job_allows(job, vehicle):
            violations.append(Violation(position, "vehicle"))
        leg = int(durations[here, job.location])
        travel += leg
        distance += int(distances[here, job.location])
        arrival = clock + leg
        if arrival > job.window_end:
            violations.append(Violation(position, "time_window"))
        service_start = max(arrival, job.window_start)
        arrivals.append(service_start)
        clock = service_start + job.service_seconds
        here = job.location
    leg = int(durations[here, vehicle.end_location])
    travel += leg
    distance += int(distances[here, vehicle.end_location])
    end_at = clock + leg
    if end_at > vehicle.shift_end:
        violations.append(Violation(len(jobs), "shift"))

    load = sum(job.size for job in jobs if job.kind == "delivery")
    loads = [load]
    if load > vehicle.capacity:
        violations.append(Violation(-1, "capacity"))
    for position, job in enumerate(jobs):
        load += job.size if job.kind == "pickup" else -job.size
        loads.append(load)
        if job.kind == "pickup" and load > vehicle.capacity:
            violations.append(Violation(position, "capacity"))
    return RouteTiming(
        start_at, tuple(arrivals), end_at, travel, distance, tuple(loads), tuple(violations)
    )


def solution_problems(problem: Problem, solution: Solution) -> list[str]:
    """Everything wrong with `solution` for `problem`, in words; empty when it is sound.

    Each job once (on a route or unassigned, never both, none missing, none unknown), each
    vehicle at most one route, and every route within the rules of `route_timing`.
    """
    jobs = {job.key: job for job in problem.jobs}
    vehicles = {vehicle.key: vehicle for vehicle in problem.vehicles}
    found: list[str] = []
    seen = Counter(key for route in solution.routes for key in route.job_keys)
    seen.update(solution.unassigned)
    found += [f"job {key} appears {n} times" for key, n in seen.items() if n > 1]
    found += [f"unknown job {key}" for key in seen if key not in jobs]
    found += [f"job {key} is missing" for key in jobs if key not in seen]
    route_counts = Counter(route.vehicle_key for route in solution.routes)
    found += [f"vehicle {key} has {n} routes" for key, n in route_counts.items() if n > 1]
    for route in solution.routes:
        vehicle = vehicles.get(route.vehicle_key)
        if vehicle is None:
            found.append(f"unknown vehicle {route.vehicle_key}")
            continue
        timing = route_timing(
            problem, vehicle, [jobs[key] for key in route.job_keys if key in jobs]
        )
        found += [
            f"vehicle {vehicle.key}: {violation.kind} at stop {violation.position}"
            for violation in timing.violations
        ]
    return found


def drop_until_feasible(problem: Problem, vehicle: Vehicle, jobs: list[Job]) -> dict[str, str]:
    """Removes from `jobs` (in place) the stops that break the route, one at a time, and says why.

    The first late stop goes; over capacity, the last job on board at the fullest point goes;
    past the shift's end, the last stop goes.
    """
    dropped: dict[str, str] = {}
    while jobs:
        timing = route_timing(problem, vehicle, jobs)
        if timing.feasible:
            break
        violation = timing.violations[0]
        position = _stop_to_drop(violation, timing, jobs)
        dropped[jobs.pop(position).key] = violation.kind
    return dropped


def _stop_to_drop(violation: Violation, timing: RouteTiming, jobs: list[Job]) -> int:
    if violation.kind in ("vehicle", "time_window"):
        return violation.position
    if violation.kind == "shift":
        return len(jobs) - 1
    # capacity: loads[0] is at departure, loads[k + 1] after stop k
    fullest = int(np.argmax(timing.loads)) - 1
    on_board = [
        position
        for position, job in enumerate(jobs)
        if (job.kind == "delivery" and position > fullest)
        or (job.kind == "pickup" and position <= fullest)
    ]
    return on_board[-1]
