"""The tracking page in a real browser: headless Chromium from Debian's packages, via Playwright
(the set-up is tests/core/browser.py).

The page is opened against a live server, the order moves through the status machine with
`order_transition`, and the page must follow by itself.

With UPDATE_SCREENSHOTS=1 (`make screenshots`) the page on the way is saved to docs/tracking.png
(the README shows it); otherwise the screenshot goes to the test's temporary folder.
"""

import datetime as dt
import os
import time
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from playwright.sync_api import Browser, expect
from time_machine import travel

from tests import builders
from tests.core.browser import Watched, launch
from tests.tracking.conftest import make_order

SCREENSHOT = Path(django_settings.BASE_DIR) / "docs" / "tracking.png"
#: a phone: the page is for recipients following a delivery on theirs
PHONE = {
    "viewport": {"width": 390, "height": 844},
    "device_scale_factor": 2,
    "is_mobile": True,
    "has_touch": True,
    "locale": "en-GB",
    # Not the zone's time zone: the page must show zone time whatever the phone's setting.
    "timezone_id": "America/Los_Angeles",
}
UPDATE_TIMEOUT_MS = 10_000
#: the order is created at 09:02 Berlin time on the morning of its delivery window (10:00-12:00)
CREATED = dt.datetime(2031, 3, 4, 8, 2, tzinfo=dt.UTC)


@pytest.fixture
def browser_without_javascript(playwright) -> Browser:
    """JavaScript off in Blink itself, so <noscript> renders as for a reader who disabled it."""
    launched = launch(playwright, "--blink-settings=scriptEnabled=false")
    yield launched
    launched.close()


@pytest.fixture
def tracked_order(transactional_db, settings):
    settings.TRACKING_POLL_INTERVAL_SECONDS = 0.25
    organization = builders.organization("Acme Deliveries")
    with travel(CREATED, tick=False):
        order = make_order(
            organization, zone=builders.zone_row(organization, timezone="Europe/Berlin")
        )
    return order, builders.driver(organization, name="Samira Haddad")


def advance_at(order, minutes_after_creation: int, *statuses: str, driver=None):
    """Moves the order as `advance` does, at a moment of the delivery morning."""
    with travel(CREATED + dt.timedelta(minutes=minutes_after_creation), tick=False):
        return builders.advance(order, *statuses, driver=driver)


def test_page_follows_the_order_without_a_reload(browser, live_server, tracked_order, tmp_path):
    order, driver = tracked_order
    context = browser.new_context(**PHONE)
    page = context.new_page()
    watched = Watched(page)
    url = f"{live_server.url}/track/{order.tracking_token}"

    page.goto(url)
    title = page.locator("#status-title")
    expect(title).to_have_text("Order received")
    expect(page.locator("#live-note")).to_have_text("This page updates by itself.")
    expect(page.locator("#window")).to_have_text("Tuesday 4 March, 10:00\u201312:00")
    expect(page.locator("#driver-row")).to_be_hidden()
    page.evaluate("window.__sameDocument = true")

    advance_at(order, 38, "dispatching", "assigned", driver=driver)
    expect(title).to_have_text("Driver assigned", timeout=UPDATE_TIMEOUT_MS)
    expect(page.locator("#status-description")).to_have_text(
        "Samira will pick up your package soon."
    )
    expect(page.locator("#driver-name")).to_have_text("Samira")
    expect(page.locator("#timeline li")).to_have_count(3)
    expect(page.locator('#steps li[aria-current="step"]')).to_have_text("Driver assigned")

    advance_at(order, 53, "picked_up")
    advance_at(order, 61, "in_transit")
    expect(title).to_have_text("On the way", timeout=UPDATE_TIMEOUT_MS)
    expect(page.locator("#timeline")).to_contain_text("On the way Tue 4 Mar, 10:03")
    expect(page.locator("#timeline li")).to_have_count(5)
    expect(page).to_have_title("On the way · Acme Deliveries")
    assert page.evaluate("window.__sameDocument") is True, "the page was reloaded"

    # What the script drew reads exactly as what the server renders for the same order.
    server_page = browser.new_context(**PHONE, java_script_enabled=False).new_page()
    server_page.goto(url)
    for selector in ("#status-card", "#window", "#driver-row", "#timeline", "#updated-at"):
        assert page.locator(selector).inner_text() == server_page.locator(selector).inner_text()

    screenshot = SCREENSHOT if os.environ.get("UPDATE_SCREENSHOTS") == "1" else tmp_path / "t.png"
    page.screenshot(path=str(screenshot), full_page=True)

    advance_at(order, 84, "delivered")
    expect(title).to_have_text("Delivered", timeout=UPDATE_TIMEOUT_MS)
    expect(page.locator("#status-description")).to_have_text(
        "Your package was delivered on Tue 4 Mar, 10:26."
    )
    expect(page.locator("#live-note")).to_have_text("This delivery is complete.")
    expect(page.locator('#steps li[aria-current="step"]')).to_have_text("Delivered")
    polls = len(watched.requests)
    time.sleep(1)  # four poll intervals: a finished delivery is not asked about again
    assert len(watched.requests) == polls

    assert watched.errors == []
    assert [text for text in watched.console if "Content Security Policy" in text] == []
    assert watched.requests, "the page made no request at all"
    strangers = [u for u in watched.requests if not u.startswith(f"{live_server.url}/")]
    assert strangers == [], "the page loaded something from another address"
    assert screenshot.stat().st_size > 10_000


def test_cancelled_order_shows_what_happened(browser, live_server, tracked_order):
    order, _ = tracked_order
    page = browser.new_context(**PHONE).new_page()
    page.goto(f"{live_server.url}/track/{order.tracking_token}")
    expect(page.locator("#steps")).to_be_visible()

    advance_at(order, 20, "cancelled")

    expect(page.locator("#status-title")).to_have_text("Cancelled", timeout=UPDATE_TIMEOUT_MS)
    expect(page.locator("#status-description")).to_contain_text(
        "Nothing will be delivered for this order."
    )
    expect(page.locator("#steps")).to_be_hidden()
    expect(page.locator("#timeline li").last).to_contain_text("Cancelled")


def test_page_reads_complete_without_javascript(
    browser_without_javascript, live_server, tracked_order
):
    order, driver = tracked_order
    advance_at(order, 30, "assigned", driver=driver)
    page = browser_without_javascript.new_context(**PHONE).new_page()
    watched = Watched(page)

    page.goto(f"{live_server.url}/track/{order.tracking_token}")

    expect(page.locator("#status-title")).to_have_text("Driver assigned")
    expect(page.locator("#window")).to_have_text("Tuesday 4 March, 10:00\u201312:00")
    expect(page.locator("#driver-name")).to_have_text("Samira")
    expect(page.locator("#timeline li")).to_have_count(2)
    expect(page.locator("noscript p")).to_have_text("Reload this page to see the latest status.")
    expect(page.locator("noscript p")).to_be_visible()
    expect(page.locator("#live-note")).to_be_hidden()
    time.sleep(0.75)  # three poll intervals: nothing polls without JavaScript
    assert [u for u in watched.requests if "/api/" in u] == []


def test_unknown_token_page_in_the_browser(browser, live_server, transactional_db):
    page = browser.new_context(**PHONE).new_page()

    response = page.goto(f"{live_server.url}/track/not-a-real-token")

    assert response.status == 404
    expect(page.locator("h1")).to_have_text("Tracking link not found")
