"""Availability costs a fixed number of SQL queries, whatever the number of days, templates and
orders (docs/performance.md; issue 6): measured at small and at large data."""

from datetime import date, time, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from integrations.erp import services as erp_services
from slots.occurrences import day_of_week
from tests import builders

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("traveller")]

BULK = "/api/public/delivery-slots/availability/bulk"
SINGLE = "/api/public/delivery-slots/availability"
#: zone (1), templates (1), counters of the range (1)
MAX_QUERIES = 3


def _book_many(zone, templates, first: date, days: int, per_slot: int) -> int:
    count = 0
    for offset in range(days):
        day = first + timedelta(days=offset)
        for template in templates:
            if template.day_of_week != day_of_week(day):
                continue
            for _ in range(per_slot):
                count += 1
                erp_services.erp_order_create(
                    organization_id=zone.organization_id,
                    platform="erp",
                    external_ref=f"Q-{count}",
                    slot_template_id=str(template.id),
                    slot_date=day,
                    dropoff_address="Somewhere in Mitte",
                    dropoff_lat=builders.MITTE[0],
                    dropoff_lng=builders.MITTE[1],
                    recipient_name="R",
                    recipient_phone="+491701234567",
                )
    return count


def _queries(client, path, params) -> int:
    client.get(path, params)  # warm: key cache, lastUsedAt, spatial index
    with CaptureQueriesContext(connection) as queries:
        response = client.get(path, params)
    assert response.status_code == 200, response.content
    return len(queries)


def test_bulk_availability_query_count_does_not_grow_with_data(
    organization, django_assert_max_num_queries
):
    client = builders.standard_client(organization)
    small = builders.slot_zone(organization, "Small")
    builders.slot_template(small, day_of_week=0)
    large = builders.slot_zone(organization, "Large", geodata=None)
    templates = [
        builders.slot_template(
            large, day_of_week=weekday, start=f"{8 + 2 * n:02d}:00", duration=120, capacity=50
        )
        for weekday in range(7)
        for n in range(5)
    ]
    assert _book_many(large, templates, date(2030, 1, 2), days=14, per_slot=3) == 14 * 5 * 3

    small_params = {"zoneId": small.id, "startDate": "2030-01-06", "endDate": "2030-01-07"}
    large_params = {"zoneId": large.id, "startDate": "2030-01-02", "endDate": "2030-02-02"}
    client.get(BULK, small_params)  # the key's first use: lookup and lastUsedAt, once a minute
    with django_assert_max_num_queries(MAX_QUERIES):
        client.get(BULK, small_params)
    with django_assert_max_num_queries(MAX_QUERIES):
        response = client.get(BULK, large_params)
    days = response.json()["dates"]
    assert len(days) == 32 and sum(len(day["slots"]) for day in days) == 32 * 5
    assert days[4]["slots"][0]["booked"] == 3  # 2030-01-06 has its bookings
    assert _queries(client, BULK, small_params) == _queries(client, BULK, large_params)

    by_point = {
        "lat": builders.MITTE[0],
        "lng": builders.MITTE[1],
        "startDate": "2030-01-02",
        "endDate": "2030-02-02",
    }
    # The point lookup is served from the in-memory zone index (here, inside the test's open
    # transaction, the index is rebuilt: one query in place of the zone's).
    assert _queries(client, BULK, by_point) <= MAX_QUERIES


def test_single_date_availability_query_count_does_not_grow_with_data(
    organization, django_assert_max_num_queries
):
    client = builders.standard_client(organization)
    zone = builders.slot_zone(organization)
    builders.slot_template(zone, day_of_week=0)
    small = _queries(client, SINGLE, {"zoneId": zone.id, "date": "2030-01-06"})
    for n in range(1, 10):
        builders.slot_template(
            zone, day_of_week=0, start=time(n + 8).strftime("%H:%M"), duration=60
        )
    _book_many(zone, list(zone.slot_templates.all()), date(2030, 1, 6), days=1, per_slot=2)
    client.get(SINGLE, {"zoneId": zone.id, "date": "2030-01-06"})
    with django_assert_max_num_queries(MAX_QUERIES):
        client.get(SINGLE, {"zoneId": zone.id, "date": "2030-01-06"})
    assert _queries(client, SINGLE, {"zoneId": zone.id, "date": "2030-01-06"}) == small
