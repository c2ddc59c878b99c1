"""Public slot availability: bulk and single-date (contract "Slots and windows",
capacity rules 1-4; contract "Slots and windows")."""

import datetime as dt
from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from integrations.models import Order
from slots.services import templates as template_services
from tests import builders
from tests.conftest import assert_error
from zones import services as zone_services

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("traveller")]

BULK = "/api/public/delivery-slots/availability/bulk"
SINGLE = "/api/public/delivery-slots/availability"


@pytest.fixture
def client(organization):
    return builders.standard_client(organization)


def bulk(client, **params):
    return client.get(BULK, params)


def test_bulk_lists_every_date_inclusive_with_slots_ascending_by_start(client, zone):
    noon = builders.slot_template(zone, day_of_week=0, start="12:00")
    morning = builders.slot_template(zone, day_of_week=0, start="08:00")
    monday = builders.slot_template(zone, day_of_week=1, start="08:00")

    response = bulk(client, zoneId=zone.id, startDate="2030-01-05", endDate="2030-01-07")

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["polygonId"] == str(zone.id)
    assert body["polygonName"] == "Mitte"
    assert [day["date"] for day in body["dates"]] == ["2030-01-05", "2030-01-06", "2030-01-07"]
    assert body["dates"][0]["slots"] == []  # Saturday: no templates, an empty array
    assert [slot["templateId"] for slot in body["dates"][1]["slots"]] == [
        str(morning.id),
        str(noon.id),
    ]
    assert [slot["templateId"] for slot in body["dates"][2]["slots"]] == [str(monday.id)]


def test_entry_carries_every_field_of_the_contract(client, zone):
    template = builders.slot_template(zone, day_of_week=0, start="08:00", duration=240, cutoff=120)

    body = bulk(client, zoneId=zone.id, startDate="2030-01-06", endDate="2030-01-07").json()

    assert body["dates"][0]["slots"] == [
        {
            "templateId": str(template.id),
            "label": "Sun 08:00-12:00",
            "date": "2030-01-06",
            "dayOfWeek": 0,
            "startTime": "08:00",
            "endTime": "12:00",
            "durationMinutes": 240,
            "deliveryWindowStart": "2030-01-06T08:00:00+01:00",
            "deliveryWindowEnd": "2030-01-06T12:00:00+01:00",
            "cutoffAt": "2030-01-06T05:00:00Z",
            "capacity": 10,
            "booked": 0,
            "available": 10,
            "bookable": True,
            "unbookableReason": None,
            "vehicleCapacity": [{"vehicleType": "van", "count": 1, "maxOrdersPerVehicle": 10}],
        }
    ]


def test_capacity_is_the_sum_of_count_times_max_orders_per_vehicle(client, zone):
    builders.slot_template(
        zone,
        vehicle_capacity=[
            {"vehicleType": "van", "count": 2, "maxOrdersPerVehicle": 10},
            {"vehicleType": "bike", "count": 3, "maxOrdersPerVehicle": 4},
        ],
    )
    body = bulk(client, zoneId=zone.id, startDate="2030-01-06", endDate="2030-01-07").json()
    slot = body["dates"][0]["slots"][0]
    assert (slot["capacity"], slot["booked"], slot["available"]) == (32, 0, 32)


def test_booked_counts_active_orders_and_not_cancelled_or_failed_ones(organization, client, zone):
    template = builders.slot_template(zone, capacity=10)
    erp = builders.erp_client(organization)
    for n in range(5):
        assert builders.book(erp, template, builders.SUNDAY, ref=f"SO-{n}").status_code == 201
    orders = {order.external_ref: order for order in Order.objects.all()}
    builders.order_cancel(orders["SO-0"])
    builders.order_fail(orders["SO-1"])
    builders.order_deliver(orders["SO-2"])  # delivered stays counted: it used the slot

    slot = bulk(client, zoneId=zone.id, startDate="2030-01-06", endDate="2030-01-07").json()[
        "dates"
    ][0]["slots"][0]

    assert (slot["capacity"], slot["booked"], slot["available"]) == (10, 3, 7)


def test_a_full_slot_is_not_bookable(organization, client, zone):
    template = builders.slot_template(zone, capacity=2)
    erp = builders.erp_client(organization)
    assert builders.book(erp, template, builders.SUNDAY, ref="SO-1").status_code == 201
    assert builders.book(erp, template, builders.SUNDAY, ref="SO-2").status_code == 201

    slot = bulk(client, zoneId=zone.id, startDate="2030-01-06", endDate="2030-01-07").json()[
        "dates"
    ][0]["slots"][0]

    assert (slot["booked"], slot["available"], slot["bookable"]) == (2, 0, False)


def test_slots_of_a_disabled_zone_are_shown_but_not_bookable(client, zone):
    builders.slot_template(zone)
    zone_services.zone_update(zone=zone, enabled=False)

    slot = bulk(client, zoneId=zone.id, startDate="2030-01-06", endDate="2030-01-07").json()[
        "dates"
    ][0]["slots"][0]

    assert (slot["available"], slot["bookable"]) == (10, False)


def test_bookable_turns_false_at_the_cutoff_instant_exactly(client, zone):
    builders.slot_template(zone, start="08:00", cutoff=120)
    cutoff = datetime(2030, 1, 6, 5, 0, tzinfo=UTC)  # 08:00+01:00 minus 2 hours

    def bookable_at(moment):
        with time_machine.travel(moment, tick=False):
            body = bulk(client, zoneId=zone.id, startDate="2030-01-06", endDate="2030-01-07")
            return body.json()["dates"][0]["slots"][0]["bookable"]

    assert bookable_at(cutoff - timedelta(microseconds=1)) is True
    assert bookable_at(cutoff) is False
    assert bookable_at(cutoff + timedelta(seconds=1)) is False


def test_windows_follow_daylight_saving_time(client, zone):
    # Europe/Berlin moves to summer time at 02:00 on Sunday 31 March 2030.
    builders.slot_template(zone, day_of_week=0, start="00:00", duration=240, cutoff=60)
    builders.slot_template(zone, day_of_week=0, start="08:00", duration=240, cutoff=120)

    body = bulk(client, zoneId=zone.id, startDate="2030-03-24", endDate="2030-03-31").json()
    winter, summer = body["dates"][0]["slots"], body["dates"][-1]["slots"]

    assert [(s["deliveryWindowStart"], s["deliveryWindowEnd"], s["cutoffAt"]) for s in winter] == [
        ("2030-03-24T00:00:00+01:00", "2030-03-24T04:00:00+01:00", "2030-03-23T22:00:00Z"),
        ("2030-03-24T08:00:00+01:00", "2030-03-24T12:00:00+01:00", "2030-03-24T05:00:00Z"),
    ]
    assert [(s["deliveryWindowStart"], s["deliveryWindowEnd"], s["cutoffAt"]) for s in summer] == [
        # The night slot spans the change: it starts in winter time and ends in summer time.
        ("2030-03-31T00:00:00+01:00", "2030-03-31T04:00:00+02:00", "2030-03-30T22:00:00Z"),
        ("2030-03-31T08:00:00+02:00", "2030-03-31T12:00:00+02:00", "2030-03-31T04:00:00Z"),
    ]
    assert [s["label"] for s in summer] == ["Sun 00:00-04:00", "Sun 08:00-12:00"]


def test_a_slot_in_the_spring_gap_is_offered_and_booked_an_hour_later_whole(
    client, zone, organization
):
    # 02:00-03:00 does not exist on 31 March 2030 in Berlin: the slot is 03:00-04:00 that day.
    template = builders.slot_template(zone, day_of_week=0, start="02:00", duration=60, cutoff=60)

    slot = bulk(client, zoneId=zone.id, startDate="2030-03-31", endDate="2030-04-01").json()[
        "dates"
    ][0]["slots"][0]
    single = client.get(SINGLE, {"zoneId": zone.id, "date": "2030-03-31"}).json()

    moved = ("2030-03-31T03:00:00+02:00", "2030-03-31T04:00:00+02:00", "2030-03-31T00:00:00Z")
    assert (slot["deliveryWindowStart"], slot["deliveryWindowEnd"], slot["cutoffAt"]) == moved
    assert (slot["label"], slot["durationMinutes"]) == ("Sun 02:00-03:00", 60)
    assert slot["bookable"] is True
    assert [
        (s["deliveryWindowStart"], s["deliveryWindowEnd"], s["cutoffAt"]) for s in single["slots"]
    ] == [moved]

    booked = builders.book(builders.erp_client(organization), template, dt.date(2030, 3, 31))
    assert booked.status_code == 201, booked.content
    order = Order.objects.get(external_ref="SO-1001")
    assert (order.delivery_window_start.isoformat(), order.delivery_window_end.isoformat()) == (
        "2030-03-31T01:00:00+00:00",
        "2030-03-31T02:00:00+00:00",
    )


def test_a_slot_ending_at_midnight_ends_at_00_00_of_the_next_day(client, zone):
    builders.slot_template(zone, day_of_week=0, start="20:00", duration=240)
    slot = bulk(client, zoneId=zone.id, startDate="2030-01-06", endDate="2030-01-07").json()[
        "dates"
    ][0]["slots"][0]
    assert (slot["label"], slot["endTime"], slot["deliveryWindowEnd"]) == (
        "Sun 20:00-00:00",
        "00:00",
        "2030-01-07T00:00:00+01:00",
    )


def test_deleted_templates_are_no_longer_offered(client, zone):
    template = builders.slot_template(zone)
    template_services.slot_template_delete(template=template)
    body = bulk(client, zoneId=zone.id, startDate="2030-01-06", endDate="2030-01-07").json()
    assert body["dates"][0]["slots"] == []


# ----- choosing the zone -----


def test_lat_lng_picks_the_smallest_enabled_slot_zone_containing_the_point(organization, client):
    mitte = builders.slot_zone(organization, "Mitte")
    alex = builders.slot_zone(organization, "Alex", geodata=builders.ALEX_GEODATA)
    builders.slot_zone(
        organization,
        "Alex dispatch",
        geodata={
            "type": "Polygon",
            "coordinates": [[[13.41, 52.52], [13.415, 52.52], [13.415, 52.525], [13.41, 52.525]]],
        },
        purpose="dispatch",
    )

    def polygon_at(lat, lng):
        response = bulk(client, lat=lat, lng=lng, startDate="2030-01-06", endDate="2030-01-07")
        assert response.status_code == 200, response.content
        return response.json()["polygonId"]

    assert polygon_at(*builders.ALEX) == str(alex.id)
    assert polygon_at(*builders.MITTE) == str(mitte.id)
    zone_services.zone_update(zone=alex, enabled=False)
    assert polygon_at(*builders.ALEX) == str(mitte.id)


def test_zone_id_wins_over_lat_lng(organization, client, zone):
    alex = builders.slot_zone(organization, "Alex", geodata=builders.ALEX_GEODATA)
    response = bulk(
        client,
        zoneId=zone.id,
        lat=builders.ALEX[0],
        lng=builders.ALEX[1],
        startDate="2030-01-06",
        endDate="2030-01-07",
    )
    assert response.json()["polygonId"] == str(zone.id) != str(alex.id)


def test_a_zone_of_purpose_both_serves_slots(organization, client):
    both = builders.slot_zone(organization, "Both", purpose="both")
    builders.slot_template(both)
    body = bulk(client, zoneId=both.id, startDate="2030-01-06", endDate="2030-01-07").json()
    assert len(body["dates"][0]["slots"]) == 1


def test_any_platform_key_may_read_availability(organization, zone):
    for platform in ("partner_a", "erp", "standard"):
        client = builders.key_client(builders.api_key(organization, platform))
        response = bulk(client, zoneId=zone.id, startDate="2030-01-06", endDate="2030-01-07")
        assert response.status_code == 200, (platform, response.content)


def test_availability_needs_an_api_key(api_client, zone):
    response = api_client.get(
        BULK, {"zoneId": zone.id, "startDate": "2030-01-06", "endDate": "2030-01-07"}
    )
    assert_error(response, 401, "Missing X-API-Key header")


# ----- validation, in its order -----


@pytest.mark.parametrize(
    ("params", "messages"),
    [
        (
            {"startDate": "2030-01-06", "endDate": "2030-01-07"},
            ["Either (lat, lng) or zoneId must be provided"],
        ),
        (
            {"lat": "52.5", "startDate": "2030-01-06", "endDate": "2030-01-07"},
            ["Either (lat, lng) or zoneId must be provided"],
        ),
        (
            {"lng": "13.4", "startDate": "2030-01-06", "endDate": "2030-01-07"},
            ["Either (lat, lng) or zoneId must be provided"],
        ),
        (
            {"zoneId": "not-a-uuid", "startDate": "2030-01-06", "endDate": "2030-01-07"},
            ["zoneId must be a UUID"],
        ),
        (
            {"lat": "91", "lng": "13.4", "startDate": "2030-01-06", "endDate": "2030-01-07"},
            ["lat must be a number between -90 and 90"],
        ),
        (
            {"lat": "north", "lng": "181", "startDate": "2030-01-06", "endDate": "2030-01-07"},
            [
                "lat must be a number between -90 and 90",
                "lng must be a number between -180 and 180",
            ],
        ),
        (
            {"lat": "nan", "lng": "13.4", "startDate": "2030-01-06", "endDate": "2030-01-07"},
            ["lat must be a number between -90 and 90"],
        ),
        # ASCII decimals only: what float() would also read is refused
        (
            {"lat": "5_2.5", "lng": "1e1", "startDate": "2030-01-06", "endDate": "2030-01-07"},
            [
                "lat must be a number between -90 and 90",
                "lng must be a number between -180 and 180",
            ],
        ),
        (
            {"lat": " 52.5", "lng": "+13.4", "startDate": "2030-01-06", "endDate": "2030-01-07"},
            [
                "lat must be a number between -90 and 90",
                "lng must be a number between -180 and 180",
            ],
        ),
        (
            {"zoneId": "ZONE", "endDate": "2030-01-07"},
            ["startDate is required (format: YYYY-MM-DD)"],
        ),
        (
            {"zoneId": "ZONE", "startDate": "2030-01-06"},
            ["endDate is required (format: YYYY-MM-DD)"],
        ),
        (
            {"zoneId": "ZONE", "startDate": "2030-02-30", "endDate": "2030-03-01"},
            ["startDate must be a valid date (format: YYYY-MM-DD)"],
        ),
        (
            {"zoneId": "ZONE", "startDate": "6/1/2030", "endDate": "2030-1-7"},
            [
                "startDate must be a valid date (format: YYYY-MM-DD)",
                "endDate must be a valid date (format: YYYY-MM-DD)",
            ],
        ),
        # Every format problem is listed at once, zone first, then the dates ...
        (
            {"zoneId": "x", "startDate": "2030-01-07", "endDate": "bad"},
            ["zoneId must be a UUID", "endDate must be a valid date (format: YYYY-MM-DD)"],
        ),
        # ... and only then their order and the range.
        (
            {"zoneId": "ZONE", "startDate": "2030-01-06", "endDate": "2030-01-06"},
            ["startDate must be before endDate"],
        ),
        (
            {"zoneId": "ZONE", "startDate": "2030-01-07", "endDate": "2030-01-06"},
            ["startDate must be before endDate"],
        ),
        (
            {"zoneId": "ZONE", "startDate": "2030-01-01", "endDate": "2030-02-02"},
            ["Date range must not exceed 31 days"],
        ),
        (
            {"zoneId": "x", "startDate": "2030-01-07", "endDate": "2030-01-06"},
            ["zoneId must be a UUID"],
        ),
    ],
)
def test_bulk_query_errors(client, zone, params, messages):
    params = {key: str(zone.id) if value == "ZONE" else value for key, value in params.items()}
    assert_error(bulk(client, **params), 400, messages)


def test_a_range_of_31_days_is_accepted(client, zone):
    response = bulk(client, zoneId=zone.id, startDate="2030-01-01", endDate="2030-02-01")
    assert response.status_code == 200
    assert len(response.json()["dates"]) == 32  # both ends included


def test_unknown_zone_id_is_404(client):
    response = bulk(
        client,
        zoneId="00000000-0000-4000-8000-000000000000",
        startDate="2030-01-06",
        endDate="2030-01-07",
    )
    assert_error(response, 404, "Zone not found")


def test_another_organizations_zone_is_404_like_an_unknown_one(client):
    foreign = builders.slot_zone(builders.organization("Elsewhere"))
    response = bulk(client, zoneId=foreign.id, startDate="2030-01-06", endDate="2030-01-07")
    assert_error(response, 404, "Zone not found")


def test_a_dispatch_only_zone_is_not_a_slot_zone(organization, client):
    dispatch = builders.slot_zone(organization, "Depot", purpose="dispatch")
    response = bulk(client, zoneId=dispatch.id, startDate="2030-01-06", endDate="2030-01-07")
    assert_error(response, 404, "Zone not found")


def test_coordinates_outside_every_slot_zone_are_404(client, zone):
    response = bulk(
        client,
        lat=builders.HAMBURG[0],
        lng=builders.HAMBURG[1],
        startDate="2030-01-06",
        endDate="2030-01-07",
    )
    assert_error(response, 404, "No active zones found for the given coordinates")


# ----- single date -----


def test_single_date_form_by_lat_lng(client, zone):
    template = builders.slot_template(zone)
    response = client.get(
        SINGLE, {"lat": builders.MITTE[0], "lng": builders.MITTE[1], "date": "2030-01-06"}
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert set(body) == {"polygonId", "polygonName", "date", "slots"}
    assert (body["polygonId"], body["polygonName"], body["date"]) == (
        str(zone.id),
        "Mitte",
        "2030-01-06",
    )
    assert [slot["templateId"] for slot in body["slots"]] == [str(template.id)]
    assert body["slots"][0]["label"] == "Sun 08:00-12:00"


def test_single_date_form_by_zone_id_and_a_day_without_slots(client, zone):
    builders.slot_template(zone)
    body = client.get(SINGLE, {"zoneId": zone.id, "date": "2030-01-07"}).json()
    assert body["slots"] == []


@pytest.mark.parametrize(
    ("params", "messages"),
    [
        ({"zoneId": "ZONE"}, ["date query parameter is required (format: YYYY-MM-DD)"]),
        (
            {"zoneId": "ZONE", "date": "2030-13-01"},
            ["date must be a valid date (format: YYYY-MM-DD)"],
        ),
        ({"date": "2030-01-06"}, ["Either (lat, lng) or zoneId must be provided"]),
        ({"zoneId": "nope", "date": "2030-01-06"}, ["zoneId must be a UUID"]),
    ],
)
def test_single_date_query_errors(client, zone, params, messages):
    params = {key: str(zone.id) if value == "ZONE" else value for key, value in params.items()}
    assert_error(client.get(SINGLE, params), 400, messages)


def test_paths_answer_with_a_trailing_slash_too(client, zone):
    response = client.get(
        f"{BULK}/", {"zoneId": zone.id, "startDate": "2030-01-06", "endDate": "2030-01-07"}
    )
    assert response.status_code == 200
    response = client.get(f"{SINGLE}/", {"zoneId": zone.id, "date": "2030-01-06"})
    assert response.status_code == 200
