"""An organization admin logs in to Django admin in a real browser (headless Chromium, the set-up
of tests/core/browser.py), sees only their organization's zones, and every list fits a laptop.

With UPDATE_SCREENSHOTS=1 (`make screenshots`) the zones list is saved to docs/admin.png and the
slot templates list to docs/admin-slot-templates.png (the README shows them).
"""

import datetime as dt
import os
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from playwright.sync_api import expect

from dispatch.services.policy import dispatch_policy_get_or_create
from integrations.models import OrderStatus
from slots.models import SlotDay
from tests import builders
from tests.core.browser import Watched
from zones import services as zone_services
from zones.models import GazetteerImport, GazetteerImportStatus

DOCS = Path(django_settings.BASE_DIR) / "docs"
SCREENSHOT = DOCS / "admin.png"
SLOT_TEMPLATES_SCREENSHOT = DOCS / "admin-slot-templates.png"
DESKTOP = {"viewport": {"width": 1280, "height": 640}, "locale": "en-GB"}
#: the laptop screens every list must fit without scrolling sideways
LAPTOPS = {
    "1366x768": {"viewport": {"width": 1366, "height": 768}, "locale": "en-GB"},
    "1440x900": {"viewport": {"width": 1440, "height": 900}, "locale": "en-GB"},
}
#: how far the page, and the results table's own scroll box, reach past their width
SIDEWAYS_OVERFLOW = """() => {
    const page = document.documentElement;
    const results = document.querySelector("#changelist .results");
    return {
        page: page.scrollWidth - page.clientWidth,
        results: results ? results.scrollWidth - results.clientWidth : 0,
    };
}"""
#: the values that would widen a list most: long references, addresses, URLs and reasons
LONG = "LONG-REFERENCE-NUMBER-WITH-MANY-CHARACTERS-AND-MORE-2031"


ZONE_NAMES = ("Mitte", "Kreuzberg", "Prenzlauer Berg")


@pytest.fixture
def two_tenants(transactional_db, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    ours = builders.organization("Acme Deliveries")
    theirs = builders.organization("Globex Logistics")
    for n, (name, purpose) in enumerate(zip(ZONE_NAMES, ("both", "dispatch", "slot"), strict=True)):
        centre = builders.offset(*builders.BERLIN, east_m=2500 * n)
        builders.zone(
            ours,
            name,
            builders.box(*centre, width_m=2000, height_m=1500),
            purpose=purpose,
            timezone_name="Europe/Berlin",
        )
    builders.zone(
        theirs, "Globex Central", builders.box(*builders.BERLIN, width_m=1000, height_m=1000)
    )
    builders.admin(ours, "ada@acme.example")
    return ours, theirs


@pytest.fixture
def busy_tenant(two_tenants):
    """Acme with a row, long where it can be, in every list an organization admin has."""
    ours, _ = two_tenants
    mitte, _, prenzlauer_berg = (ours.zones.get(name=name) for name in ZONE_NAMES)
    for day in range(1, 6):  # Monday to Friday, the contract's 1 to 5
        for start in ("08:00", "12:00"):
            template = builders.slot_template(
                prenzlauer_berg, day_of_week=day, start=start, duration=240
            )
    SlotDay.objects.create(template=template, date=dt.date(2031, 1, 17), booked=3, capacity=10)
    builders.slot_template(prenzlauer_berg, day_of_week=6, start="09:00", duration=120, cutoff=60)
    hook = "https://receiver.example.com/hooks/delivery-service/acme-deliveries/partner-a/events"
    issued = builders.api_key(ours, "partner_a", name="Acme web shop", webhook_url=hook)
    window = (
        dt.datetime(2031, 1, 15, 13, 0, tzinfo=dt.UTC),
        dt.datetime(2031, 1, 15, 15, 0, tzinfo=dt.UTC),
    )
    driver = builders.driver(
        ours, name="Samira Haddad-Oyelaran von Brandenburg", phone="+4915112345678"
    )
    for n in range(3):
        order = builders.order_row(
            ours, zone=mitte, window=window, external_ref=f"{LONG}-{n}", api_key=issued.api_key
        )
    builders.advance(order, OrderStatus.DISPATCHING, OrderStatus.ASSIGNED, driver=driver)
    builders.order_event(ours, LONG)
    dispatch_policy_get_or_create(organization_id=ours.id)
    zone_services.zone_blackout_create(
        zone=mitte,
        day=dt.date(2031, 12, 25),
        reason="Christmas Day: the depot is closed and no drivers are rostered for any zone at all",
    )
    builders.place(
        ours,
        "Karl-Liebknecht-Strasse 13, Hinterhaus, 3. Obergeschoss links, bei Familie Mustermann",
        postal_code="10178",
        locality="Berlin",
    )
    GazetteerImport.objects.create(
        organization=ours,
        file_name="berlin-addresses-2031-01-refused-because-of-a-bad-latitude-on-line-12.csv",
        size_bytes=812_345,
        status=GazetteerImportStatus.REFUSED,
        rows=5_000,
        problem_count=1,
        problems=["line 12: lat must be a number between -90 and 90"],
        requested_by="ada@acme.example",
    )
    return ours


def log_in(page, base_url: str, next_path: str = "/admin/") -> None:
    page.goto(f"{base_url}{next_path}")
    expect(page).to_have_url(f"{base_url}/admin/login/?next={next_path}")
    page.fill("#id_username", "ada@acme.example")
    page.fill("#id_password", builders.PASSWORD)
    page.click("input[type=submit]")
    expect(page).to_have_url(f"{base_url}{next_path}")


def screenshot_path(docs_file: Path, tmp_path: Path) -> Path:
    """`docs_file` when the screenshots are being updated, else the test's own folder."""
    return docs_file if os.environ.get("UPDATE_SCREENSHOTS") == "1" else tmp_path / docs_file.name


def test_org_admin_logs_in_and_sees_only_their_zones(browser, live_server, two_tenants, tmp_path):
    page = browser.new_context(**DESKTOP).new_page()
    watched = Watched(page)

    log_in(page, live_server.url)
    page.locator("tr.model-zone th a").click()  # the Zones row of the index
    expect(page).to_have_url(f"{live_server.url}/admin/zones/zone/")
    rows = page.locator("#result_list tbody tr")
    expect(rows).to_have_count(3)
    for name in ("Mitte", "Kreuzberg", "Prenzlauer Berg"):
        expect(page.locator("#result_list")).to_contain_text(name)
    expect(page.locator("#content")).not_to_contain_text("Globex Central")

    screenshot = screenshot_path(SCREENSHOT, tmp_path)
    page.screenshot(path=str(screenshot), full_page=True)
    assert screenshot.stat().st_size > 10_000
    assert watched.errors == []
    assert watched.strangers(live_server.url) == []


@pytest.mark.parametrize("laptop", LAPTOPS)
def test_every_list_fits_a_laptop_screen(browser, live_server, busy_tenant, laptop):
    """Every list the admin's index links to, at a laptop's width: nothing scrolls sideways,
    neither the page nor the table inside it."""
    page = browser.new_context(**LAPTOPS[laptop]).new_page()
    watched = Watched(page)
    log_in(page, live_server.url)
    lists = page.locator("#content-main th[scope=row] a").evaluate_all(
        "links => links.map(link => link.getAttribute('href'))"
    )
    assert len(lists) >= 12, lists  # orders, slots (3), tenants (3), webhooks (2), zones (3)

    overflowing = {}
    for path in lists:
        page.goto(f"{live_server.url}{path}")
        expect(page.locator("#changelist")).to_be_visible()
        expect(page.locator("#result_list tbody tr").first).to_be_visible()  # rows to measure
        overflow = page.evaluate(SIDEWAYS_OVERFLOW)
        if overflow != {"page": 0, "results": 0}:
            overflowing[path] = overflow
    assert overflowing == {}
    assert watched.errors == []


def test_slot_templates_list_reads_as_a_person_plans(browser, live_server, busy_tenant, tmp_path):
    page = browser.new_context(**LAPTOPS["1366x768"]).new_page()
    log_in(page, live_server.url, "/admin/slots/slottemplate/")

    first = page.locator("#result_list tbody tr").first
    expect(first).to_contain_text("Monday")
    expect(first).to_contain_text("08:00\u201312:00 Europe/Berlin")
    expect(first).to_contain_text("240 min")
    saturday = page.locator("#result_list tbody tr").filter(has_text="Saturday")
    expect(saturday).to_contain_text("120 min")
    expect(saturday).to_contain_text("60 min before start")
    assert page.evaluate(SIDEWAYS_OVERFLOW) == {"page": 0, "results": 0}

    screenshot = screenshot_path(SLOT_TEMPLATES_SCREENSHOT, tmp_path)
    page.screenshot(path=str(screenshot), full_page=True)
    assert screenshot.stat().st_size > 10_000


def test_member_of_an_inactive_organization_is_refused_in_the_browser(
    browser, live_server, two_tenants
):
    ours, _ = two_tenants
    ours.is_active = False
    ours.save(update_fields=["is_active"])
    page = browser.new_context(**DESKTOP).new_page()

    page.goto(f"{live_server.url}/admin/login/?next=/admin/")
    page.fill("#id_username", "ada@acme.example")
    page.fill("#id_password", builders.PASSWORD)
    page.click("input[type=submit]")

    expect(page.locator(".errornote")).to_contain_text("active organization's admin")
    expect(page).to_have_url(f"{live_server.url}/admin/login/?next=/admin/")
