"""The courier web app in a real browser at phone size: headless Chromium from Debian's packages,
via Playwright (the set-up is tests/core/browser.py), against a live server.

The courier signs in by the admin's link, delivers with a signature drawn by the mouse and a
photo, fails a stop with a reason; then takes events with the browser offline, which queue and
arrive once each, in order, when the network returns.

With UPDATE_SCREENSHOTS=1 (`make screenshots`) the app is saved to docs/courier.png (the README
shows it); otherwise the screenshot goes to the test's temporary folder.
"""

import datetime as dt
import io
import os
from decimal import Decimal
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from django.conf import settings as django_settings
from django.utils import timezone
from PIL import Image
from playwright.sync_api import expect

from couriers import views
from couriers.admin import SIGN_IN_PATH
from couriers.models import CourierEvent, CourierIdempotencyKey, StopProof
from dispatch.models import DriverZone
from integrations.models import Order, OrderStatusEvent
from tests import builders
from tests.core.browser import Watched

SCREENSHOT = Path(django_settings.BASE_DIR) / "docs" / "courier.png"
PHONE = {
    "viewport": {"width": 390, "height": 844},
    "device_scale_factor": 2,
    "is_mobile": True,
    "has_touch": True,
    "locale": "en-GB",
    # Not the zone's time zone: the app must show zone time whatever the phone's setting.
    "timezone_id": "America/Los_Angeles",
}
BERLIN = ZoneInfo("Europe/Berlin")
BARCODE = "4006381333931"
WAIT_MS = 15_000
#: the stops in sequence: street, recipient, what else the order carries
STOPS = [
    ("Torstraße 49", "Ada Lovelace", {}),
    ("Karl-Liebknecht-Straße 13", "Grace Hopper", {"expected_barcode": BARCODE}),
    ("Rosenthaler Straße 40", "Emmy Noether", {"cod_amount": Decimal("24.90")}),
    ("Alte Schönhauser Straße 2", "Lise Meitner", {}),
]


@pytest.fixture(autouse=True)
def _quick_retries(monkeypatch):
    """The queue is retried every half second, so offline tries happen within the test."""
    monkeypatch.setattr(views, "SCRIPT_TIMINGS", {**views.SCRIPT_TIMINGS, "retryMs": 500})


@pytest.fixture
def day_of_stops(transactional_db):
    """Four stops on Samira's committed route of today (Berlin time), from the last quarter
    hour: a plain one, one with a barcode to scan, one cash on delivery, one more."""
    organization = builders.organization("Acme Deliveries")
    zone = builders.zone_row(organization, timezone="Europe/Berlin")
    driver = builders.driver(organization, name="Samira Haddad")
    # She serves the zone, so her day is Berlin's (contract "Couriers": the driver's zone time);
    # serving none, it would be UTC's, another date from 23:00 UTC on.
    DriverZone.objects.create(driver=driver, zone=zone)
    now = timezone.now().replace(second=0, microsecond=0)
    start = now - dt.timedelta(minutes=now.minute % 15)
    orders = [
        builders.order_row(
            organization,
            zone=zone,
            window=(start, start + dt.timedelta(hours=2)),
            external_ref=f"SO-10{number}",
            dropoff_address=f"{street}, 10119 Berlin",
            dropoff_lat=builders.ALEX[0] + number / 1000,
            dropoff_lng=builders.ALEX[1],
            recipient_name=name,
            recipient_phone="+491701234567",
            **fields,
        )
        for number, (street, name, fields) in enumerate(STOPS, start=1)
    ]
    day = timezone.localtime(now, BERLIN).date()
    builders.committed_route(driver, orders, day=day, zone=zone, start=start)
    return driver, orders


def png_bytes(size=(640, 480)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (180, 120, 60)).save(out, "PNG")
    return out.getvalue()


def signed_in(browser, live_server, driver):
    """A phone with the app opened by the admin's sign-in link."""
    context = browser.new_context(**PHONE)
    page = context.new_page()
    watched = Watched(page)
    token = builders.courier_token(driver)
    page.goto(f"{live_server.url}{SIGN_IN_PATH}{token}")
    return context, page, watched


def stop_card(page, order):
    return page.locator(f'li[data-order-id="{order.id}"]')


def sign(page):
    box = page.locator("#signature-pad").bounding_box()
    x, y = box["x"] + 30, box["y"] + box["height"] * 0.6
    page.mouse.move(x, y)
    page.mouse.down()
    for step in range(1, 12):
        page.mouse.move(x + step * 22, y - (step % 3) * 18, steps=2)
    page.mouse.up()


def status_path(order) -> list[tuple[str, str]]:
    return list(
        OrderStatusEvent.objects.filter(order=order)
        .order_by("at", "id")
        .values_list("from_status", "to_status")
    )


def assert_stayed_home(watched, live_server):
    assert watched.errors == []
    assert [text for text in watched.console if "Content Security Policy" in text] == []
    assert watched.strangers(live_server.url) == []


def test_a_courier_delivers_with_proof_and_fails_with_a_reason(browser, live_server, day_of_stops):
    driver, orders = day_of_stops
    context, page, watched = signed_in(browser, live_server, driver)

    expect(page).to_have_url(f"{live_server.url}/courier/")  # the token left the address
    expect(page.locator("#route-summary")).to_contain_text("Samira Haddad")
    expect(page.locator("#stops > li")).to_have_count(4)
    first = stop_card(page, orders[0])
    stop = orders[0].plan_stops.get()
    eta = timezone.localtime(stop.eta, BERLIN).strftime("%H:%M")
    expect(first.locator(".eta")).to_have_text(eta)
    expect(first).to_contain_text("Torstraße 49, 10119 Berlin")
    expect(first).to_contain_text("Ada Lovelace")
    window = (
        f"Window {timezone.localtime(stop.window_start, BERLIN):%H:%M}"
        f"\u2013{timezone.localtime(stop.window_end, BERLIN):%H:%M}"
    )
    expect(first).to_contain_text(window)
    maps = first.get_by_role("link", name="Open in maps: Torstraße 49, 10119 Berlin")
    label = "Torstra%C3%9Fe%2049%2C%2010119%20Berlin"
    expect(maps).to_have_attribute(
        "href", f"geo:{stop.lat},{stop.lng}?q={stop.lat},{stop.lng}({label})"
    )
    expect(first.locator("button")).to_have_text(["Picked up", "Failed\u2026"])
    # Phone-sized: nothing wider than the screen, every button a thumb's size.
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    heights = page.locator("#stops button").evaluate_all("bs => bs.map(b => b.offsetHeight)")
    assert min(heights) >= 44

    first.get_by_role("button", name="Picked up").click()
    expect(first.locator(".status")).to_have_text("Picked up", timeout=WAIT_MS)
    first.get_by_role("button", name="On the way").click()
    expect(first.locator("button")).to_have_text(["Arrived", "Delivered\u2026", "Failed\u2026"])
    first.get_by_role("button", name="Delivered\u2026").click()

    expect(page.locator("#proof-title")).to_have_text("Deliver SO-101")
    expect(page.get_by_label("Received by")).to_have_value("Ada Lovelace")
    sign(page)
    page.locator("#photo-input").set_input_files(
        {"name": "door.png", "mimeType": "image/png", "buffer": png_bytes()}
    )
    expect(page.locator("#photo-list img")).to_have_count(1)
    page.get_by_label("Note (optional)").fill("Left with the recipient")
    page.get_by_role("button", name="Confirm delivery").click()

    expect(first.locator(".status")).to_have_text("Delivered", timeout=WAIT_MS)
    expect(page.locator("#queue-state")).to_have_text("All events sent", timeout=WAIT_MS)
    proof = StopProof.objects.get(order=orders[0])
    assert (proof.status, proof.recipient_name, proof.note) == (
        "delivered",
        "Ada Lovelace",
        "Left with the recipient",
    )
    assert proof.signature_name and proof.photos.count() == 1
    assert status_path(orders[0])[-3:] == [
        ("assigned", "picked_up"),
        ("picked_up", "in_transit"),
        ("in_transit", "delivered"),
    ]

    second = stop_card(page, orders[1])
    second.get_by_role("button", name="Failed\u2026").click()
    expect(page.locator("#proof-title")).to_have_text("Could not deliver SO-102")
    page.get_by_role("button", name="Confirm failure").click()
    expect(page.locator("#proof-error")).to_have_text("Choose why the delivery failed.")
    page.get_by_label("Recipient absent").check()
    page.get_by_role("button", name="Confirm failure").click()

    expect(second.locator(".status")).to_have_text("Failed", timeout=WAIT_MS)
    expect(second.locator("button")).to_have_count(0)
    expect(page.locator("#queue-state")).to_have_text("All events sent", timeout=WAIT_MS)
    failed = Order.objects.get(pk=orders[1].pk)
    assert (failed.status, failed.failure_reason) == ("failed", "recipient_absent")
    expect(page.locator("#route-summary")).to_contain_text("2 of 4 done")
    assert_stayed_home(watched, live_server)
    context.close()


def test_events_taken_offline_arrive_once_in_order(browser, live_server, day_of_stops, tmp_path):
    driver, orders = day_of_stops
    builders.advance(orders[0], "picked_up", "in_transit", "delivered")
    builders.advance(orders[1], "failed")
    context, page, watched = signed_in(browser, live_server, driver)
    cash_stop, last_stop = stop_card(page, orders[2]), stop_card(page, orders[3])
    expect(cash_stop.locator(".status")).to_have_text("To pick up")
    expect(cash_stop).to_contain_text("Collect cash: 24.90")

    context.set_offline(True)
    expect(page.locator("#network-state")).to_have_text("Offline")
    cash_stop.get_by_role("button", name="Picked up").click()
    expect(page.locator("#notice")).to_have_text("Picked up SO-103: queued, sent when back online")
    cash_stop.get_by_role("button", name="On the way").click()
    last_stop.get_by_role("button", name="Picked up").click()
    cash_stop.get_by_role("button", name="Delivered\u2026").click()
    expect(page.get_by_label("Cash collected (to collect: 24.90)")).to_have_value("24.90")
    sign(page)
    page.get_by_role("button", name="Confirm delivery").click()

    expect(cash_stop.locator(".status")).to_have_text("Delivered")
    expect(cash_stop.locator(".waiting")).to_have_text(
        "3 events waiting to be sent: Picked up, On the way, Delivered"
    )
    expect(page.locator("#queue-state")).to_have_text("4 events queued until online")
    page.wait_for_timeout(1500)  # the retry timer tries (and fails) offline meanwhile
    page.evaluate("window.scrollTo(0, 0)")
    screenshot = SCREENSHOT if os.environ.get("UPDATE_SCREENSHOTS") == "1" else tmp_path / "c.png"
    page.screenshot(path=str(screenshot))
    assert Order.objects.get(pk=orders[2].pk).status == "assigned"
    assert not CourierEvent.objects.filter(order__in=orders[2:]).exists()

    # Meanwhile the dispatcher cancels the last order: its queued event is refused and shown.
    builders.advance(orders[3], "cancelled")
    # The first answer of the service is lost on the way back: the app sends the event again,
    # with the same Idempotency-Key, and the service answers from its record.
    sent_keys = []

    def lose_first_answer(route):
        sent_keys.append(route.request.headers["idempotency-key"])
        if len(sent_keys) == 1:
            route.fetch()
            route.abort("failed")
        else:
            route.continue_()

    page.route("**/api/courier/orders/*/events", lose_first_answer)
    context.set_offline(False)

    expect(page.locator("#queue-state")).to_have_text("All events sent", timeout=WAIT_MS)
    expect(cash_stop.locator(".status")).to_have_text("Delivered")
    expect(cash_stop.locator(".waiting")).to_have_count(0)
    expect(page.locator("#alerts .alert p")).to_have_text(
        "Not sent: Picked up SO-104: Order SO-104 cannot be picked up in status cancelled"
    )
    assert status_path(orders[2]) == [
        ("", "pending"),
        ("pending", "assigned"),
        ("assigned", "picked_up"),
        ("picked_up", "in_transit"),
        ("in_transit", "delivered"),
    ]
    events = list(CourierEvent.objects.filter(order=orders[2]).order_by("received_at", "id"))
    assert [event.type for event in events] == ["picked_up", "in_transit", "delivered"]
    assert events[0].at < events[1].at < events[2].at < events[0].received_at
    assert StopProof.objects.get(order=orders[2]).cash_collected == Decimal("24.90")
    # Sent in the order taken (SO-104's picked up third), one key each, the first twice; the
    # refused one keeps no record.
    assert len(sent_keys) == 5 and sent_keys[0] == sent_keys[1] and len(set(sent_keys)) == 4
    recorded = CourierIdempotencyKey.objects.filter(driver=driver)
    assert sorted(recorded.values_list("key", "response_status")) == sorted(
        (key, 200) for key in (sent_keys[1], sent_keys[2], sent_keys[4])
    )
    assert Order.objects.get(pk=orders[3].pk).status == "cancelled"
    expect(last_stop.locator(".status")).to_have_text("Cancelled", timeout=WAIT_MS)
    assert_stayed_home(watched, live_server)
    assert screenshot.stat().st_size > 10_000
    context.close()


def test_the_app_opens_offline_with_the_route_it_kept(browser, live_server, day_of_stops, caplog):
    driver, orders = day_of_stops
    context, page, watched = signed_in(browser, live_server, driver)
    expect(page.locator("#stops > li")).to_have_count(4)
    page.wait_for_function("navigator.serviceWorker.controller !== null")
    served = len([r for r in caplog.records if r.getMessage().startswith("GET /courier ")])
    assert served >= 1

    context.set_offline(True)
    page.reload()

    expect(page.locator("#network-state")).to_have_text("Offline")
    expect(page.locator("#stops > li")).to_have_count(4)
    assert len([r for r in caplog.records if r.getMessage().startswith("GET /courier ")]) == served
    stop_card(page, orders[0]).get_by_role("button", name="Picked up").click()
    expect(page.locator("#queue-state")).to_have_text("1 event queued until online")

    context.set_offline(False)
    expect(page.locator("#queue-state")).to_have_text("All events sent", timeout=WAIT_MS)
    assert Order.objects.get(pk=orders[0].pk).status == "picked_up"
    assert_stayed_home(watched, live_server)
    context.close()
