"""GET /api/integrations/partner-a/delivery-windows and window booking (contract "Orders", "Slots
and windows")."""

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from integrations.models import DeliveryWindowLoad, Order
from integrations.services.orders import order_transition
from integrations.services.windows import window_book
from tests import builders
from tests.conftest import assert_error

WINDOWS = "/api/integrations/partner-a/delivery-windows"


def windows_of(client, **query):
    response = client.get(WINDOWS, query)
    assert response.status_code == 200, response.content
    return response.json()


def window_order(client, ref: str, start: str, **overrides):
    return builders.create_order(client, externalRef=ref, deliveryWindowStart=start, **overrides)


# ----- the windows -----


@pytest.mark.django_db
def test_three_standard_windows_in_the_zone_timezone(client, mitte):
    body = windows_of(client, zone="Mitte", date=builders.DELIVERY_DAY)

    assert body == {
        "zone": "Mitte",
        "date": builders.DELIVERY_DAY,
        "timezone": "Europe/Berlin",
        "windows": [
            {
                "start": f"{builders.DELIVERY_DAY}T08:00:00+01:00",
                "end": f"{builders.DELIVERY_DAY}T12:00:00+01:00",
                "available": True,
                "scheduledCount": 0,
                "capacityLimit": 20,
            },
            {
                "start": f"{builders.DELIVERY_DAY}T12:00:00+01:00",
                "end": f"{builders.DELIVERY_DAY}T16:00:00+01:00",
                "available": True,
                "scheduledCount": 0,
                "capacityLimit": 20,
            },
            {
                "start": f"{builders.DELIVERY_DAY}T16:00:00+01:00",
                "end": f"{builders.DELIVERY_DAY}T20:00:00+01:00",
                "available": True,
                "scheduledCount": 0,
                "capacityLimit": 20,
            },
        ],
    }


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("day", "offset"),
    [
        ("2026-03-26", "+01:00"),  # Thursday before the spring change: CET
        ("2026-03-29", "+02:00"),  # last Sunday of March: clocks went forward at 02:00
        ("2026-10-25", "+01:00"),  # last Sunday of October: clocks went back at 03:00
        ("2026-10-22", "+02:00"),  # Thursday before the autumn change: CEST
    ],
)
def test_window_offsets_follow_daylight_saving_time(client, mitte, day, offset):
    windows = windows_of(client, zone="Mitte", date=day)["windows"]

    assert [(w["start"], w["end"]) for w in windows] == [
        (f"{day}T08:00:00{offset}", f"{day}T12:00:00{offset}"),
        (f"{day}T12:00:00{offset}", f"{day}T16:00:00{offset}"),
        (f"{day}T16:00:00{offset}", f"{day}T20:00:00{offset}"),
    ]


@pytest.mark.django_db
def test_windows_of_a_utc_zone_and_of_a_zone_west_of_greenwich(client, organization):
    builders.zone(organization, name="Utc", timezone_name="UTC")
    builders.zone(
        organization,
        name="New York",
        timezone_name="America/New_York",
        geodata={
            "type": "Polygon",
            "coordinates": [
                [[-74.1, 40.6], [-73.9, 40.6], [-73.9, 40.8], [-74.1, 40.8], [-74.1, 40.6]]
            ],
        },
    )

    utc = windows_of(client, zone="Utc", date="2030-07-07")
    new_york = windows_of(client, zone="New York", date="2030-07-07")

    assert utc["windows"][0]["start"] == "2030-07-07T08:00:00+00:00"
    assert new_york["timezone"] == "America/New_York"
    assert new_york["windows"][2]["end"] == "2030-07-07T20:00:00-04:00"


@pytest.mark.django_db
@pytest.mark.parametrize("day", ["2030-01-11", "2030-01-12"])  # Friday, Saturday
def test_no_windows_on_friday_and_saturday(client, mitte, day):
    body = windows_of(client, zone="Mitte", date=day)

    assert body == {"zone": "Mitte", "date": day, "timezone": "Europe/Berlin", "windows": []}


@pytest.mark.django_db
def test_capacity_limit_is_the_zone_window_capacity(client, organization):
    builders.zone(organization, window_capacity=7)

    windows = windows_of(client, zone="Mitte", date=builders.DELIVERY_DAY)["windows"]

    assert {w["capacityLimit"] for w in windows} == {7}


@pytest.mark.django_db
def test_scheduled_count_counts_orders_booked_in_each_window(client, mitte):
    for n in range(3):
        assert (
            window_order(client, f"M-{n}", f"{builders.DELIVERY_DAY}T09:30:00+01:00").status_code
            == 201
        )
    assert window_order(client, "A-1", f"{builders.DELIVERY_DAY}T16:00:00+01:00").status_code == 201
    assert builders.create_order(client, externalRef="NO-WINDOW").status_code == 201

    windows = windows_of(client, zone="Mitte", date=builders.DELIVERY_DAY)["windows"]

    assert [w["scheduledCount"] for w in windows] == [3, 0, 1]


@pytest.mark.django_db
def test_cancelled_and_failed_orders_do_not_count(client, mitte, organization):
    for n in range(4):
        assert (
            window_order(client, f"M-{n}", f"{builders.DELIVERY_DAY}T09:00:00+01:00").status_code
            == 201
        )
    assert client.post("/api/integrations/partner-a/orders/M-0/cancel").status_code == 200
    failed = Order.objects.get(external_ref="M-1")
    driver = organization.drivers.create(name="Dora")
    failed = order_transition(order=failed, to_status="assigned", driver=driver)
    order_transition(
        order=failed, to_status="failed", reason="Nobody home", failure_reason="recipient_absent"
    )

    windows = windows_of(client, zone="Mitte", date=builders.DELIVERY_DAY)["windows"]

    assert windows[0]["scheduledCount"] == 2


@pytest.mark.django_db
def test_a_full_window_is_not_available_and_refuses_new_orders(client, organization):
    builders.zone(organization, window_capacity=2)
    start = f"{builders.DELIVERY_DAY}T12:00:00+01:00"
    assert window_order(client, "W-1", start).status_code == 201
    assert window_order(client, "W-2", start).status_code == 201

    windows = windows_of(client, zone="Mitte", date=builders.DELIVERY_DAY)["windows"]
    refused = window_order(client, "W-3", f"{builders.DELIVERY_DAY}T15:59:00+01:00")

    assert windows[1] == {
        "start": start,
        "end": f"{builders.DELIVERY_DAY}T16:00:00+01:00",
        "available": False,
        "scheduledCount": 2,
        "capacityLimit": 2,
    }
    assert windows[0]["available"] is True
    assert_error(refused, 400, "Delivery window is full")
    assert not Order.objects.filter(external_ref="W-3").exists()


@pytest.mark.django_db
def test_a_duplicate_external_ref_is_409_and_keeps_no_place(client, organization):
    builders.zone(organization, window_capacity=2)
    start = f"{builders.DELIVERY_DAY}T12:00:00+01:00"
    assert window_order(client, "W-1", start).status_code == 201

    duplicate = window_order(client, "W-1", start)

    assert_error(duplicate, 409, "Order with externalRef W-1 already exists")
    assert DeliveryWindowLoad.objects.get().booked == 1
    assert window_order(client, "W-2", start).status_code == 201  # the second place is free


@pytest.mark.django_db
def test_a_duplicate_external_ref_on_a_full_window_is_409_not_400(client, organization):
    builders.zone(organization, window_capacity=1)
    start = f"{builders.DELIVERY_DAY}T12:00:00+01:00"
    assert window_order(client, "W-1", start).status_code == 201

    assert_error(
        window_order(client, "W-1", start), 409, "Order with externalRef W-1 already exists"
    )
    assert_error(window_order(client, "W-2", start), 400, "Delivery window is full")


@pytest.mark.django_db
def test_a_cancelled_order_frees_its_place_at_once(client, organization):
    builders.zone(organization, window_capacity=1)
    start = f"{builders.DELIVERY_DAY}T08:00:00+01:00"
    assert window_order(client, "W-1", start).status_code == 201
    assert_error(window_order(client, "W-2", start), 400, "Delivery window is full")

    assert client.post("/api/integrations/partner-a/orders/W-1/cancel").status_code == 200

    assert window_order(client, "W-2", start).status_code == 201


@pytest.mark.django_db
def test_lowering_capacity_below_the_booked_count_keeps_existing_orders(client, organization):
    zone = builders.zone(organization, window_capacity=3)
    start = f"{builders.DELIVERY_DAY}T08:00:00+01:00"
    for n in range(3):
        assert window_order(client, f"W-{n}", start).status_code == 201
    zone.window_capacity = 1
    zone.save(update_fields=["window_capacity"])

    window = windows_of(client, zone="Mitte", date=builders.DELIVERY_DAY)["windows"][0]

    assert (window["scheduledCount"], window["capacityLimit"], window["available"]) == (3, 1, False)
    assert Order.objects.filter(status="pending").count() == 3
    assert_error(window_order(client, "W-4", start), 400, "Delivery window is full")


# ----- booking: which window -----


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("start", "booked_start"),
    [
        (f"{builders.DELIVERY_DAY}T08:00:00+01:00", f"{builders.DELIVERY_DAY}T08:00:00+01:00"),
        (f"{builders.DELIVERY_DAY}T11:59:59+01:00", f"{builders.DELIVERY_DAY}T08:00:00+01:00"),
        (f"{builders.DELIVERY_DAY}T12:00:00+01:00", f"{builders.DELIVERY_DAY}T12:00:00+01:00"),
        (
            f"{builders.DELIVERY_DAY}T18:30:00Z",
            f"{builders.DELIVERY_DAY}T16:00:00+01:00",
        ),  # 19:30 in Berlin
        (
            f"{builders.DELIVERY_DAY}T10:00:00",
            f"{builders.DELIVERY_DAY}T08:00:00+01:00",
        ),  # naive: zone time
    ],
)
def test_the_window_containing_the_start_is_booked(client, mitte, start, booked_start):
    response = window_order(client, "W-1", start)

    assert response.status_code == 201, response.content
    load = Order.objects.get(external_ref="W-1").window_load
    assert load.window_start.isoformat() == _utc(booked_start)
    assert load.booked == 1


def _utc(text: str) -> str:
    return datetime.fromisoformat(text).astimezone(UTC).isoformat()


@pytest.mark.django_db
def test_without_an_end_the_order_gets_the_window_end(client, mitte):
    body = window_order(client, "W-1", f"{builders.DELIVERY_DAY}T13:00:00+01:00").json()

    assert body["deliveryWindowStart"] == f"{builders.DELIVERY_DAY}T13:00:00+01:00"
    assert body["deliveryWindowEnd"] == f"{builders.DELIVERY_DAY}T16:00:00+01:00"


@pytest.mark.django_db
@pytest.mark.parametrize(
    "start",
    [
        f"{builders.DELIVERY_DAY}T07:59:00+01:00",  # before the first window
        f"{builders.DELIVERY_DAY}T20:00:00+01:00",  # the last window ends at 20:00
        f"{builders.DELIVERY_DAY}T23:30:00+01:00",  # night
        "2030-01-11T10:00:00+01:00",  # Friday
        "2030-01-12T10:00:00+01:00",  # Saturday
    ],
)
def test_a_start_outside_every_window_is_400(client, mitte, start):
    response = window_order(client, "W-1", start)

    assert_error(response, 400, f"No delivery window at {start}")
    assert not Order.objects.exists()


@pytest.mark.django_db
def test_window_booking_is_per_zone(client, organization, mitte):
    builders.zone(
        organization, name="Alexanderplatz", geodata=builders.ALEX_GEODATA, window_capacity=1
    )
    start = f"{builders.DELIVERY_DAY}T08:00:00+01:00"
    assert (
        window_order(
            client, "A-1", start, dropoffLat=builders.ALEX[0], dropoffLng=builders.ALEX[1]
        ).status_code
        == 201
    )

    # Alexanderplatz is full; Mitte's window of the same hour is not.
    assert_error(
        window_order(
            client, "A-2", start, dropoffLat=builders.ALEX[0], dropoffLng=builders.ALEX[1]
        ),
        400,
        "Delivery window is full",
    )
    assert window_order(client, "M-1", start, deliveryZone="Mitte").status_code == 201


@pytest.mark.django_db
def test_booking_a_window_is_one_statement_and_counts_on(client, mitte):
    """Creating the counter row, taking a place and reading it back: one round trip."""
    start = f"{builders.DELIVERY_DAY}T08:00:00+01:00"
    for n in range(1, 4):
        with CaptureQueriesContext(connection) as queries:
            assert window_order(client, f"W-{n}", start).status_code == 201

        window_queries = [q for q in queries.captured_queries if "deliverywindowload" in q["sql"]]
        assert len(window_queries) == 1
        load = DeliveryWindowLoad.objects.get(zone=mitte)
        assert (load.booked, load.capacity) == (n, 20)
        assert Order.objects.get(external_ref=f"W-{n}").window_load_id == load.id


@pytest.mark.django_db
def test_the_booked_window_is_its_row_as_read(mitte, django_assert_num_queries):
    """window_book answers the counter row from its statement's RETURNING, with its zone, as if
    the ORM had read it: every field as stored, and no query to follow."""
    start = datetime(2030, 1, 7, 7, 0, tzinfo=UTC)
    end = datetime(2030, 1, 7, 10, 0, tzinfo=UTC)
    with transaction.atomic():
        window_book(zone=mitte, start=start, end=end)
        load = window_book(zone=mitte, start=start, end=end)

    stored = DeliveryWindowLoad.objects.get(pk=load.pk)
    fields = ("zone_id", "window_start", "window_end", "booked", "capacity")
    assert [getattr(load, name) for name in fields] == [getattr(stored, name) for name in fields]
    assert (load.booked, load.capacity) == (2, 20)
    with django_assert_num_queries(0):
        assert load.zone is mitte
    assert not load._state.adding  # a later save() is an UPDATE of this row


@pytest.mark.django_db
def test_a_lowered_capacity_applies_to_the_next_booking(client, mitte):
    start = f"{builders.DELIVERY_DAY}T08:00:00+01:00"
    for n in range(2):
        assert window_order(client, f"W-{n}", start).status_code == 201
    mitte.window_capacity = 2
    mitte.save(update_fields=["window_capacity"])

    assert_error(window_order(client, "W-2", start), 400, "Delivery window is full")
    assert DeliveryWindowLoad.objects.get(zone=mitte).booked == 2


@pytest.mark.django_db(transaction=True)
def test_concurrent_creation_never_exceeds_the_window_capacity(organization):
    builders.zone(organization, window_capacity=3)
    issued = builders.api_key(organization, "partner_a")
    requests = 20
    barrier = threading.Barrier(requests)
    start = f"{builders.DELIVERY_DAY}T09:00:00+01:00"

    def attempt(n):
        try:
            barrier.wait()
            response = builders.key_client(issued).post(
                "/api/integrations/partner-a/orders",
                builders.partner_order(externalRef=f"RACE-{n}", deliveryWindowStart=start),
                format="json",
            )
            return response.status_code, response.json()
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=requests) as pool:
        results = list(pool.map(attempt, range(requests)))

    created = [body for status, body in results if status == 201]
    refused = [body for status, body in results if status != 201]
    assert len(created) == 3
    assert len(refused) == 17
    assert {body["message"] for body in refused} == {"Delivery window is full"}
    assert Order.objects.count() == 3
    load = DeliveryWindowLoad.objects.get()
    assert (load.booked, load.capacity) == (3, 3)


# ----- by address -----


@pytest.mark.django_db
def test_by_address_lists_every_matching_zone_smallest_first(client, organization, mitte):
    builders.zone(
        organization, name="Alexanderplatz", geodata=builders.ALEX_GEODATA, timezone_name="UTC"
    )

    body = windows_of(
        client, address=f"{builders.ALEX[0]},{builders.ALEX[1]}", date=builders.DELIVERY_DAY
    )

    assert [(entry["zone"], entry["timezone"]) for entry in body] == [
        ("Alexanderplatz", "UTC"),
        ("Mitte", "Europe/Berlin"),
    ]
    assert body[0]["windows"][0]["start"] == f"{builders.DELIVERY_DAY}T08:00:00+00:00"
    assert body[1]["windows"][0]["start"] == f"{builders.DELIVERY_DAY}T08:00:00+01:00"


@pytest.mark.django_db
def test_by_address_outside_every_zone_is_404(client, mitte):
    response = client.get(
        WINDOWS,
        {"address": f"{builders.HAMBURG[0]},{builders.HAMBURG[1]}", "date": builders.DELIVERY_DAY},
    )

    assert_error(response, 404, "No delivery zone found for the given address")


@pytest.mark.django_db
def test_by_address_that_cannot_be_geocoded_is_404(client, mitte):
    response = client.get(WINDOWS, {"address": "Nowhere Lane 7", "date": builders.DELIVERY_DAY})

    assert_error(response, 404, "No delivery zone found for the given address")


@pytest.mark.django_db
def test_counts_cost_one_query_whatever_the_number_of_zones(client, organization, mitte):
    builders.zone(organization, name="Alexanderplatz", geodata=builders.ALEX_GEODATA)
    address = f"{builders.ALEX[0]},{builders.ALEX[1]}"
    windows_of(client, address=address, date=builders.DELIVERY_DAY)  # warm the key and zone caches

    with CaptureQueriesContext(connection) as queries:
        windows_of(client, address=address, date=builders.DELIVERY_DAY)

    window_queries = [q for q in queries.captured_queries if "deliverywindowload" in q["sql"]]
    assert len(window_queries) == 1


# ----- query errors -----


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"zone": "Mitte"}, "date query parameter is required (format: YYYY-MM-DD)"),
        ({"zone": "Mitte", "date": ""}, "date query parameter is required (format: YYYY-MM-DD)"),
        (
            {"zone": "Mitte", "date": "06/01/2030"},
            "date must be a valid date (format: YYYY-MM-DD)",
        ),
        (
            {"zone": "Mitte", "date": "2030-02-30"},
            "date must be a valid date (format: YYYY-MM-DD)",
        ),
        (
            {"zone": "Mitte", "date": "20300106"},
            "date must be a valid date (format: YYYY-MM-DD)",
        ),
        (
            {"zone": "Mitte", "date": "2030-W01-1"},
            "date must be a valid date (format: YYYY-MM-DD)",
        ),
        (
            {"zone": "Mitte", "address": "52.52,13.40", "date": builders.DELIVERY_DAY},
            "Provide either zone or address, not both",
        ),
        ({"date": builders.DELIVERY_DAY}, "zone or address query parameter is required"),
    ],
)
def test_bad_query_is_400(client, mitte, query, message):
    assert_error(client.get(WINDOWS, query), 400, [message])


@pytest.mark.django_db
def test_unknown_zone_is_404(client, mitte):
    assert_error(
        client.get(WINDOWS, {"zone": "Atlantis", "date": builders.DELIVERY_DAY}),
        404,
        "Zone Atlantis not found",
    )


@pytest.mark.django_db
def test_another_organizations_zone_is_unknown(client, other_organization):
    builders.zone(other_organization, name="Theirs")

    response = client.get(WINDOWS, {"zone": "Theirs", "date": builders.DELIVERY_DAY})

    assert_error(response, 404, "Zone Theirs not found")
