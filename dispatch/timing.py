"""Timing one route from its own figures: the check our code makes of every route, whatever the
solver said (contract "Dispatch").

Pure arithmetic, no Django: seconds from the plan's origin, locations by index into the
plan's matrices (as in `dispatch.solver`). The driver leaves the depot at the shift's start
(or later, when the first window opens later than the drive to it needs), arrives at each stop,
waits when early (the ETA is never before the window opens), serves it, drives on, and returns
to the depot. Deliveries are loaded at the depot; pickups (returns) ride back to it, so the load
after each stop is the deliveries still to come plus the pickups made.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from dispatch.vrp import JobKind

WarningReason = Literal["time_window", "shift", "capacity"]


@dataclass(frozen=True)
class TimedStop:
    """What timing needs to know of a stop."""

    key: str
    location: int
    kind: JobKind
    window_start: int
    window_end: int
    service_seconds: int


@dataclass(frozen=True)
class RouteWarning:
    """A rule the route breaks: `key` names the stop (None: the route as a whole)."""

    reason: WarningReason
    key: str | None
    #: for time_window: seconds late; shift: seconds past the shift's end; capacity: the load
    amount: int


@dataclass(frozen=True)
class RouteTiming:
    etas: tuple[int, ...]
    start: int
    end: int
    travel_seconds: int
    distance_meters: int
    max_load: int
    warnings: tuple[RouteWarning, ...]


def route_time(
    *,
    stops: Sequence[TimedStop],
    start_location: int,
    end_location: int,
    durations: np.ndarray,
    distances: np.ndarray,
    shift_start: int,
    shift_end: int,
    capacity: int,
) -> RouteTiming:
    """Times `stops` in their order and names every window, shift or capacity they break.

    A stop is late when its arrival is after its window's end; the shift is broken when the
    driver is back at the depot after the shift's end; capacity when the load leaving the depot
    or after any stop is above `capacity`. An empty route starts and ends at the shift's start.
    """
    if not stops:
        return RouteTiming((), shift_start, shift_start, 0, 0, 0, ())
    path = [start_location, *(stop.location for stop in stops), end_location]
    legs = [int(durations[a, b]) for a, b in itertools.pairwise(path)]
    metres = [int(distances[a, b]) for a, b in itertools.pairwise(path)]

    start = max(shift_start, stops[0].window_start - legs[0])
    warnings: list[RouteWarning] = []
    etas: list[int] = []
    clock = start
    for index, stop in enumerate(stops):
        arrival = max(clock + legs[index], stop.window_start)
        etas.append(arrival)
        if arrival > stop.window_end:
            warnings.append(RouteWarning("time_window", stop.key, arrival - stop.window_end))
        clock = arrival + stop.service_seconds
    end = clock + legs[-1]
    if end > shift_end:
        warnings.append(RouteWarning("shift", None, end - shift_end))

    load = sum(1 for stop in stops if stop.kind == "delivery")
    max_load = load
    for stop in stops:
        load += -1 if stop.kind == "delivery" else 1
        max_load = max(max_load, load)
    if max_load > capacity:
        warnings.append(RouteWarning("capacity", None, max_load))
    return RouteTiming(
        etas=tuple(etas),
        start=start,
        end=end,
        travel_seconds=sum(legs),
        distance_meters=sum(metres),
        max_load=max_load,
        warnings=tuple(warnings),
    )
