"""Stop events from the courier app (docs/contract.md "Couriers"): through the one status machine,
per-driver Idempotency-Key, late events, proof checks at the door."""

import base64
import datetime as dt
import io
import os
import re
import struct
import zlib

import pytest
from django.core.files.storage import storages
from django.db import connection
from django.test.utils import CaptureQueriesContext
from PIL import Image

from couriers.models import CourierEvent, CourierIdempotencyKey, StopProof
from couriers.tasks import expire_idempotency_keys
from dispatch.models import DispatchPolicy
from integrations.models import Order
from tests import builders
from tests.conftest import assert_error
from tests.couriers.conftest import BARCODE, NOW
from tests.couriers.test_photos import image_bytes, upload

pytestmark = pytest.mark.django_db


def events_path(order) -> str:
    return f"/api/courier/orders/{order.id}/events"


def send(client, order, body: dict, **headers):
    return client.post(events_path(order), body, format="json", **headers)


def walk(client, order, *types: str):
    for event_type in types:
        response = send(client, order, {"type": event_type})
        assert response.status_code == 200, response.content
    return response


def png_data_url(size=(120, 40)) -> str:
    out = io.BytesIO()
    Image.new("L", size, 255).save(out, "PNG")
    return "data:image/png;base64," + base64.b64encode(out.getvalue()).decode()


def truncated_png() -> bytes:
    """A PNG whose header reads well and whose pixels stop half way."""
    out = io.BytesIO()
    Image.frombytes("L", (200, 200), os.urandom(200 * 200)).save(out, "PNG")
    return out.getvalue()[: len(out.getvalue()) // 2]


def altered_png() -> bytes:
    """A whole PNG with one byte of its pixel data changed, as a damaged upload would be."""
    out = io.BytesIO()
    Image.frombytes("L", (200, 200), os.urandom(200 * 200)).save(out, "PNG")
    data = bytearray(out.getvalue())
    data[data.index(b"IDAT") + 100] ^= 0x01
    return bytes(data)


def png_without_pixels() -> bytes:
    """A PNG of a header and an end, every checksum right, and no pixel data between them."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", 120, 40, 8, 0, 0, 0, 0)  # 120x40, 8-bit grey
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IEND", b"")


def flat_png(size) -> bytes:
    """A PNG of one colour: a few KB, however many pixels it announces."""
    out = io.BytesIO()
    Image.new("1", size, 1).save(out, "PNG")
    return out.getvalue()


def status_of(order) -> str:
    return Order.objects.get(pk=order.pk).status


def test_a_stop_is_walked_to_delivered_with_proof(courier, route_orders, organization):
    order = route_orders[1]
    walk(courier, order, "picked_up", "in_transit", "arrived")
    photo_id = upload(courier, image_bytes()).json()["photoId"]

    response = send(
        courier,
        order,
        {
            "type": "delivered",
            "at": (NOW - dt.timedelta(minutes=1)).isoformat(),
            "location": {"lat": 52.5219, "lng": 13.4132, "accuracyM": 5},
            "proof": {
                "recipientName": "Ada Lovelace",
                "barcode": BARCODE,
                "signature": png_data_url(),
                "photoIds": [photo_id],
            },
            "note": "Handed over",
        },
    )

    assert response.status_code == 200, response.content
    stop = response.json()
    assert (stop["orderId"], stop["sequence"], stop["status"]) == (str(order.id), 2, "delivered")
    assert stop["expectedBarcode"] == BARCODE
    proof = StopProof.objects.get(order=order)
    assert (proof.status, proof.recipient_name, proof.barcode, proof.note) == (
        "delivered",
        "Ada Lovelace",
        BARCODE,
        "Handed over",
    )
    assert proof.at == NOW - dt.timedelta(minutes=1)
    assert proof.signature_name.endswith(".png")
    assert [str(photo.id) for photo in proof.photos.all()] == [photo_id]
    assert list(CourierEvent.objects.filter(order=order).values_list("type", flat=True)) == [
        "picked_up",
        "in_transit",
        "arrived",
        "delivered",
    ]
    [event] = builders.events_named("order.delivered", organization)
    assert event.payload["proof"] == {
        "recipientName": "Ada Lovelace",
        "signature": True,
        "photos": 1,
        "location": {"lat": 52.5219, "lng": 13.4132, "accuracyM": 5.0},
    }
    assert event.payload["occurredAt"].startswith("2026-11-26T08:59:00")


def test_arrived_changes_no_status(courier, route_orders):
    order = route_orders[0]

    response = send(courier, order, {"type": "arrived"})

    assert response.status_code == 200
    assert status_of(order) == "assigned"
    assert CourierEvent.objects.get(order=order).type == "arrived"


def test_another_drivers_order_is_not_found(courier, route_orders, organization, zone):
    other_driver = builders.driver(organization, "Other Driver")
    theirs = builders.order_row(organization, zone=zone, external_ref="THEIRS")
    builders.advance(theirs, "assigned", driver=other_driver)
    unassigned = builders.order_row(organization, zone=zone, external_ref="NOBODY")

    for order in (theirs, unassigned):
        assert_error(send(courier, order, {"type": "picked_up"}), 404, "Order not found")
    assert_error(
        courier.post("/api/courier/orders/not-a-uuid/events", {"type": "picked_up"}, format="json"),
        404,
        "Order not found",
    )
    assert status_of(theirs) == "assigned"


def test_an_order_not_theirs_is_not_found_whatever_the_key(
    courier, route_orders, organization, zone, other_organization
):
    """With an Idempotency-Key too, and before the key is looked at: a key the driver used on
    another order is not a 422 here, and a 404 keeps no key."""
    other_driver = builders.driver(organization, "Other Driver")
    theirs = builders.order_row(organization, zone=zone, external_ref="THEIRS")
    builders.advance(theirs, "assigned", driver=other_driver)
    stranger = builders.order_row(other_organization, external_ref="SO-1")
    first = send(courier, route_orders[0], {"type": "picked_up"}, HTTP_IDEMPOTENCY_KEY="k")
    assert first.status_code == 200

    for order in (theirs, stranger):
        for key in ("k", "new"):
            response = send(courier, order, {"type": "picked_up"}, HTTP_IDEMPOTENCY_KEY=key)
            assert_error(response, 404, "Order not found")
    response = courier.post(
        "/api/courier/orders/not-a-uuid/events",
        {"type": "picked_up"},
        format="json",
        HTTP_IDEMPOTENCY_KEY="k",
    )
    assert_error(response, 404, "Order not found")
    assert list(CourierIdempotencyKey.objects.values_list("key", flat=True)) == ["k"]
    assert status_of(theirs) == "assigned"


def test_an_event_with_a_key_reads_the_order_once(courier, route_orders):
    """With a new key, the order, its stop and the proof policy are read once, locked, with the
    event: no check before it (the event's own read answers 404 and gives the key back)."""
    with CaptureQueriesContext(connection) as queries:
        response = send(courier, route_orders[0], {"type": "picked_up"}, HTTP_IDEMPOTENCY_KEY="k")

    assert response.status_code == 200, response.content
    sql = [q["sql"] for q in queries.captured_queries]
    (stop_read,) = [q for q in sql if "stop_sequence" in q]
    assert "FOR UPDATE" in stop_read
    order_reads = [
        q for q in sql if re.search(r'^\s*SELECT .*FROM "?integrations_order\b', q, re.S)
    ]
    assert order_reads == [stop_read]


def test_an_order_not_theirs_is_not_found_before_the_key_is_replayed_or_refused(
    courier, route_orders, organization, zone
):
    """A used key replays on the driver's own order only, and a malformed key's 400 comes after
    the order's 404, as before a new key's event reads the order itself."""
    theirs = builders.order_row(organization, zone=zone, external_ref="THEIRS")
    builders.advance(theirs, "assigned", driver=builders.driver(organization, "Other Driver"))
    body = {"type": "picked_up"}
    assert send(courier, route_orders[0], body, HTTP_IDEMPOTENCY_KEY="k").status_code == 200

    replayed = send(courier, route_orders[0], body, HTTP_IDEMPOTENCY_KEY="k")
    assert replayed.status_code == 200
    assert replayed.headers["Idempotent-Replayed"] == "true"
    for key in ("k", "bad\u0001key"):
        assert_error(send(courier, theirs, body, HTTP_IDEMPOTENCY_KEY=key), 404, "Order not found")
    assert_error(
        send(courier, route_orders[0], body, HTTP_IDEMPOTENCY_KEY="bad\u0001key"),
        400,
        "Idempotency-Key must be 1 to 255 printable ASCII characters",
    )


def test_another_organizations_order_is_not_found(courier, route_orders, other_organization):
    stranger = builders.order_row(other_organization, external_ref="SO-1")

    assert_error(send(courier, stranger, {"type": "picked_up"}), 404, "Order not found")


def test_an_ended_token_is_refused_at_once(driver, route_orders):
    client = builders.courier_client(driver)
    assert send(client, route_orders[0], {"type": "picked_up"}).status_code == 200

    builders.courier_token(driver)  # a new token ends the old one

    assert_error(
        send(client, route_orders[0], {"type": "in_transit"}), 401, "Invalid or missing token"
    )
    assert status_of(route_orders[0]) == "picked_up"


def test_a_replayed_event_is_answered_once(courier, route_orders, driver, organization):
    order = route_orders[0]
    body = {"type": "picked_up"}

    first = send(courier, order, body, HTTP_IDEMPOTENCY_KEY="evt-1")
    again = send(courier, order, body, HTTP_IDEMPOTENCY_KEY="evt-1")

    assert first.status_code == again.status_code == 200
    assert again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true"
    assert CourierEvent.objects.filter(order=order).count() == 1
    assert len(builders.events_named("order.picked_up", organization)) == 1
    # Without the key, the same event again is a second event: refused by the status machine.
    assert_error(
        send(courier, order, body), 409, "Order SO-1 cannot be picked up in status picked_up"
    )
    # The same key with another body: 422.
    assert_error(
        send(courier, order, {"type": "in_transit"}, HTTP_IDEMPOTENCY_KEY="evt-1"),
        422,
        "Idempotency-Key was already used with a different request body",
    )
    assert CourierIdempotencyKey.objects.get().driver == driver


def test_idempotency_keys_are_the_drivers_own(organization, zone, route_orders, courier):
    other = builders.driver(organization, "Other Driver")
    theirs = builders.order_row(organization, zone=zone, external_ref="THEIRS")
    builders.advance(theirs, "assigned", driver=other)
    other_courier = builders.courier_client(other)

    mine = send(courier, route_orders[0], {"type": "picked_up"}, HTTP_IDEMPOTENCY_KEY="k")
    their = send(other_courier, theirs, {"type": "picked_up"}, HTTP_IDEMPOTENCY_KEY="k")

    assert mine.status_code == their.status_code == 200
    assert "Idempotent-Replayed" not in their
    assert status_of(theirs) == "picked_up"


def test_a_late_event_is_applied_with_when_it_happened(clock, courier, route_orders):
    order = route_orders[0]
    happened = NOW - dt.timedelta(hours=23, minutes=59)

    response = send(courier, order, {"type": "picked_up", "at": happened.isoformat()})

    assert response.status_code == 200, response.content
    event = CourierEvent.objects.get(order=order)
    assert (event.at, event.received_at) == (happened, NOW)


@pytest.mark.parametrize(
    ("offset", "message"),
    [
        (-dt.timedelta(hours=24, seconds=1), "at must not be more than 24 hours ago"),
        (dt.timedelta(minutes=2, seconds=1), "at must not be more than 2 minutes ahead"),
    ],
)
def test_an_event_too_late_or_ahead_is_refused(courier, route_orders, offset, message):
    order = route_orders[0]

    response = send(courier, order, {"type": "picked_up", "at": (NOW + offset).isoformat()})

    assert_error(response, 400, [message], code="event_time_out_of_range")
    assert status_of(order) == "assigned"


def test_a_barcode_that_does_not_match_is_refused(courier, route_orders):
    order = route_orders[1]
    walk(courier, order, "picked_up", "in_transit")

    wrong = send(courier, order, {"type": "delivered", "proof": {"barcode": "999"}})
    missing = send(courier, order, {"type": "delivered"})

    assert_error(wrong, 400, ["Barcode does not match"], code="barcode_mismatch")
    assert_error(missing, 400, ["Barcode does not match"])
    assert status_of(order) == "in_transit"
    assert not StopProof.objects.exists()


def test_cash_on_delivery_needs_the_cash_collected(courier, route_orders):
    order = route_orders[2]
    walk(courier, order, "picked_up", "in_transit")

    refused = send(courier, order, {"type": "delivered"})
    delivered = send(courier, order, {"type": "delivered", "cashCollected": 24.9})

    assert_error(refused, 400, ["Cash collected is required"], code="cash_collected_required")
    assert delivered.status_code == 200, delivered.content
    assert str(StopProof.objects.get(order=order).cash_collected) == "24.90"


def test_the_policy_asks_for_a_signature_and_a_photo(courier, route_orders, organization):
    DispatchPolicy.objects.create(
        organization=organization, require_signature=True, require_photo=True
    )
    order = route_orders[0]
    walk(courier, order, "picked_up", "in_transit")

    assert_error(send(courier, order, {"type": "delivered"}), 400, ["Signature is required"])
    with_signature = {"type": "delivered", "proof": {"signature": png_data_url()}}
    assert_error(send(courier, order, with_signature), 400, ["Photo is required"])
    photo_id = upload(courier, image_bytes()).json()["photoId"]
    with_signature["proof"]["photoIds"] = [photo_id]
    assert send(courier, order, with_signature).status_code == 200


@pytest.mark.parametrize(
    "signature",
    [
        "data:image/jpeg;base64," + base64.b64encode(image_bytes("JPEG")).decode(),
        "data:image/png;base64," + base64.b64encode(image_bytes("JPEG")).decode(),
        "data:image/png;base64,not-base64!!",
        "a signature",
        "data:image/png;base64," + base64.b64encode(truncated_png()).decode(),
        "data:image/png;base64," + base64.b64encode(altered_png()).decode(),
        "data:image/png;base64," + base64.b64encode(png_without_pixels()).decode(),
        # Beyond a 4K screen's pixels: refused before its pixels are decoded into memory.
        "data:image/png;base64," + base64.b64encode(flat_png((4000, 2100))).decode(),
    ],
    ids=[
        "jpeg-url",
        "jpeg-as-png",
        "bad-base64",
        "text",
        "truncated-png",
        "altered-png",
        "png-without-pixels",
        "over-4k-pixels",
    ],
)
def test_a_signature_must_be_a_png_data_url(courier, route_orders, signature):
    order = route_orders[0]
    walk(courier, order, "picked_up", "in_transit")

    response = send(courier, order, {"type": "delivered", "proof": {"signature": signature}})

    assert_error(response, 400, code="signature_invalid")
    assert status_of(order) == "in_transit"


def test_a_signature_is_kept_as_the_courier_sent_it(courier, route_orders):
    order = route_orders[0]
    walk(courier, order, "picked_up", "in_transit")
    signature = png_data_url()

    response = send(courier, order, {"type": "delivered", "proof": {"signature": signature}})

    assert response.status_code == 200, response.content
    proof = StopProof.objects.get(order=order)
    with storages["proofs"].open(proof.signature_name) as stored:
        assert stored.read() == base64.b64decode(signature.partition(",")[2])


def test_a_delivery_reads_its_order_once_and_takes_no_savepoint(courier, route_orders):
    order = route_orders[0]
    walk(courier, order, "picked_up", "in_transit")
    body = {"type": "delivered", "proof": {"recipientName": "Ada", "signature": png_data_url()}}

    with CaptureQueriesContext(connection) as queries:
        assert send(courier, order, body).status_code == 200

    statements = [query["sql"].lstrip() for query in queries]
    order_reads = [
        sql for sql in statements if sql.startswith("SELECT") and "integrations_order" in sql
    ]
    assert len(order_reads) == 1, order_reads  # with its stop, locked
    # One: the view's transaction, a savepoint inside the test's own.
    assert sum(sql.startswith("SAVEPOINT") for sql in statements) == 1, statements


def test_a_signature_over_200_kb_is_refused(courier, route_orders):
    order = route_orders[0]
    walk(courier, order, "picked_up", "in_transit")
    noise = Image.frombytes("L", (600, 600), os.urandom(600 * 600))
    out = io.BytesIO()
    noise.save(out, "PNG")
    assert len(out.getvalue()) > 200 * 1024
    big = "data:image/png;base64," + base64.b64encode(out.getvalue()).decode()

    assert_error(
        send(courier, order, {"type": "delivered", "proof": {"signature": big}}),
        400,
        ["proof.signature must be a PNG data URL of at most 200 KB"],
    )
    assert status_of(order) == "in_transit"


def test_a_failure_needs_its_reason(courier, route_orders, organization):
    order = route_orders[0]
    walk(courier, order, "picked_up")

    refused = send(courier, order, {"type": "failed"})
    failed = send(
        courier, order, {"type": "failed", "failureReason": "recipient_absent", "note": "No one"}
    )

    assert_error(refused, 400, ["failureReason is required for status failed"])
    assert failed.status_code == 200, failed.content
    stored = Order.objects.get(pk=order.pk)
    assert (stored.status, stored.failure_reason) == ("failed", "recipient_absent")
    proof = StopProof.objects.get(order=order)
    assert (proof.status, proof.failure_reason, proof.note) == (
        "failed",
        "recipient_absent",
        "No one",
    )
    [event] = builders.events_named("order.failed", organization)
    assert event.payload["failureReason"] == "recipient_absent"


def test_events_go_through_the_status_machine(courier, route_orders):
    order = route_orders[0]

    assert_error(
        send(courier, order, {"type": "delivered"}),
        409,
        "Order SO-1 cannot be delivered in status assigned",
    )
    walk(courier, order, "picked_up", "in_transit", "delivered")
    assert_error(
        send(courier, order, {"type": "arrived"}),
        409,
        "Order SO-1 cannot be marked arrived in status delivered",
    )


def test_another_drivers_photo_cannot_be_named(courier, route_orders, organization):
    other = builders.courier_client(builders.driver(organization, "Other Driver"))
    photo_id = upload(other, image_bytes()).json()["photoId"]
    order = route_orders[0]
    walk(courier, order, "picked_up", "in_transit")

    response = send(courier, order, {"type": "delivered", "proof": {"photoIds": [photo_id]}})

    assert_error(response, 400, [f"photoIds has an unknown photo: {photo_id}"])


def test_a_bad_body_lists_its_problems(courier, route_orders):
    response = send(
        courier,
        route_orders[0],
        {"type": "teleported", "location": {"lat": 91, "lng": "x"}, "failureReason": "bored"},
    )

    assert response.status_code == 400
    messages = response.json()["message"]
    assert len(messages) == 4, messages


def test_drivers_idempotency_keys_expire_after_24_hours(clock, courier, route_orders):
    send(courier, route_orders[0], {"type": "picked_up"}, HTTP_IDEMPOTENCY_KEY="evt-1")
    clock.shift(dt.timedelta(hours=23))
    assert expire_idempotency_keys() == 0

    clock.shift(dt.timedelta(hours=1, seconds=1))

    assert expire_idempotency_keys() == 1
    assert not CourierIdempotencyKey.objects.exists()
