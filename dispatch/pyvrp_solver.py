"""`solve` with PyVRP (docs/contract.md, "Dispatch": a fixed fleet, total travel time, every job
that can be served served first).

How the problem maps onto PyVRP:

- Each job is a client at a location of its own (a copy of its row and column of the
  matrices), so a routing profile can shut one job off from some vehicles while another job at
  the same address stays open to them.
- Vehicles identical in capacity, depots, shift and the jobs they may serve are one vehicle
  type with `num_available` of them; routes go back to their keys in the problem's order.
- `allowed_vehicles`: PyVRP has no skills, so each set of vehicles shut off from the same jobs
  gets a routing profile where travel to and from those jobs takes longer than any shift and
  costs more than any route: a visit there is never feasible nor cheap.
- The cost is the travel time: PyVRP's "distance" matrix is our durations, its duration matrix
  too; metres only report.
- A job no vehicle could serve even alone is left out before solving, with its reason. The
  others are first all required (PyVRP's own VRPTW model, and its fastest); when no feasible
  solution turns up within a tenth of the budget, they become optional with a prize larger
  than any total of routes for the rest of it, so serving one more job always beats any saving
  of travel.
- The best solution is re-timed by `dispatch.feasibility` and a job that breaks a route is
  moved to `unassigned`: what we answer is feasible whatever PyVRP returned.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence

import numpy as np
import pyvrp
from pyvrp.constants import MAX_VALUE
from pyvrp.stop import MaxIterations, MaxRuntime, MultipleCriteria

from dispatch.feasibility import drop_until_feasible, job_allows, route_timing
from dispatch.vrp import Job, Problem, Route, Solution, Vehicle


def solve(problem: Problem) -> Solution:
    """Routes for every vehicle of `problem` (empty when unused), in its order."""
    started = time.perf_counter()
    reasons: dict[str, str] = {}
    servable: list[Job] = []
    for job in problem.jobs:
        reason = _alone_reason(problem, job)
        if reason is None:
            servable.append(job)
        else:
            reasons[job.key] = reason

    stats: dict = {"iterations": 0, "phases": 0, "pyvrp_feasible": None, "dropped": 0}
    routes: dict[str, list[Job]] = {vehicle.key: [] for vehicle in problem.vehicles}
    if servable and problem.vehicles:
        model = _PyvrpModel(problem, servable)
        best = _search(problem, model, stats)
        stats["pyvrp_feasible"] = bool(best.is_feasible())
        routes.update(model.routes_of(best))

    vehicles = {vehicle.key: vehicle for vehicle in problem.vehicles}
    for key, jobs in routes.items():
        dropped = drop_until_feasible(problem, vehicles[key], jobs)
        reasons.update(dropped)
        stats["dropped"] += len(dropped)
    routed = {job.key for jobs in routes.values() for job in jobs}
    for job in servable:
        if job.key not in routed:
            reasons.setdefault(job.key, "capacity")

    stats["objective"] = sum(
        route_timing(problem, vehicles[key], jobs).travel_seconds for key, jobs in routes.items()
    )
    return Solution(
        routes=tuple(
            Route(vehicle.key, tuple(job.key for job in routes[vehicle.key]))
            for vehicle in problem.vehicles
        ),
        unassigned=tuple(job.key for job in problem.jobs if job.key not in routed),
        solver_ms=round((time.perf_counter() - started) * 1000),
        stats=stats,
        reasons={job.key: reasons[job.key] for job in problem.jobs if job.key not in routed},
    )


#: the share of the budget spent on a plan serving every servable job before giving up on it
FIRST_PHASE_SHARE = 0.1


def _search(problem: Problem, model: _PyvrpModel, stats: dict) -> pyvrp.Solution:
    """PyVRP's best solution, in at most two phases within the problem's one budget.

    First every job is required, as PyVRP models a VRPTW (and as fast as it runs): when the
    fleet can serve them all, that run takes the whole budget. When it finds no feasible
    solution within `FIRST_PHASE_SHARE` of the budget, the fleet cannot (or hardly can) serve
    them all: the jobs become optional with their prize for the rest of the budget, starting
    from the best routes found.
    """
    started = time.perf_counter()
    give_up = _NoFeasibleWithin(
        iterations=None
        if problem.max_iterations is None
        else max(1, int(problem.max_iterations * FIRST_PHASE_SHARE)),
        seconds=problem.time_limit_seconds * FIRST_PHASE_SHARE,
    )
    first = pyvrp.solve(
        model.data(required=True),
        stop=MultipleCriteria(
            [_budget(problem.max_iterations, problem.time_limit_seconds), give_up]
        ),
        seed=problem.seed,
        collect_stats=False,
    )
    stats.update(iterations=first.num_iterations, phases=1)
    if first.best.is_feasible():
        return first.best

    optional = model.data(required=False)
    second = pyvrp.solve(
        optional,
        stop=_budget(
            None
            if problem.max_iterations is None
            else max(0, problem.max_iterations - first.num_iterations),
            max(0.0, problem.time_limit_seconds - (time.perf_counter() - started)),
        ),
        seed=problem.seed,
        collect_stats=False,
        initial_solution=model.carried_over(first.best, optional),
    )
    stats.update(iterations=first.num_iterations + second.num_iterations, phases=2)
    return second.best


def _budget(iterations: int | None, seconds: float):
    runtime = MaxRuntime(seconds)
    if iterations is None:
        return runtime
    return MultipleCriteria([MaxIterations(iterations), runtime])


class _NoFeasibleWithin:
    """A PyVRP stopping criterion: stop when no feasible solution was seen within the limits."""

    def __init__(self, *, iterations: int | None, seconds: float):
        self.iterations_left = iterations
        self.deadline = time.perf_counter() + seconds

    def __call__(self, best_cost: int) -> bool:
        # PyVRP's cost of an infeasible best solution is the largest int64 (FirstFeasible's test)
        if best_cost < np.iinfo(np.int64).max:
            return False
        if self.iterations_left is not None:
            self.iterations_left -= 1
            if self.iterations_left < 0:
                return True
        return time.perf_counter() > self.deadline


def _alone_reason(problem: Problem, job: Job) -> str | None:
    """Why no vehicle could serve `job` even as its only stop; None when one could."""
    candidates = [v for v in problem.vehicles if job_allows(job, v) and v.capacity >= job.size]
    if not candidates or job.window_end < job.window_start:
        return "vehicle" if not candidates else "time_window"
    reached_in_time = False
    for vehicle in candidates:
        timing = route_timing(problem, vehicle, [job])
        if timing.feasible:
            return None
        reached_in_time |= all(v.kind != "time_window" for v in timing.violations)
    return "shift" if reached_in_time else "time_window"


class _PyvrpModel:
    """The PyVRP data of a problem's servable jobs, and the way back to our keys."""

    def __init__(self, problem: Problem, jobs: Sequence[Job]):
        self.jobs = list(jobs)
        # a shift that ends before it starts serves nothing (and PyVRP refuses it)
        vehicles = [v for v in problem.vehicles if v.shift_start <= v.shift_end]
        depot_locations = sorted(
            {v.start_location for v in vehicles} | {v.end_location for v in vehicles}
        )
        depot_of = {location: index for index, location in enumerate(depot_locations)}
        # PyVRP's locations: the depots, then one per job (see the module's docstring)
        rows = np.array(depot_locations + [job.location for job in self.jobs], dtype=np.intp)
        travel = np.asarray(problem.durations, dtype=np.int64)[np.ix_(rows, rows)]
        np.fill_diagonal(travel, 0)

        # Shut-off jobs of each vehicle, by index into self.jobs: one profile per distinct set
        closed_for = {
            v.key: frozenset(i for i, job in enumerate(self.jobs) if not job_allows(job, v))
            for v in vehicles
        }
        closed_sets = sorted(set(closed_for.values()) - {frozenset()}, key=sorted)
        profile_of = {frozenset(): 0} | {closed: n + 1 for n, closed in enumerate(closed_sets)}
        matrices = [travel]
        if closed_sets:
            prohibitive = self._prohibitive(problem, travel)
            for closed in closed_sets:
                matrix = travel.copy()
                columns = len(depot_locations) + np.fromiter(sorted(closed), dtype=np.intp)
                matrix[columns, :] = prohibitive
                matrix[:, columns] = prohibitive
                matrix[columns, columns] = 0
                matrices.append(matrix)

        groups: dict[tuple, list[Vehicle]] = defaultdict(list)
        for vehicle in vehicles:
            signature = (
                vehicle.capacity,
                depot_of[vehicle.start_location],
                depot_of[vehicle.end_location],
                vehicle.shift_start,
                vehicle.shift_end,
                profile_of[closed_for[vehicle.key]],
            )
            groups[signature].append(vehicle)
        self.vehicles_of_type = list(groups.values())
        vehicle_types = [
            pyvrp.VehicleType(
                num_available=len(members),
                capacity=[capacity],
                start_depot=start,
                end_depot=end,
                tw_early=shift_start,
                tw_late=shift_end,
                profile=profile,
                unit_distance_cost=1,
                name=members[0].key,
            )
            for (capacity, start, end, shift_start, shift_end, profile), members in groups.items()
        ]

        # Larger than any total of routes: one more job served always wins
        self.prize = int(
            min(MAX_VALUE, (len(self.jobs) + len(vehicles) + 1) * max(1, int(travel.max())))
        )
        self.clients = [
            pyvrp.Client(
                location=len(depot_locations) + index,
                # one load dimension: on board are the deliveries still to make plus the
                # pickups made, PyVRP's simultaneous pickup and delivery
                delivery=[job.size if job.kind == "delivery" else 0],
                pickup=[job.size if job.kind == "pickup" else 0],
                service_duration=job.service_seconds,
                tw_early=job.window_start,
                tw_late=job.window_end,
                name=job.key,
            )
            for index, job in enumerate(self.jobs)
        ]
        self.required_data = pyvrp.ProblemData(
            locations=[pyvrp.Location(0, 0) for _ in rows],
            clients=self.clients,
            depots=[pyvrp.Depot(location=index) for index in range(len(depot_locations))],
            vehicle_types=vehicle_types,
            distance_matrices=matrices,
            duration_matrices=matrices,
        )

    def data(self, *, required: bool) -> pyvrp.ProblemData:
        """Every job required, or every job optional with a prize."""
        if required:
            return self.required_data
        optional = [self._optional(client) for client in self.clients]
        return self.required_data.replace(clients=optional)

    def _optional(self, client: pyvrp.Client) -> pyvrp.Client:
        return pyvrp.Client(
            location=client.location,
            delivery=client.delivery,
            pickup=client.pickup,
            service_duration=client.service_duration,
            tw_early=client.tw_early,
            tw_late=client.tw_late,
            prize=self.prize,
            required=False,
            name=client.name,
        )

    @staticmethod
    def carried_over(solution: pyvrp.Solution, data: pyvrp.ProblemData) -> pyvrp.Solution:
        """`solution`'s routes in `data`, a problem with the same clients and vehicles."""
        routes = [
            pyvrp.Route(
                data,
                [activity.idx for activity in route if activity.is_client()],
                route.vehicle_type(),
            )
            for route in solution.routes()
        ]
        return pyvrp.Solution(data, routes)

    @staticmethod
    def _prohibitive(problem: Problem, travel: np.ndarray) -> int:
        times = [v.shift_end for v in problem.vehicles] + [v.shift_start for v in problem.vehicles]
        horizon = max(times) - min(times)
        return int(min(MAX_VALUE, 2 * (horizon + int(travel.max())) + 1))

    def routes_of(self, solution: pyvrp.Solution) -> dict[str, list[Job]]:
        """The routes by vehicle key: the n-th route of a type goes to its n-th vehicle."""
        taken: dict[int, int] = defaultdict(int)
        routes: dict[str, list[Job]] = {}
        for route in solution.routes():
            type_index = route.vehicle_type()
            vehicle = self.vehicles_of_type[type_index][taken[type_index]]
            taken[type_index] += 1
            routes[vehicle.key] = [
                self.jobs[activity.idx] for activity in route if activity.is_client()
            ]
        return routes
