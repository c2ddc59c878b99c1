"""Slot holds under real parallel requests (docs/slot-holds.md): holders and bookers of one slot
served by a live server, a thread and a database connection per request, all released together.
Holds take places on the same row lock as bookings, so capacity holds for both."""

import pytest
from django.utils import timezone

from integrations.models import Order
from slots.models import SlotBooking, SlotDay, SlotHold
from slots.occurrences import day_of_week
from tests import builders
from tests.integrations.erp.parallel import ORDERS, all_at_once, booking, erp_tenant, json_request

pytestmark = pytest.mark.django_db(
    transaction=True
)  # no rate limits: tests/integrations/conftest.py

HOLDS = "/api/integrations/erp/slot-holds"


@pytest.fixture
def slot():
    """An ERP key and a slot of capacity 5 a week ahead."""
    organization, key, zone, day = erp_tenant("Parallel Holds")
    template = builders.slot_template(zone, day_of_week=day_of_week(day), start="10:00", capacity=5)
    return organization, key, zone, template, day


def _hold_body(template, day) -> dict:
    return {
        "deliverySlotTemplateId": str(template.id),
        "deliverySlotDate": day.isoformat(),
        "dropoffLat": builders.MITTE[0],
        "dropoffLng": builders.MITTE[1],
    }


def _taken(template, day) -> tuple[int, int]:
    """(active bookings, live holds) of the slot, counted from their own rows."""
    now = timezone.now()
    bookings = SlotBooking.objects.filter(template=template, date=day, released_at=None).count()
    holds = SlotHold.objects.filter(
        template=template, date=day, used_at=None, expires_at__gt=now
    ).count()
    return bookings, holds


def test_40_concurrent_holders_and_bookers_take_at_most_5_places(parallel_server, slot):
    organization, key, zone, template, day = slot
    holds_url, orders_url = f"{parallel_server}{HOLDS}", f"{parallel_server}{ORDERS}"
    calls = []
    for n in range(20):
        calls.append(lambda: json_request(holds_url, key, "POST", _hold_body(template, day)))
        calls.append(booking(orders_url, key, template, day, f"B-{n}"))

    results = all_at_once(calls)

    won = [body for status, body in results if status == 201]
    assert len(won) == 5, results
    assert {body["message"] for status, body in results if status != 201} == {
        "Delivery slot is full"
    }
    bookings, holds = _taken(template, day)
    assert bookings + holds == 5
    assert bookings == Order.objects.filter(organization=organization).count()
    counter = SlotDay.objects.get(template=template, date=day)
    assert counter.booked == bookings
    availability = json_request(
        f"{parallel_server}/api/public/delivery-slots/availability"
        f"?zoneId={zone.id}&date={day.isoformat()}",
        key,
        "GET",
    )[1]["slots"][0]
    assert (availability["booked"], availability["available"], availability["bookable"]) == (
        5,
        0,
        False,
    )

    # Every hold then becomes its booking, in parallel with more bookers who find it full.
    hold_ids = [body["holdId"] for body in won if "holdId" in body]
    calls = [
        (
            lambda n=n, hold_id=hold_id: json_request(
                orders_url,
                key,
                "POST",
                builders.erp_order(template, day, externalRef=f"H-{n}", holdId=hold_id),
            )
        )
        for n, hold_id in enumerate(hold_ids)
    ]
    calls += [booking(orders_url, key, template, day, f"LATE-{n}") for n in range(20)]

    results = all_at_once(calls)

    assert [status for status, _ in results[: len(hold_ids)]] == [201] * len(hold_ids), results
    assert {status for status, _ in results[len(hold_ids) :]} == {400}
    assert _taken(template, day) == (5, 0)
    assert SlotDay.objects.get(template=template, date=day).booked == 5


def test_releases_racing_holders_and_bookers_never_exceed_capacity(parallel_server, slot):
    _, key, _, template, day = slot
    holds_url, orders_url = f"{parallel_server}{HOLDS}", f"{parallel_server}{ORDERS}"
    held = [json_request(holds_url, key, "POST", _hold_body(template, day)) for _ in range(5)]
    assert [status for status, _ in held] == [201] * 5

    calls = [
        (lambda hold_id=body["holdId"]: json_request(f"{holds_url}/{hold_id}", key, "DELETE"))
        for _, body in held[:3]
    ]
    calls += [(lambda: json_request(holds_url, key, "POST", _hold_body(template, day)))] * 10
    calls += [booking(orders_url, key, template, day, f"R-{n}") for n in range(10)]
    results = all_at_once(calls)

    assert [status for status, _ in results[:3]] == [204] * 3
    won = sum(1 for status, _ in results[3:] if status == 201)
    assert won <= 3, results
    bookings, holds = _taken(template, day)
    assert bookings + holds == 2 + won <= 5
