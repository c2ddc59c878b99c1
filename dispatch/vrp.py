"""The data of the solver interface (`dispatch.solver`): a VRPTW `Problem` and its `Solution`.

Integer seconds and metres, locations by index into the matrices. Nothing here knows Django.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

JobKind = Literal["delivery", "pickup"]


@dataclass(frozen=True)
class Vehicle:
    """One driver's route of the day. Times are seconds from the problem's origin."""

    key: str
    capacity: int
    start_location: int
    end_location: int
    shift_start: int
    shift_end: int


@dataclass(frozen=True)
class Job:
    """One stop: a delivery loaded at the depot, or a pickup brought back to it."""

    key: str
    location: int
    kind: JobKind
    window_start: int
    window_end: int
    service_seconds: int
    #: keys of the vehicles allowed to serve it; None: any vehicle
    allowed_vehicles: frozenset[str] | None = None
    #: room it takes in the vehicle, in units of `Vehicle.capacity` (an order is one)
    size: int = 1


@dataclass(frozen=True)
class Problem:
    durations: np.ndarray  # seconds, square, int
    distances: np.ndarray  # metres, square, int
    vehicles: tuple[Vehicle, ...]
    jobs: tuple[Job, ...]
    seed: int = 1
    #: the solver stops at whichever comes first
    time_limit_seconds: float = 10.0
    max_iterations: int | None = None


@dataclass(frozen=True)
class Route:
    vehicle_key: str
    job_keys: tuple[str, ...]


@dataclass(frozen=True)
class Solution:
    routes: tuple[Route, ...]
    unassigned: tuple[str, ...]
    solver_ms: int
    #: what the solver itself reports (objective, iterations), for logs and benchmarks
    stats: dict = field(default_factory=dict)
    #: why each unassigned job is left out: "vehicle" (no allowed vehicle can take it at all),
    #: "time_window" (no allowed vehicle reaches it within its window), "shift" (reached in
    #: time but not back to the depot before the shift ends), "capacity" (each could alone, the
    #: fleet could not serve them all)
    reasons: dict[str, str] = field(default_factory=dict)
