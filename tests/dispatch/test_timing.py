"""Re-timing a route from its own figures (dispatch/timing.py): ETAs, waiting, totals and the
rules a route breaks."""

import numpy as np

from dispatch.timing import RouteWarning, TimedStop, route_time

#: depot 0, stops 1 and 2: 100 s apart along a line
DURATIONS = np.array([[0, 100, 200], [100, 0, 100], [200, 100, 0]])


def stop(key, location, window, *, kind="delivery", service=60):
    return TimedStop(key, location, kind, window[0], window[1], service)


def timed(stops, *, shift=(0, 1000), capacity=5):
    return route_time(
        stops=stops,
        start_location=0,
        end_location=0,
        durations=DURATIONS,
        distances=DURATIONS * 7,
        shift_start=shift[0],
        shift_end=shift[1],
        capacity=capacity,
    )


def test_the_driver_leaves_late_enough_to_arrive_as_the_first_window_opens():
    route = timed([stop("a", 1, (500, 600)), stop("b", 2, (0, 900))])

    assert route.start == 400
    assert route.etas == (500, 660)
    assert route.end == 660 + 60 + 200
    assert (route.travel_seconds, route.distance_meters) == (400, 2800)
    assert route.warnings == ()


def test_an_early_arrival_waits_for_the_window():
    route = timed([stop("a", 1, (0, 900)), stop("b", 2, (600, 900))])

    assert route.etas == (100, 600)  # at b 260 s early: the ETA is the window's opening


def test_late_stops_a_long_shift_and_an_overload_are_named():
    route = timed([stop("a", 1, (0, 50)), stop("b", 2, (0, 900))], shift=(0, 300), capacity=1)

    assert route.warnings == (
        RouteWarning("time_window", "a", 50),
        RouteWarning("shift", None, 260 + 60 + 200 - 300),
        RouteWarning("capacity", None, 2),
    )


def test_pickups_ride_back_to_the_depot():
    route = timed(
        [
            stop("d", 1, (0, 900)),
            stop("p", 2, (0, 900), kind="pickup"),
            stop("q", 1, (0, 900), kind="pickup"),
        ],
        capacity=2,
    )

    assert route.max_load == 2  # one delivery out, then two pickups back
    assert route.warnings == ()
    assert timed([stop("p", 1, (0, 900), kind="pickup")] * 3, capacity=2).max_load == 3


def test_an_empty_route_is_still():
    route = timed([], shift=(100, 200))

    assert (route.start, route.end, route.etas, route.warnings) == (100, 100, (), ())
