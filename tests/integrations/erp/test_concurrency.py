"""Capacity under real parallel requests (capacity rule 5; contract "Slots and windows"): HTTP
requests to a live server (`parallel_server`), each served by its own thread and database
connection, all started together."""

import pytest

from integrations.models import Order
from slots.models import SlotBooking, SlotDay
from slots.occurrences import day_of_week
from tests import builders
from tests.integrations.erp.parallel import ORDERS, all_at_once, booking, erp_tenant, json_request

pytestmark = pytest.mark.django_db(
    transaction=True
)  # no rate limits: tests/integrations/conftest.py


@pytest.fixture
def setting():
    """An organization, its ERP key, a zone, and a delivery date a week ahead."""
    return erp_tenant("Parallel Parcels")


def test_40_concurrent_bookings_of_a_slot_of_capacity_5_make_exactly_5_orders(
    parallel_server, setting
):
    organization, key, zone, day = setting
    template = builders.slot_template(zone, day_of_week=day_of_week(day), start="10:00", capacity=5)
    url = f"{parallel_server}{ORDERS}"
    calls = [booking(url, key, template, day, f"P-{n}") for n in range(40)]

    results = all_at_once(calls)

    statuses = sorted(status for status, _ in results)
    assert statuses == [201] * 5 + [400] * 35, results
    assert {body["message"] for status, body in results if status == 400} == {
        "Delivery slot is full"
    }
    assert Order.objects.filter(organization=organization).count() == 5
    assert SlotBooking.objects.filter(template=template, released_at=None).count() == 5
    assert SlotDay.objects.get(template=template, date=day).booked == 5
    availability = json_request(
        f"{parallel_server}/api/public/delivery-slots/availability"
        f"?zoneId={zone.id}&date={day.isoformat()}",
        key,
        "GET",
    )[1]
    slot = availability["slots"][0]
    assert (slot["capacity"], slot["booked"], slot["available"], slot["bookable"]) == (
        5,
        5,
        0,
        False,
    )


def test_crossing_reassignments_between_two_slots_finish_without_deadlock(parallel_server, setting):
    _, key, zone, day = setting
    weekday = day_of_week(day)
    morning = builders.slot_template(zone, day_of_week=weekday, start="08:00", capacity=50)
    noon = builders.slot_template(zone, day_of_week=weekday, start="12:00", capacity=50)
    base = f"{parallel_server}{ORDERS}"
    for n in range(15):
        for prefix, template in (("M", morning), ("N", noon)):
            status, body = booking(base, key, template, day, f"{prefix}-{n}")()
            assert status == 201, body

    def move(ref: str, template):
        body = {"deliverySlotTemplateId": str(template.id), "deliverySlotDate": day.isoformat()}
        return lambda: json_request(f"{base}/{ref}/delivery-slot", key, "PUT", body)

    # Every morning order moves to noon while every noon order moves to the morning: each
    # request locks both slots' rows, half of them in the opposite direction.
    calls = []
    for n in range(15):
        calls += [move(f"M-{n}", noon), move(f"N-{n}", morning)]

    results = all_at_once(calls)

    assert [status for status, _ in results] == [200] * 30, results
    assert SlotDay.objects.get(template=morning, date=day).booked == 15
    assert SlotDay.objects.get(template=noon, date=day).booked == 15
    moved = dict(
        SlotBooking.objects.filter(template__zone=zone).values_list(
            "order__external_ref", "template_id"
        )
    )
    assert all(moved[f"M-{n}"] == noon.id for n in range(15))
    assert all(moved[f"N-{n}"] == morning.id for n in range(15))


def test_concurrent_cancels_and_bookings_never_exceed_capacity(parallel_server, setting):
    _, key, zone, day = setting
    template = builders.slot_template(
        zone, day_of_week=day_of_week(day), start="16:00", capacity=10
    )
    base = f"{parallel_server}{ORDERS}"
    for n in range(10):
        assert booking(base, key, template, day, f"OLD-{n}")()[0] == 201

    calls = [
        (lambda n=n: json_request(f"{base}/OLD-{n}/cancel", key, "POST", {})) for n in range(5)
    ]
    calls += [booking(base, key, template, day, f"NEW-{n}") for n in range(15)]
    results = all_at_once(calls)

    assert [status for status, _ in results[:5]] == [200] * 5
    created = sum(1 for status, _ in results[5:] if status == 201)
    # Bookings that reached the lock before a cancel committed found the slot full.
    assert 0 <= created <= 5, results
    assert {body["message"] for status, body in results[5:] if status != 201} <= {
        "Delivery slot is full"
    }
    counter = SlotDay.objects.get(template=template, date=day)
    assert counter.booked == 5 + created
    assert SlotBooking.objects.filter(template=template, released_at=None).count() == 5 + created
