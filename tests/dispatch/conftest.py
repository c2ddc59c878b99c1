"""Dispatch tests: a day in Berlin Mitte, a depot, drivers and orders (contract "Dispatch")."""

import math
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from dispatch import tasks
from dispatch.models import Plan
from tests import builders
from tests.webhooks.conftest import celery_worker, test_broker  # noqa: F401 - fixtures

BERLIN_TZ = ZoneInfo("Europe/Berlin")
#: Wednesday 8 January 2031, a plain winter day (+01:00)
DAY = date(2031, 1, 8)
DEPOT = (52.5219, 13.4132)  # Alexanderplatz


def at(hour: int, minute: int = 0, day: date = DAY) -> datetime:
    """A wall time of `day` in Berlin."""
    return datetime.combine(day, time(hour, minute), tzinfo=BERLIN_TZ)


@pytest.fixture(autouse=True)
def quick_solver(settings):
    settings.DISPATCH_SOLVER_TIME_LIMIT_SECONDS = 1.0


@pytest.fixture
def mitte(organization):
    return builders.zone(
        organization,
        "Mitte",
        depot={"address": "Alexanderplatz 1", "lat": DEPOT[0], "lng": DEPOT[1]},
    )


@pytest.fixture
def client(organization, test_broker):  # noqa: F811 - the fixture imported above
    return builders.manager_client(organization)


def plans_url(organization) -> str:
    return f"/api/manage/organizations/{organization.id}/dispatch/plans"


def order(organization, zone, *, window=(None, None), near=DEPOT, **fields):
    """A pending order of `zone` dropped off `north_m`/`east_m` from `near`."""
    north, east = fields.pop("north_m", 500), fields.pop("east_m", 500)
    lat, lng = builders.offset(*near, north_m=north, east_m=east)
    fields = {"dropoff_lat": lat, "dropoff_lng": lng, "dropoff_address": "Somewhere", **fields}
    return builders.order_row(organization, zone=zone, window=window, **fields)


def solved(client, organization, body: dict) -> dict:
    """POSTs a plan, solves it as the worker would, and answers the plan read back."""
    response = client.post(plans_url(organization), body, format="json")
    assert response.status_code == 202, response.content
    tasks.solve_plan(response.json()["id"])
    read = client.get(f"{plans_url(organization)}/{response.json()['id']}")
    assert read.status_code == 200
    return read.json()


def parse(moment: str) -> datetime:
    return datetime.fromisoformat(moment.replace("Z", "+00:00")).astimezone(UTC)


def travel_seconds(a, b, *, speed_kmh=25.0, detour=1.3) -> float:
    """Straight-line travel between two (lat, lng), computed here on its own (not our matrix)."""
    lat1, lng1, lat2, lng2 = map(math.radians, (*a, *b))
    h = (
        math.sin((lat2 - lat1) / 2) ** 2
        + math.cos(lat1) * math.cos(lat2) * math.sin((lng2 - lng1) / 2) ** 2
    )
    metres = 2 * 6_371_000 * math.asin(math.sqrt(h)) * detour
    return metres / (speed_kmh / 3.6)


def assert_route_keeps_the_rules(route: dict, *, capacity: int, shift: tuple, depot=DEPOT):
    """Checks a route of a plan from the plan alone: sequence from 1, ETAs never before the
    window opens nor after it closes, reachable one after the other, the load within capacity
    (deliveries on board from the depot, pickups added), the shift kept."""
    stops = route["stops"]
    assert [stop["sequence"] for stop in stops] == list(range(1, len(stops) + 1))
    start, end = parse(route["startAt"]), parse(route["endAt"])
    assert start >= shift[0]
    assert end <= shift[1]
    here, clock = depot, start
    for stop in stops:
        eta = parse(stop["eta"])
        assert parse(stop["windowStart"]) <= eta <= parse(stop["windowEnd"]), stop
        reach = clock + timedelta(seconds=travel_seconds(here, (stop["lat"], stop["lng"])) - 2)
        assert eta >= reach, stop
        clock = eta + timedelta(seconds=stop["serviceSeconds"])
        here = (stop["lat"], stop["lng"])
    assert end >= clock + timedelta(seconds=travel_seconds(here, depot) - 2)
    load = sum(1 for stop in stops if stop["kind"] == "delivery")
    peak = load
    for stop in stops:
        load += -1 if stop["kind"] == "delivery" else 1
        peak = max(peak, load)
    assert peak <= capacity


def plan_of(plan_id) -> Plan:
    return Plan.objects.get(pk=plan_id)
