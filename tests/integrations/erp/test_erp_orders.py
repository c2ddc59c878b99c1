"""The ERP family: create an order on a slot, read it, move it, cancel it (contract "Orders",
"erp.slot.booked"; contract "Authentication and scope", "Orders", "Slots and windows")."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext

from integrations.models import Order, OrderStatus, OrderStatusEvent
from slots.models import SlotBooking, SlotDay, SlotPolicy
from slots.services import bookings as booking_services
from slots.services import templates as template_services
from tests import builders
from tests.conftest import assert_error
from webhooks.events import hour_bucket_event_id
from zones import services as zone_services

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("traveller")]

ORDERS = "/api/integrations/erp/orders"


@pytest.fixture
def client(organization):
    return builders.erp_client(organization)


def booked(template, day=builders.SUNDAY) -> int:
    counter = SlotDay.objects.filter(template=template, date=day).first()
    return counter.booked if counter else 0


# ----- create -----


def test_create_books_the_slot_and_answers_the_erp_order(client, zone, template):
    response = builders.book(client, template, builders.SUNDAY)

    assert response.status_code == 201, response.content
    body = response.json()
    order = Order.objects.get()
    assert body == {
        "id": str(order.id),
        "status": "pending",
        "externalRef": "SO-1001",
        "deliverySlotTemplateId": str(template.id),
        "deliverySlotDate": "2030-01-06",
        "deliveryWindowStart": "2030-01-06T08:00:00+01:00",
        "deliveryWindowEnd": "2030-01-06T12:00:00+01:00",
        "assignmentZoneId": str(zone.id),
        "eta": None,
        "attempt": 1,
        "trackingToken": order.tracking_token,
        "trackingUrl": f"http://testserver/track/{order.tracking_token}",
        "createdAt": "2030-01-01T09:00:00Z",
    }
    assert (order.family, order.platform, order.status) == ("erp", "erp", "pending")
    assert order.delivery_window_start == datetime(2030, 1, 6, 7, 0, tzinfo=UTC)
    assert (order.dropoff_lat, order.dropoff_lng) == builders.MITTE
    assert order.recipient_phone == "+491701234567"
    assert booked(template) == 1
    # The history starts with the creation.
    assert list(OrderStatusEvent.objects.values_list("to_status", flat=True)) == ["pending"]


def test_create_emits_erp_slot_booked(organization, client, zone, template):
    builders.book(client, template, builders.SUNDAY, ref="SO-1")
    response = builders.book(client, template, builders.SUNDAY, ref="SO-2")
    order_id = response.json()["id"]

    event = next(
        e
        for e in builders.events_named("erp.slot.booked", organization)
        if e.payload["order_id"] == order_id
    )
    assert event.event_id == f"erp.slot.booked:{order_id}"
    assert event.payload == {
        "polygon_id": str(zone.id),
        "polygon_name": "Mitte",
        "order_id": order_id,
        "template_id": str(template.id),
        "date": "2030-01-06",
        "booked": 2,
        "capacity": 3,
        "available": 1,
        "updatedAt": "2030-01-01T09:00:00Z",
    }


def test_a_future_dated_order_is_held_until_its_delivery_day(client, template):
    builders.book(client, template, builders.SUNDAY)
    order = Order.objects.get()
    assert order.held_until == datetime(2030, 1, 5, 23, 0, tzinfo=UTC)  # 00:00 Berlin time


def test_pickup_defaults_to_the_policy_default_pickup_address(organization, client, template):
    template_services.slot_policy_update(
        organization_id=organization.id, default_pickup_address="Depot, Storkower Str. 1"
    )
    body = builders.erp_order(
        template, builders.SUNDAY, pickupAddress=..., pickupLat=..., pickupLng=...
    )
    response = client.post(ORDERS, body, format="json")
    assert response.status_code == 201, response.content
    order = Order.objects.get()
    assert (order.pickup_address, order.pickup_lat, order.pickup_lng) == (
        "Depot, Storkower Str. 1",
        None,
        None,
    )


def test_without_a_policy_the_pickup_is_empty_and_a_policy_is_made(organization, client, template):
    body = builders.erp_order(
        template, builders.SUNDAY, pickupAddress=..., pickupLat=..., pickupLng=...
    )
    response = client.post(ORDERS, body, format="json")

    assert response.status_code == 201, response.content
    assert Order.objects.get().pickup_address == ""
    assert SlotPolicy.objects.filter(organization=organization).count() == 1


def test_booking_takes_one_statement_on_the_counter_and_one_unsorted_read_of_the_slot(
    organization, client, template
):
    template_services.slot_policy_update(
        organization_id=organization.id, default_pickup_address="Depot"
    )
    for n in range(1, 4):
        body = builders.erp_order(
            template,
            builders.SUNDAY,
            externalRef=f"SO-{n}",
            pickupAddress=...,
            pickupLat=...,
            pickupLng=...,
        )
        with CaptureQueriesContext(connection) as queries:
            assert client.post(ORDERS, body, format="json").status_code == 201

        sql = [q["sql"] for q in queries.captured_queries]
        assert len([q for q in sql if "slots_slotday" in q]) == 1
        assert not [q for q in sql if q.startswith('SELECT "slots_slotpolicy"')]
        template_queries = [q for q in sql if 'FROM "slots_slottemplate"' in q]
        assert len(template_queries) == 1
        assert "ORDER BY" not in template_queries[0]
        assert booked(template) == n
    assert_error(
        builders.book(client, template, builders.SUNDAY, ref="SO-4"), 400, "Delivery slot is full"
    )
    assert booked(template) == 3


def test_the_default_pickup_is_one_column_of_the_template_read(organization, client, template):
    """Not the organization's and the policy's whole rows: a lighter query to build."""
    template_services.slot_policy_update(
        organization_id=organization.id, default_pickup_address="Depot"
    )
    body = builders.erp_order(
        template, builders.SUNDAY, pickupAddress=..., pickupLat=..., pickupLng=...
    )
    with CaptureQueriesContext(connection) as queries:
        assert client.post(ORDERS, body, format="json").status_code == 201

    sql = [q["sql"] for q in queries.captured_queries]
    (read,) = [q for q in sql if 'FROM "slots_slottemplate"' in q]
    assert '"slots_slotpolicy"."default_pickup_address"' in read
    assert '"tenants_organization"."name"' not in read
    assert '"slots_slotpolicy"."organization_id"' not in read.split(" FROM ")[0]
    assert Order.objects.get().pickup_address == "Depot"


def test_the_slot_booked_event_is_written_without_looking_for_an_earlier_one(
    organization, template
):
    """Its id names the order the same transaction creates, so no event can hold it yet: the
    event is one INSERT, with no SELECT of earlier events and no ON CONFLICT."""
    client = builders.erp_client(organization, webhook_url="http://127.0.0.1:9/hooks")
    body = builders.erp_order(template, builders.SUNDAY, externalRef="SO-1")
    with CaptureQueriesContext(connection) as queries:
        assert client.post(ORDERS, body, format="json").status_code == 201

    events = [q["sql"] for q in queries.captured_queries if '"webhooks_event"' in q["sql"]]
    (insert,) = events
    assert insert.startswith('INSERT INTO "webhooks_event"')
    assert "ON CONFLICT" not in insert
    order = Order.objects.get()
    (event,) = builders.events_named("erp.slot.booked", organization)
    assert event.event_id == f"erp.slot.booked:{order.id}"
    assert event.deliveries.count() == 1


def test_the_slots_zone_comes_from_the_warm_zone_index_and_a_zone_change_reaches_it(
    organization, client, django_capture_on_commit_callbacks
):
    """The template is read alone (no zone columns, no zone query); a zone change retires the
    index, so the next booking judges the zone as it now is."""
    with django_capture_on_commit_callbacks(execute=True):  # committed: the index is kept
        zone = builders.slot_zone(organization)
    template = builders.slot_template(zone, day_of_week=0, start="08:00", capacity=3)
    body = builders.erp_order(template, builders.SUNDAY, externalRef="SO-1")
    assert client.post(ORDERS, body, format="json").status_code == 201  # warms the index

    body = builders.erp_order(template, builders.SUNDAY, externalRef="SO-2")
    with CaptureQueriesContext(connection) as queries:
        assert client.post(ORDERS, body, format="json").status_code == 201
    sql = [q["sql"] for q in queries.captured_queries]
    (read,) = [q for q in sql if 'FROM "slots_slottemplate"' in q]
    assert '"zones_zone"' not in read
    assert not [q for q in sql if 'FROM "zones_zone"' in q]
    assert Order.objects.get(external_ref="SO-2").zone_id == zone.id

    with django_capture_on_commit_callbacks(execute=True):
        zone_services.zone_update(zone=zone, enabled=False)
    body = builders.erp_order(template, builders.SUNDAY, externalRef="SO-3")
    assert_error(client.post(ORDERS, body, format="json"), 400, "Delivery zone is disabled")


def test_given_pickup_wins_over_the_default(organization, client, template):
    template_services.slot_policy_update(
        organization_id=organization.id, default_pickup_address="Depot"
    )
    builders.book(client, template, builders.SUNDAY)
    assert Order.objects.get().pickup_address == "Warehouse, Storkower Str. 1, Berlin"


def test_required_fields_are_named(client):
    response = client.post(ORDERS, {}, format="json")
    assert_error(
        response,
        400,
        [
            "externalRef required",
            "dropoffAddress required",
            "dropoffLat required",
            "dropoffLng required",
            "recipientName required",
            "recipientPhone required",
            "deliverySlotTemplateId required",
            "deliverySlotDate required",
        ],
    )


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"externalRef": "SO 1"}, "externalRef may contain only letters, digits and -_.:/#"),
        ({"externalRef": "S" * 101}, "externalRef must be at most 100 characters"),
        ({"externalRef": 42}, "externalRef must be a string"),
        ({"dropoffLat": "52.5"}, "dropoffLat must be a number"),
        ({"dropoffLat": 91}, "dropoffLat must be between -90 and 90"),
        ({"dropoffLng": -181}, "dropoffLng must be between -180 and 180"),
        ({"pickupLat": 100}, "pickupLat must be between -90 and 90"),
        ({"pickupLng": ...}, "pickupLat and pickupLng must be given together"),
        (
            {"recipientPhone": "call me"},
            "recipientPhone must be a phone number: + optional, then 7 to 15 digits",
        ),
        ({"recipientName": "N" * 201}, "recipientName must be at most 200 characters"),
        ({"dropoffAddress": "A" * 501}, "dropoffAddress must be at most 500 characters"),
        ({"packageSize": "huge"}, "packageSize must be one of: small, medium, large"),
        (
            {"deliverySlotDate": "06.01.2030"},
            "deliverySlotDate must be a valid date (format: YYYY-MM-DD)",
        ),
        (
            {"deliverySlotDate": "2030-02-30"},
            "deliverySlotDate must be a valid date (format: YYYY-MM-DD)",
        ),
    ],
)
def test_field_rules(client, template, overrides, message):
    response = client.post(
        ORDERS, builders.erp_order(template, builders.SUNDAY, **overrides), format="json"
    )
    assert_error(response, 400, [message])
    assert not Order.objects.exists()


# contract "Orders": template exists, weekday, cutoff, dropoff in zone, capacity - in this order.
# Each case breaks its own check and every later one, so only the order can explain the answer.


def _fill(client, template, day):
    for n in range(template.capacity):
        assert builders.book(client, template, day, ref=f"FILL-{n}").status_code == 201


def test_unknown_template_comes_first(client, template):
    response = builders.book(
        client,
        None,
        builders.MONDAY,
        deliverySlotTemplateId="5f1c0a8e-0000-4000-8000-000000000000",
        **builders.DROPOFF_OUTSIDE,
    )
    assert_error(response, 404, "Slot not found")


@pytest.mark.parametrize("template_id", ["not-a-uuid", "", "../../etc"])
def test_malformed_template_id_is_404(client, template, template_id):
    response = builders.book(client, template, builders.SUNDAY, deliverySlotTemplateId=template_id)
    if template_id == "":
        assert_error(response, 400, ["deliverySlotTemplateId must not be empty"])
    else:
        assert_error(response, 404, "Slot not found")


def test_another_organizations_template_is_404(client):
    foreign = builders.slot_template(builders.slot_zone(builders.organization("Elsewhere")))
    assert_error(builders.book(client, foreign, builders.SUNDAY), 404, "Slot not found")


def test_a_deleted_template_is_404(client, template):
    template_services.slot_template_delete(template=template)
    assert_error(builders.book(client, template, builders.SUNDAY), 404, "Slot not found")


def test_weekday_mismatch_comes_before_cutoff_zone_and_capacity(client, template):
    _fill(client, template, builders.SUNDAY)
    past_monday = builders.MONDAY - timedelta(days=7)
    response = builders.book(
        client,
        template,
        past_monday,
        **builders.DROPOFF_OUTSIDE,
        ref="X",
    )
    assert_error(response, 400, "Delivery slot date does not match the slot's day of week")


def book_outside_the_zone(client, template):
    return builders.book(client, template, builders.SUNDAY, ref="X", **builders.DROPOFF_OUTSIDE)


def test_cutoff_comes_before_zone_and_capacity(client, template):
    _fill(client, template, builders.SUNDAY)
    with time_machine.travel(datetime(2030, 1, 6, 5, 0, tzinfo=UTC), tick=False):
        response = book_outside_the_zone(client, template)
    assert_error(response, 400, "Booking cutoff has passed for this slot")


def test_dropoff_outside_the_zone_comes_before_capacity(client, template):
    _fill(client, template, builders.SUNDAY)
    response = book_outside_the_zone(client, template)
    assert_error(response, 400, "Dropoff location is outside the delivery zone")


def test_capacity_comes_last(client, template):
    _fill(client, template, builders.SUNDAY)
    response = builders.book(client, template, builders.SUNDAY, ref="X")
    assert_error(response, 400, "Delivery slot is full")
    assert Order.objects.count() == 3  # the refused order was not created
    assert booked(template) == 3


def test_a_dropoff_in_another_zone_of_the_organization_is_outside(organization, client):
    alex = builders.slot_zone(organization, "Alex", geodata=builders.ALEX_GEODATA)
    template = builders.slot_template(alex)
    response = builders.book(
        client, template, builders.SUNDAY, dropoffLat=52.505, dropoffLng=13.38
    )  # Mitte only
    assert_error(response, 400, "Dropoff location is outside the delivery zone")
    assert (
        builders.book(
            client,
            template,
            builders.SUNDAY,
            dropoffLat=builders.ALEX[0],
            dropoffLng=builders.ALEX[1],
        ).status_code
        == 201
    )


def test_a_dropoff_on_the_zone_boundary_is_inside(client, template):
    response = builders.book(client, template, builders.SUNDAY, dropoffLat=52.50, dropoffLng=13.40)
    assert response.status_code == 201, response.content


def test_booking_closes_at_the_cutoff_instant_exactly(client, template):
    cutoff = datetime(2030, 1, 6, 5, 0, tzinfo=UTC)  # 08:00+01:00 minus 120 minutes
    with time_machine.travel(cutoff - timedelta(microseconds=1), tick=False):
        assert builders.book(client, template, builders.SUNDAY, ref="IN-TIME").status_code == 201
    with time_machine.travel(cutoff, tick=False):
        assert_error(
            builders.book(client, template, builders.SUNDAY, ref="TOO-LATE"),
            400,
            "Booking cutoff has passed for this slot",
        )


def test_a_slot_of_a_disabled_zone_cannot_be_booked(client, zone, template):
    zone_services.zone_update(zone=zone, enabled=False)
    assert_error(builders.book(client, template, builders.SUNDAY), 400, "Delivery zone is disabled")


def test_duplicate_external_ref_is_409_and_takes_no_capacity(client, template):
    assert builders.book(client, template, builders.SUNDAY).status_code == 201
    response = builders.book(client, template, builders.SUNDAY)
    assert_error(response, 409, "Order with externalRef SO-1001 already exists")
    assert booked(template) == 1


def test_external_refs_are_per_organization(client, template):
    other = builders.organization("Elsewhere")
    other_template = builders.slot_template(builders.slot_zone(other))
    assert builders.book(client, template, builders.SUNDAY).status_code == 201
    assert (
        builders.book(builders.erp_client(other), other_template, builders.SUNDAY).status_code
        == 201
    )


def test_other_platform_keys_are_refused(organization, template):
    for platform in ("partner_a", "standard"):
        client = builders.key_client(builders.api_key(organization, platform))
        assert_error(
            builders.book(client, template, builders.SUNDAY),
            403,
            "API key does not match erp integration",
        )


def test_a_missing_key_is_401(api_client, template):
    assert_error(
        builders.book(api_client, template, builders.SUNDAY), 401, "Missing X-API-Key header"
    )


# ----- read -----


def test_read_returns_the_erp_order_with_created_at(client, zone, template):
    created = builders.book(client, template, builders.SUNDAY, ref="SO/2030#7").json()
    response = client.get(f"{ORDERS}/SO/2030%237")
    assert response.status_code == 200, response.content
    assert response.json() == created
    assert client.get(f"{ORDERS}/SO/2030%237/").json() == created


def test_read_unknown_or_foreign_or_partner_orders_is_404(organization, client, template):
    other = builders.organization("Elsewhere")
    builders.book(
        builders.erp_client(other),
        builders.slot_template(builders.slot_zone(other)),
        builders.SUNDAY,
        ref="THEIRS",
    )
    builders.slot_zone(organization, "Partner zone", purpose="dispatch")
    partner = builders.partner_client(organization)
    assert builders.create_order(partner, externalRef="PARTNER-1").status_code == 201
    for ref in ("NOPE", "THEIRS", "PARTNER-1"):
        assert_error(client.get(f"{ORDERS}/{ref}"), 404, "Order not found")


# ----- reassign -----


def slot_path(ref="SO-1001"):
    return f"{ORDERS}/{ref}/delivery-slot"


def test_reassign_frees_the_old_slot_and_books_the_new_one(organization, client, zone, template):
    later = builders.slot_template(zone, day_of_week=1, start="12:00", capacity=5)
    order_id = builders.book(client, template, builders.SUNDAY).json()["id"]

    response = client.put(
        slot_path(),
        {"deliverySlotTemplateId": str(later.id), "deliverySlotDate": "2030-01-07"},
        format="json",
    )

    assert response.status_code == 200, response.content
    assert response.json() == {
        "id": order_id,
        "deliverySlotTemplateId": str(later.id),
        "deliverySlotDate": "2030-01-07",
        "deliveryWindowStart": "2030-01-07T12:00:00+01:00",
        "deliveryWindowEnd": "2030-01-07T16:00:00+01:00",
    }
    assert (booked(template), booked(later, builders.MONDAY)) == (0, 1)
    read = client.get(f"{ORDERS}/SO-1001").json()
    assert (read["deliverySlotTemplateId"], read["deliveryWindowStart"]) == (
        str(later.id),
        "2030-01-07T12:00:00+01:00",
    )
    event = builders.events_named("erp.slots.updated", organization)[-1]
    assert event.event_id == hour_bucket_event_id("erp.slots.updated", zone.id)
    availability = {
        (a["templateId"], a["date"]): a["booked"] for a in event.payload["availability"]
    }
    assert availability[(str(template.id), "2030-01-06")] == 0
    assert availability[(str(later.id), "2030-01-07")] == 1


def test_reassign_to_another_zone_with_new_dropoff(organization, client, template):
    alex = builders.slot_zone(organization, "Alex", geodata=builders.ALEX_GEODATA)
    alex_slot = builders.slot_template(alex, day_of_week=0, start="12:00")
    builders.book(client, template, builders.SUNDAY, dropoffLat=52.505, dropoffLng=13.38)
    body = {"deliverySlotTemplateId": str(alex_slot.id), "deliverySlotDate": "2030-01-06"}

    assert_error(
        client.put(slot_path(), body, format="json"),
        400,
        "Dropoff location is outside the delivery zone",
    )
    response = client.put(
        slot_path(),
        {**body, "dropoffLat": builders.ALEX[0], "dropoffLng": builders.ALEX[1]},
        format="json",
    )
    assert response.status_code == 200, response.content
    order = Order.objects.get()
    assert (order.zone_id, order.dropoff_lat, order.dropoff_lng) == (alex.id, *builders.ALEX)
    assert client.get(f"{ORDERS}/SO-1001").json()["assignmentZoneId"] == str(alex.id)


def test_reassign_to_the_same_slot_changes_nothing(client, template):
    builders.book(client, template, builders.SUNDAY)
    body = {"deliverySlotTemplateId": str(template.id), "deliverySlotDate": "2030-01-06"}
    assert client.put(slot_path(), body, format="json").status_code == 200
    assert booked(template) == 1


def test_reassign_to_a_full_slot_keeps_the_old_booking(client, zone, template):
    small = builders.slot_template(zone, day_of_week=0, start="12:00", capacity=1)
    builders.book(client, small, builders.SUNDAY, ref="FIRST")
    builders.book(client, template, builders.SUNDAY)
    body = {"deliverySlotTemplateId": str(small.id), "deliverySlotDate": "2030-01-06"}

    assert_error(client.put(slot_path(), body, format="json"), 400, "Delivery slot is full")
    assert (booked(template), booked(small)) == (1, 1)
    assert SlotBooking.objects.get(order__external_ref="SO-1001").template_id == template.id


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        (
            {
                "deliverySlotTemplateId": "5f1c0a8e-0000-4000-8000-000000000000",
                "deliverySlotDate": "2030-01-07",
            },
            404,
            "Slot not found",
        ),
        (
            {"deliverySlotTemplateId": "TEMPLATE", "deliverySlotDate": "2030-01-07"},
            400,
            "Delivery slot date does not match the slot's day of week",
        ),
        (
            {"deliverySlotTemplateId": "TEMPLATE", "deliverySlotDate": "2029-12-30"},
            400,
            "Booking cutoff has passed for this slot",
        ),
        (
            {
                "deliverySlotTemplateId": "TEMPLATE",
                "deliverySlotDate": "2030-01-13",
                "dropoffLat": builders.HAMBURG[0],
                "dropoffLng": builders.HAMBURG[1],
            },
            400,
            "Dropoff location is outside the delivery zone",
        ),
        ({"deliverySlotDate": "2030-01-13"}, 400, ["deliverySlotTemplateId required"]),
        (
            {
                "deliverySlotTemplateId": "TEMPLATE",
                "deliverySlotDate": "2030-01-13",
                "dropoffLat": 52.5,
            },
            400,
            ["dropoffLat and dropoffLng must be given together"],
        ),
    ],
)
def test_reassign_runs_the_checks_of_creation(client, template, body, status, message):
    builders.book(client, template, builders.SUNDAY)
    body = {key: str(template.id) if value == "TEMPLATE" else value for key, value in body.items()}
    assert_error(client.put(slot_path(), body, format="json"), status, message)
    assert booked(template) == 1


def test_reassign_of_an_unknown_order_is_404(client, template):
    body = {"deliverySlotTemplateId": str(template.id), "deliverySlotDate": "2030-01-06"}
    assert_error(client.put(slot_path("NOPE"), body, format="json"), 404, "Order not found")


# A failed order is re-attempted instead (tests/couriers/test_reattempt.py).
@pytest.mark.parametrize("finish", [builders.order_deliver, "cancel"])
def test_reassign_of_an_order_in_a_terminal_status_is_409(client, template, finish):
    builders.book(client, template, builders.SUNDAY)
    order = Order.objects.get()
    if finish == "cancel":
        client.post(f"{ORDERS}/SO-1001/cancel", format="json")
    else:
        finish(order)
    status = Order.objects.get().status
    body = {"deliverySlotTemplateId": str(template.id), "deliverySlotDate": "2030-01-13"}
    assert_error(
        client.put(slot_path(), body, format="json"),
        409,
        f"Order SO-1001 cannot be rescheduled in status {status}",
    )


# ----- cancel -----


def test_cancel_frees_the_slot_and_emits_slots_updated(organization, client, zone, template):
    builders.book(client, template, builders.SUNDAY)
    before = len(builders.events_named("erp.slots.updated", organization))

    response = client.post(
        f"{ORDERS}/SO-1001/cancel", {"reason": "Customer changed mind"}, format="json"
    )

    assert response.status_code == 200, response.content
    assert response.json()["status"] == "cancelled"
    assert response.json()["deliverySlotTemplateId"] == str(template.id)  # the slot it had
    assert booked(template) == 0
    assert SlotBooking.objects.get().released_at is not None
    events = builders.events_named("erp.slots.updated", organization)
    # Coalesced per hour: the same open event carries the newest availability.
    assert len(events) == before or len(events) == before + 1
    payload = events[-1].payload
    assert payload["polygon_id"] == str(zone.id)
    assert {
        "date": "2030-01-06",
        "templateId": str(template.id),
        "capacity": 3,
        "booked": 0,
        "available": 3,
    } in payload["availability"]
    assert Order.objects.get().status_events.last().reason == "Customer changed mind"


def test_cancel_without_a_body(client, template):
    builders.book(client, template, builders.SUNDAY)
    assert client.post(f"{ORDERS}/SO-1001/cancel").status_code == 200


@pytest.mark.parametrize("body", ["[]", "0", "false", '""'])
def test_cancel_with_a_body_that_is_not_an_object_is_400(client, template, body):
    builders.book(client, template, builders.SUNDAY)

    response = client.post(f"{ORDERS}/SO-1001/cancel", body, content_type="application/json")

    assert_error(response, 400)
    assert Order.objects.get().status == "pending"


def test_cancel_with_a_null_body_is_a_cancel_without_a_reason(client, template):
    builders.book(client, template, builders.SUNDAY)
    response = client.post(f"{ORDERS}/SO-1001/cancel", "null", content_type="application/json")
    assert response.status_code == 200, response.content


def test_cancelling_twice_is_409_and_frees_nothing_more(client, template):
    builders.book(client, template, builders.SUNDAY, ref="KEEP")
    builders.book(client, template, builders.SUNDAY)
    client.post(f"{ORDERS}/SO-1001/cancel", format="json")
    assert_error(
        client.post(f"{ORDERS}/SO-1001/cancel", format="json"),
        409,
        "Order SO-1001 cannot be cancelled in status cancelled",
    )
    assert booked(template) == 1


def test_a_cancelled_orders_place_can_be_booked_again(client, template):
    for n in range(3):
        builders.book(client, template, builders.SUNDAY, ref=f"SO-{n}")
    assert_error(
        builders.book(client, template, builders.SUNDAY, ref="SO-9"), 400, "Delivery slot is full"
    )
    client.post(f"{ORDERS}/SO-1/cancel", format="json")
    assert builders.book(client, template, builders.SUNDAY, ref="SO-9").status_code == 201


def test_a_failed_order_frees_its_slot(client, template):
    builders.book(client, template, builders.SUNDAY)
    builders.order_fail(Order.objects.get())
    assert booked(template) == 0
    assert Order.objects.get().status == OrderStatus.FAILED


def test_releasing_an_order_without_a_slot_is_a_no_op(organization):
    builders.slot_zone(organization, "Partner zone", purpose="dispatch")
    client = builders.partner_client(organization)
    assert builders.create_order(client, externalRef="P-1").status_code == 201
    order = Order.objects.get()
    booking_services.slot_booking_release(order=order)
    booking_services.slot_booking_release(order=order)
    assert not SlotBooking.objects.exists()
