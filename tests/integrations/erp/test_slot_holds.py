"""Slot holds at checkout (docs/slot-holds.md): `POST/DELETE /integrations/erp/slot-holds` and an
ERP create with `holdId`. Time is frozen and moved with time-machine."""

import logging
from datetime import UTC, datetime, timedelta

import pytest

from integrations.models import Order
from slots import tasks as slot_tasks
from slots.models import SlotBooking, SlotDay, SlotHold
from slots.services import holds as hold_services
from tests import builders
from tests.conftest import assert_error
from webhooks.models import Event
from zones import services as zone_services

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("traveller")]

HOLDS = "/api/integrations/erp/slot-holds"
ORDERS = "/api/integrations/erp/orders"
CUTOFF = datetime(2030, 1, 6, 5, 0, tzinfo=UTC)


@pytest.fixture
def key(organization):
    return builders.api_key(organization, "erp")


@pytest.fixture
def client(key):
    return builders.key_client(key)


def hold_body(template, day=builders.SUNDAY, **overrides) -> dict:
    body = {
        "deliverySlotTemplateId": str(template.id) if template is not None else None,
        "deliverySlotDate": day.isoformat(),
        "dropoffLat": builders.MITTE[0],
        "dropoffLng": builders.MITTE[1],
    }
    body.update(overrides)
    return {name: value for name, value in body.items() if value is not ...}


def hold(client, template, day=builders.SUNDAY, **overrides):
    return client.post(HOLDS, hold_body(template, day, **overrides), format="json")


def held_id(client, template, day=builders.SUNDAY, **overrides) -> str:
    response = hold(client, template, day, **overrides)
    assert response.status_code == 201, response.content
    return response.json()["holdId"]


_readers: dict = {}


def availability(organization, zone, day=builders.SUNDAY) -> dict:
    """The slot's entry in public availability, read with the organization's standard key."""
    reader = _readers.get(organization.id) or _readers.setdefault(
        organization.id, builders.standard_client(organization)
    )
    response = reader.get(
        "/api/public/delivery-slots/availability",
        {"zoneId": str(zone.id), "date": day.isoformat()},
    )
    assert response.status_code == 200, response.content
    slot = response.json()["slots"][0]
    return {name: slot[name] for name in ("capacity", "booked", "available", "bookable")}


def counter(template, day=builders.SUNDAY) -> SlotDay | None:
    return SlotDay.objects.filter(template=template, date=day).first()


# ----- taking a hold -----


def test_a_hold_answers_its_id_expiry_and_window_and_takes_a_place(
    organization, client, zone, template
):
    response = hold(client, template)

    assert response.status_code == 201, response.content
    body = response.json()
    saved = SlotHold.objects.get()
    assert body == {
        "holdId": str(saved.id),
        "expiresAt": "2030-01-01T09:10:00Z",  # ttlSeconds defaults to 600
        "deliveryWindowStart": "2030-01-06T08:00:00+01:00",
        "deliveryWindowEnd": "2030-01-06T12:00:00+01:00",
    }
    assert availability(organization, zone) == {
        "capacity": 3,
        "booked": 1,
        "available": 2,
        "bookable": True,
    }
    # A hold is not an order, and the counter's bookings are unchanged.
    assert Order.objects.count() == 0
    assert counter(template).booked == 0


def test_ttl_seconds_sets_the_expiry_from_1_to_3600(client, template):
    assert hold(client, template, ttlSeconds=1).json()["expiresAt"] == "2030-01-01T09:00:01Z"
    assert hold(client, template, ttlSeconds=3600).json()["expiresAt"] == "2030-01-01T10:00:00Z"


@pytest.mark.parametrize(
    ("ttl", "message"),
    [
        (0, "ttlSeconds: must be between 1 and 3600"),
        (3601, "ttlSeconds: must be between 1 and 3600"),
        ("60", "ttlSeconds: must be an integer"),
        (True, "ttlSeconds: must be an integer"),
        (1.5, "ttlSeconds: must be an integer"),
    ],
)
def test_ttl_seconds_out_of_range_or_not_an_integer_is_a_400(client, template, ttl, message):
    assert_error(hold(client, template, ttlSeconds=ttl), 400, [message])
    assert SlotHold.objects.count() == 0


def test_a_hold_without_its_fields_names_each_missing_one(client):
    response = client.post(HOLDS, {}, format="json")
    assert_error(
        response,
        400,
        [
            "deliverySlotTemplateId required",
            "deliverySlotDate required",
            "dropoffLat required",
            "dropoffLng required",
        ],
    )


def _same_answer(client, template, day, traveller=None, **overrides):
    """The hold's answer and a create's for the same slot, date and dropoff."""
    held = hold(client, template, day, **overrides)
    created = builders.book(client, template, day, ref="SAME-1", **overrides)
    return held, created


@pytest.mark.parametrize(
    ("case", "status", "message"),
    [
        ("unknown template", 404, "Slot not found"),
        ("weekday", 400, "Delivery slot date does not match the slot's day of week"),
        ("dropoff outside", 400, "Dropoff location is outside the delivery zone"),
        ("past date", 400, "Booking cutoff has passed for this slot"),
        ("after cutoff", 400, "Booking cutoff has passed for this slot"),
        ("zone disabled", 400, "Delivery zone is disabled"),
        ("full", 400, "Delivery slot is full"),
    ],
)
def test_a_hold_is_refused_as_a_create_is(
    organization, client, zone, template, traveller, case, status, message
):
    day, overrides, target = builders.SUNDAY, {}, template
    if case == "unknown template":
        target = builders.slot_template(
            builders.slot_zone(builders.organization("Elsewhere")), day_of_week=0
        )
    elif case == "weekday":
        day = builders.MONDAY
    elif case == "dropoff outside":
        overrides = builders.DROPOFF_OUTSIDE
    elif case == "past date":
        day = builders.SUNDAY - timedelta(days=7)
    elif case == "after cutoff":
        traveller.move_to(CUTOFF)  # exactly at the cutoff: closed
    elif case == "zone disabled":
        zone_services.zone_update(zone=zone, enabled=False)
    elif case == "full":
        for n in range(3):
            assert (
                builders.book(client, template, builders.SUNDAY, ref=f"FULL-{n}").status_code == 201
            )

    held = hold(client, target, day, **overrides)
    created = builders.book(client, target, day, ref="SAME-1", **overrides)

    assert_error(held, status, message)
    assert_error(created, status, message)
    assert SlotHold.objects.count() == 0


def test_the_last_minute_before_the_cutoff_can_still_be_held(client, template, traveller):
    traveller.move_to(CUTOFF - timedelta(microseconds=1))
    assert hold(client, template).status_code == 201


def test_holds_fill_the_slot_for_holds_bookings_and_moves(organization, client, zone, template):
    for _ in range(3):
        held_id(client, template)

    assert_error(hold(client, template), 400, "Delivery slot is full")
    assert_error(builders.book(client, template, builders.SUNDAY), 400, "Delivery slot is full")
    other = builders.slot_template(zone, day_of_week=0, start="14:00", capacity=3)
    assert builders.book(client, other, builders.SUNDAY, ref="MOVER").status_code == 201
    moved = client.put(
        f"{ORDERS}/MOVER/delivery-slot",
        {"deliverySlotTemplateId": str(template.id), "deliverySlotDate": "2030-01-06"},
        format="json",
    )
    assert_error(moved, 400, "Delivery slot is full")
    assert availability(organization, zone) == {
        "capacity": 3,
        "booked": 3,
        "available": 0,
        "bookable": False,
    }


def test_bulk_availability_counts_live_holds_as_taken(organization, client, zone, traveller):
    template = builders.slot_template(zone, day_of_week=0, start="08:00", capacity=2)
    held_id(client, template, ttlSeconds=60)
    held_id(client, template, day=builders.SUNDAY + timedelta(days=7), ttlSeconds=120)
    _readers.setdefault(organization.id, builders.standard_client(organization))

    def taken() -> list[tuple[str, int, int]]:
        body = (
            _readers[organization.id]
            .get(
                "/api/public/delivery-slots/availability/bulk",
                {"zoneId": str(zone.id), "startDate": "2030-01-06", "endDate": "2030-01-13"},
            )
            .json()
        )
        return [
            (day["date"], slot["booked"], slot["available"])
            for day in body["dates"]
            for slot in day["slots"]
        ]

    assert taken() == [("2030-01-06", 1, 1), ("2030-01-13", 1, 1)]
    traveller.move_to(builders.NOW + timedelta(seconds=90))
    assert taken() == [("2030-01-06", 0, 2), ("2030-01-13", 1, 1)]


# ----- booking a hold -----


def test_a_create_with_hold_id_books_the_held_place_without_taking_another(
    organization, client, zone
):
    template = builders.slot_template(zone, day_of_week=0, start="08:00", capacity=1)
    hold_id = held_id(client, template)
    # The slot is full for everyone else ...
    assert_error(
        builders.book(client, template, builders.SUNDAY, ref="OTHER"), 400, "Delivery slot is full"
    )

    # ... and the hold's own booking takes its place.
    response = builders.book(client, template, builders.SUNDAY, ref="SO-HELD", holdId=hold_id)

    assert response.status_code == 201, response.content
    assert response.json()["deliveryWindowStart"] == "2030-01-06T08:00:00+01:00"
    assert counter(template).booked == 1
    assert SlotBooking.objects.get().order.external_ref == "SO-HELD"
    assert SlotHold.objects.get().used_at == builders.NOW
    assert availability(organization, zone) == {
        "capacity": 1,
        "booked": 1,
        "available": 0,
        "bookable": False,
    }


def test_a_hold_books_once(client, template):
    hold_id = held_id(client, template)
    assert (
        builders.book(client, template, builders.SUNDAY, ref="SO-1", holdId=hold_id).status_code
        == 201
    )

    again = builders.book(client, template, builders.SUNDAY, ref="SO-2", holdId=hold_id)

    assert_error(again, 409, "Slot hold has already been used")
    assert counter(template).booked == 1
    assert Order.objects.count() == 1


def test_a_hold_for_another_slot_or_date_is_a_400(client, zone, template):
    other = builders.slot_template(zone, day_of_week=0, start="14:00")
    hold_id = held_id(client, template)

    assert_error(
        builders.book(client, other, builders.SUNDAY, holdId=hold_id),
        400,
        "Slot hold is for another delivery slot or date",
    )
    assert_error(
        builders.book(client, template, builders.SUNDAY + timedelta(days=7), holdId=hold_id),
        400,
        "Slot hold is for another delivery slot or date",
    )
    assert Order.objects.count() == 0


def test_holds_of_one_key_are_invisible_to_others(client, template):
    hold_id = held_id(client, template)
    stranger = builders.erp_client(builders.organization("Rival Retail"))
    their_zone = builders.slot_zone(stranger_organization := builders.organization("Third Shop"))
    theirs = builders.slot_template(their_zone, day_of_week=0)
    third = builders.erp_client(stranger_organization)

    assert_error(
        builders.book(third, theirs, builders.SUNDAY, holdId=hold_id), 404, "Slot hold not found"
    )
    assert_error(stranger.delete(f"{HOLDS}/{hold_id}"), 404, "Slot hold not found")
    assert SlotHold.objects.filter(pk=hold_id, used_at=None).exists()
    assert Order.objects.count() == 0


@pytest.mark.parametrize("hold_id", ["not-a-uuid", "00000000-0000-0000-0000-000000000000"])
def test_an_unknown_hold_is_a_404(client, template, hold_id):
    assert_error(
        builders.book(client, template, builders.SUNDAY, holdId=hold_id), 404, "Slot hold not found"
    )
    assert_error(client.delete(f"{HOLDS}/{hold_id}"), 404, "Slot hold not found")


def test_a_hold_keeps_its_promise_past_the_cutoff(client, template, traveller):
    traveller.move_to(CUTOFF - timedelta(minutes=5))
    hold_id = held_id(client, template, ttlSeconds=900)
    traveller.move_to(CUTOFF + timedelta(minutes=5))  # the customer paid after the cutoff

    assert builders.book(client, template, builders.SUNDAY, holdId=hold_id).status_code == 201


def test_a_hold_booking_still_checks_the_dropoff(client, template):
    hold_id = held_id(client, template)
    response = builders.book(
        client,
        template,
        builders.SUNDAY,
        holdId=hold_id,
        **builders.DROPOFF_OUTSIDE,
    )
    assert_error(response, 400, "Dropoff location is outside the delivery zone")


# ----- expiry -----


def test_an_expired_hold_counts_for_nothing_without_any_sweep(
    organization, client, zone, traveller
):
    template = builders.slot_template(zone, day_of_week=0, start="08:00", capacity=1)
    hold_id = held_id(client, template, ttlSeconds=60)

    traveller.move_to(builders.NOW + timedelta(seconds=59))
    assert availability(organization, zone)["available"] == 0
    assert_error(
        builders.book(client, template, builders.SUNDAY, ref="EARLY"), 400, "Delivery slot is full"
    )

    traveller.move_to(builders.NOW + timedelta(seconds=60))  # expiresAt itself: expired
    assert availability(organization, zone)["available"] == 1
    assert_error(
        builders.book(client, template, builders.SUNDAY, holdId=hold_id),
        409,
        "Slot hold has expired",
    )
    assert builders.book(client, template, builders.SUNDAY, ref="LATE").status_code == 201
    assert SlotHold.objects.filter(pk=hold_id).exists()  # not swept, and yet free


def test_a_new_hold_takes_the_place_of_an_expired_one(client, zone, traveller):
    template = builders.slot_template(zone, day_of_week=0, start="08:00", capacity=1)
    held_id(client, template, ttlSeconds=60)
    traveller.move_to(builders.NOW + timedelta(minutes=2))

    assert hold(client, template).status_code == 201
    assert_error(hold(client, template), 400, "Delivery slot is full")


def test_the_sweep_deletes_expired_holds_and_is_safe_to_run_twice(
    organization, client, zone, template, traveller, caplog
):
    expired = held_id(client, template, ttlSeconds=60)
    used = held_id(client, template, ttlSeconds=60)
    assert builders.book(client, template, builders.SUNDAY, holdId=used).status_code == 201
    live = held_id(client, template, ttlSeconds=600)
    traveller.move_to(builders.NOW + timedelta(minutes=5))
    updates = len(builders.events_named("erp.slots.updated", organization))

    caplog.set_level(logging.INFO)

    assert slot_tasks.delete_expired_holds() == 2
    assert slot_tasks.delete_expired_holds() == 0

    # One line for the run that deleted holds, none for the one that found nothing.
    assert [(r.getMessage(), r.fields) for r in caplog.records if r.name == "slots.tasks"] == [
        (
            "slots.delete_expired_holds deleted 2 expired slot holds",
            {"task": "slots.delete_expired_holds", "deleted": 2},
        )
    ]

    assert [str(pk) for pk in SlotHold.objects.values_list("id", flat=True)] == [live]
    assert not SlotHold.objects.filter(pk__in=[expired, used]).exists()
    assert availability(organization, zone)["booked"] == 2  # the order and the live hold
    # The places given back are reported (coalesced into the hour's erp.slots.updated).
    assert len(builders.events_named("erp.slots.updated", organization)) >= updates


def test_the_sweep_goes_in_batches_and_tells_each_batch_s_zone(
    organization, client, zone, traveller
):
    """Retention's batches (delivery/retention.py): 5 expired holds, 2 a batch, all deleted; the
    places they gave back are reported in each batch's transaction."""
    template = builders.slot_template(zone, day_of_week=0, start="08:00", capacity=5)
    for _ in range(5):
        held_id(client, template, ttlSeconds=60)
    assert availability(organization, zone)["available"] == 0
    traveller.move_to(builders.NOW + timedelta(minutes=2))
    Event.objects.filter(organization=organization).update(is_open=False)  # sent since

    assert hold_services.slot_holds_expired_delete(batch_size=2) == 5

    assert not SlotHold.objects.exists()
    assert availability(organization, zone)["available"] == 5
    reported = [e for e in builders.events_named("erp.slots.updated", organization) if e.is_open]
    assert len(reported) == 1  # the three batches' reports coalesce into the hour's event


# ----- release -----


def test_delete_gives_the_place_back(organization, client, zone):
    template = builders.slot_template(zone, day_of_week=0, start="08:00", capacity=1)
    hold_id = held_id(client, template)

    response = client.delete(f"{HOLDS}/{hold_id}")

    assert response.status_code == 204
    assert availability(organization, zone)["available"] == 1
    assert builders.book(client, template, builders.SUNDAY).status_code == 201
    assert_error(client.delete(f"{HOLDS}/{hold_id}"), 404, "Slot hold not found")


def test_a_booked_hold_cannot_be_released(client, template):
    hold_id = held_id(client, template)
    assert builders.book(client, template, builders.SUNDAY, holdId=hold_id).status_code == 201

    assert_error(client.delete(f"{HOLDS}/{hold_id}"), 409, "Slot hold has already been used")
    assert counter(template).booked == 1


def test_only_erp_keys_hold_slots(organization, template):
    response = builders.standard_client(organization).post(
        HOLDS, hold_body(template), format="json"
    )
    assert response.status_code == 403


# ----- capacity events -----


def test_erp_slot_booked_counts_held_places(organization, client, zone, template):
    held_id(client, template)
    response = builders.book(client, template, builders.SUNDAY, ref="SO-1")

    event = builders.events_named("erp.slot.booked", organization)[-1]
    assert event.payload["order_id"] == response.json()["id"]
    assert (event.payload["booked"], event.payload["capacity"], event.payload["available"]) == (
        2,
        3,
        1,
    )


def test_booking_a_hold_reports_the_slot_as_availability_does(organization, client, template):
    first = held_id(client, template)
    held_id(client, template)
    builders.book(client, template, builders.SUNDAY, ref="SO-1", holdId=first)

    event = builders.events_named("erp.slot.booked", organization)[-1]
    assert (event.payload["booked"], event.payload["available"]) == (2, 1)


def test_erp_slots_updated_counts_held_places(organization, client, zone, template):
    held_id(client, template)
    held_id(client, template)

    event = builders.events_named("erp.slots.updated", organization)[-1]
    entry = next(
        item
        for item in event.payload["availability"]
        if item["templateId"] == str(template.id) and item["date"] == "2030-01-06"
    )
    assert (entry["booked"], entry["available"]) == (2, 1)

    client.delete(f"{HOLDS}/{SlotHold.objects.first().id}")
    event = builders.events_named("erp.slots.updated", organization)[-1]
    entry = next(
        item
        for item in event.payload["availability"]
        if item["templateId"] == str(template.id) and item["date"] == "2030-01-06"
    )
    assert (entry["booked"], entry["available"]) == (1, 2)


def test_a_hold_on_a_slot_in_the_spring_gap_has_the_moved_window(client, zone):
    # 02:00-03:00 does not exist on Sunday 31 March 2030 in Berlin: that day it is 03:00-04:00.
    template = builders.slot_template(zone, day_of_week=0, start="02:00", duration=60, cutoff=60)

    response = hold(client, template, datetime(2030, 3, 31).date())

    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["deliveryWindowStart"], body["deliveryWindowEnd"]) == (
        "2030-03-31T03:00:00+02:00",
        "2030-03-31T04:00:00+02:00",
    )
