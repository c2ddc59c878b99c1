"""Location batches (docs/contract.md "Couriers"): the newest point is the driver's position,
24 hours of trail are kept, and the remaining stops are re-timed from there; a move of 10
minutes or more is `order.eta_updated`, only for keys that name it."""

import datetime as dt

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.exceptions import ValidationError

from couriers.models import DriverPosition, LocationPoint
from couriers.serializers import LocationsInput, location_drafts
from couriers.tasks import prune_trails
from delivery.serializers import valid_serializer
from dispatch.matrix import haversine_matrix
from dispatch.models import DriverZone, PlanStop
from slots.models import SlotPolicy
from tests import builders
from tests.conftest import assert_error
from tests.couriers.conftest import NOW
from tests.couriers.test_events import walk
from webhooks.models import Delivery

pytestmark = pytest.mark.django_db

LOCATIONS = "/api/courier/locations"
#: 5 km north of the stops: 5000 m x 1.3 (detour) at 25 km/h, about 936 seconds
FAR = builders.offset(*builders.ALEX, north_m=5000)
LEG = dt.timedelta(
    seconds=int(
        haversine_matrix([FAR, builders.ALEX], detour_factor=1.3, speed_kmh=25).durations[0, 1]
    )
)


def point(lat_lng=FAR, at=NOW, **fields) -> dict:
    return {"lat": lat_lng[0], "lng": lat_lng[1], "at": at.isoformat(), **fields}


def etas(route_orders) -> list[dt.datetime]:
    return [PlanStop.objects.get(order=order).eta for order in route_orders]


def test_a_batch_keeps_the_trail_and_the_newest_position(courier, driver, route_orders):
    earlier_at = NOW - dt.timedelta(seconds=30, microseconds=123456)
    earlier = point(builders.ALEX, earlier_at, accuracyM=12)
    newest = point(FAR, NOW, accuracyM=5, speedMps=4.5, heading=180)

    response = courier.post(LOCATIONS, {"points": [newest, earlier]}, format="json")

    assert response.status_code == 202, response.content
    assert response.json()["accepted"] == 2
    trail = LocationPoint.objects.filter(driver=driver).order_by("at")
    assert list(trail.values_list("at", "lat", "lng", "accuracy_m", "speed_mps", "heading")) == [
        (earlier_at, *builders.ALEX, 12, None, None),
        (NOW, *FAR, 5, 4.5, 180),
    ]
    position = DriverPosition.objects.get(driver=driver)
    assert (position.lat, position.lng, position.at, position.heading) == (*FAR, NOW, 180)


def test_the_remaining_stops_are_retimed_from_the_newest_point(courier, route_orders):
    assert etas(route_orders) == [NOW + dt.timedelta(minutes=15 * n) for n in (1, 2, 3)]

    courier.post(LOCATIONS, {"points": [point()]}, format="json")

    first = NOW + LEG
    assert etas(route_orders) == [
        first,
        first + dt.timedelta(seconds=240),
        first + dt.timedelta(seconds=480),
    ]


def test_delivered_stops_are_not_retimed(courier, route_orders):
    walk(courier, route_orders[0], "picked_up", "in_transit", "delivered")

    courier.post(LOCATIONS, {"points": [point()]}, format="json")

    first = NOW + LEG
    assert etas(route_orders) == [
        NOW + dt.timedelta(minutes=15),
        first,
        first + dt.timedelta(seconds=240),
    ]


def test_eta_updated_goes_only_to_keys_that_name_it(organization, courier, route_orders):
    asked = builders.api_key(
        organization,
        "partner_a",
        webhook_url="http://127.0.0.1:9/hook",
        webhook_events=["order.eta_updated", "order.delivered"],
    )
    courier.post(LOCATIONS, {"points": [point()]}, format="json")

    events = builders.events_named("order.eta_updated", organization)
    # Stop 1 moved 36 s, stop 2 by 10 min 24 s, stop 3 by 21 min 36 s.
    assert sorted(event.payload["externalRef"] for event in events) == ["SO-2", "SO-3"]
    assert (
        Delivery.objects.filter(
            event__name="order.eta_updated", api_key_id=asked.api_key.id
        ).count()
        == 2
    )


def test_a_key_with_every_event_does_not_get_eta_updated(organization, courier, route_orders):
    builders.api_key(organization, "partner_a", webhook_url="http://127.0.0.1:9/hook")

    courier.post(LOCATIONS, {"points": [point()]}, format="json")

    assert len(builders.events_named("order.eta_updated", organization)) == 2
    assert not Delivery.objects.filter(event__name="order.eta_updated").exists()


def test_an_older_batch_does_not_move_the_position_back(courier, driver, route_orders):
    courier.post(LOCATIONS, {"points": [point(FAR, NOW)]}, format="json")

    late = point(builders.ALEX, NOW - dt.timedelta(minutes=5))
    response = courier.post(LOCATIONS, {"points": [late]}, format="json")

    assert response.json() == {"accepted": 1, "etasUpdated": 0}
    assert DriverPosition.objects.get(driver=driver).at == NOW


def test_the_trail_keeps_24_hours(clock, courier, driver, route_orders):
    courier.post(LOCATIONS, {"points": [point(at=NOW - dt.timedelta(hours=23))]}, format="json")
    clock.shift(dt.timedelta(hours=2))

    courier.post(LOCATIONS, {"points": [point(at=NOW + dt.timedelta(hours=2))]}, format="json")

    assert list(LocationPoint.objects.filter(driver=driver).values_list("at", flat=True)) == [
        NOW + dt.timedelta(hours=2)
    ]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"points": []}, ["points must hold 1 to 100 points"]),
        ({"points": [point()] * 101}, ["points must hold 1 to 100 points"]),
        ({}, ["points required"]),
        (
            {"points": [point(at=NOW - dt.timedelta(hours=25))]},
            ["points[0].at must not be more than 24 hours ago"],
        ),
        (
            {"points": [point(), point(at=NOW + dt.timedelta(minutes=3))]},
            ["points[1].at must not be more than 2 minutes ahead"],
        ),
    ],
    ids=["empty", "too-many", "missing", "late", "ahead"],
)
def test_a_bad_batch_is_refused(courier, route_orders, body, message):
    assert_error(courier.post(LOCATIONS, body, format="json"), 400, message)
    assert not LocationPoint.objects.exists()


def test_a_driver_without_a_route_just_moves(organization, clock):
    courier = builders.courier_client(builders.driver(organization, "Idle Driver"))

    response = courier.post(LOCATIONS, {"points": [point()]}, format="json")

    assert response.json() == {"accepted": 1, "etasUpdated": 0}


def test_the_periodic_task_prunes_old_trails(clock, courier, driver, route_orders):
    courier.post(LOCATIONS, {"points": [point(at=NOW - dt.timedelta(hours=23))]}, format="json")
    clock.shift(dt.timedelta(hours=1, seconds=1))

    assert prune_trails() == 1
    assert not LocationPoint.objects.exists()


#: 23:30 UTC the evening before the route's day: 00:30 of that day in Berlin
BERLIN_EARLY = dt.datetime(2026, 11, 25, 23, 30, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    ("served", "policy", "etas_updated"),
    [
        (None, None, 0),
        (None, "Europe/Berlin", 3),
        ("Europe/Berlin", "UTC", 3),
        ("UTC", "Europe/Berlin", 0),
    ],
    ids=["utc-without-either", "policy-berlin", "served-berlin", "served-zone-first"],
)
def test_the_day_is_the_drivers_zone_time(
    courier, driver, organization, route_orders, served, policy, etas_updated
):
    if policy:
        SlotPolicy.objects.create(organization=organization, timezone=policy)
    if served:
        DriverZone.objects.create(
            driver=driver, zone=builders.zone_row(organization, timezone=served)
        )

    response = courier.post(LOCATIONS, {"points": [point(at=BERLIN_EARLY)]}, format="json")

    # In Berlin the point is of the route's day, whose stops it re-times; in UTC of the day before.
    assert response.json() == {"accepted": 1, "etasUpdated": etas_updated}


def test_a_batch_that_retimes_a_route_is_four_statements(courier, route_orders):
    courier.post(LOCATIONS, {"points": [point()]}, format="json")
    later = point(at=NOW + dt.timedelta(seconds=20))

    with CaptureQueriesContext(connection) as queries:
        response = courier.post(LOCATIONS, {"points": [later] * 20}, format="json")

    assert response.json() == {"accepted": 20, "etasUpdated": 3}
    statements = [q["sql"] for q in queries if not q["sql"].startswith(("SAVEPOINT", "RELEASE"))]
    # the trail, the position and the zone time; the stops ahead; their ETAs; their orders' ETAs
    # (the token comes from the key cache, which the first batch filled)
    assert len(statements) == 4, statements


#: bodies the plain reading of a batch takes: it reads them as LocationsInput does
PLAIN_BATCHES = [
    {"points": [point()]},
    {"points": [{"lat": 52, "lng": -13, "at": "2026-11-26T09:00:00.5+01:00"}]},
    {"points": [point(accuracyM=0, speedMps=100, heading=360), point(heading=None)]},
    {"points": [{"lat": -90, "lng": 180.0, "at": "2026-11-26T09:00Z", "extra": "ignored"}]},
    {"points": [point()] * 100, "other": 1},
]
#: bodies LocationsInput refuses, which the plain reading must leave to it
REFUSED_BATCHES = [
    [point()],
    {"points": None},
    {"points": point()},
    {"points": [point(), "a point"]},
    {"points": [point()] * 101},
    {"points": [{**point(), "lat": "52.5"}]},
    {"points": [{**point(), "lng": True}]},
    {"points": [{**point(), "lat": 90.5}]},
    {"points": [{**point(), "at": "2026-11-26T09:00:00"}]},
    {"points": [{**point(), "at": "2026-11-26 09:00:00Z"}]},
    {"points": [{**point(), "at": None}]},
    {"points": [{"lat": 52.5, "lng": 13.4}]},
    {"points": [point(accuracyM=-1)]},
    {"points": [point(speedMps=100.5)]},
    {"points": [point(heading="north")]},
]


@pytest.mark.parametrize("body", PLAIN_BATCHES)
def test_a_plain_batch_is_read_as_the_serializer_reads_it(body):
    drafts = location_drafts(body)

    assert drafts == valid_serializer(LocationsInput, body).drafts()
    assert all(isinstance(draft.lat, float) and isinstance(draft.lng, float) for draft in drafts)


@pytest.mark.parametrize("body", REFUSED_BATCHES)
def test_a_batch_the_serializer_refuses_is_refused_with_its_messages(body):
    with pytest.raises(ValidationError) as plain:
        location_drafts(body)
    with pytest.raises(ValidationError) as serializer:
        valid_serializer(LocationsInput, body)

    assert plain.value.detail == serializer.value.detail
