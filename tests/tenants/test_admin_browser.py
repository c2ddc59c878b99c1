"""An organization admin logs in to Django admin in a real browser (headless Chromium, the set-up
of tests/core/browser.py) and sees only their organization's zones.

With UPDATE_SCREENSHOTS=1 the zones list is saved to docs/admin.png (the README shows it).
"""

import os
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from playwright.sync_api import expect

from tests import builders
from tests.core.browser import Watched

SCREENSHOT = Path(django_settings.BASE_DIR) / "docs" / "admin.png"
DESKTOP = {"viewport": {"width": 1280, "height": 640}, "locale": "en-GB"}


@pytest.fixture
def two_tenants(transactional_db, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    ours = builders.organization("Acme Deliveries")
    theirs = builders.organization("Globex Logistics")
    for n, (name, purpose) in enumerate(
        [("Mitte", "both"), ("Kreuzberg", "dispatch"), ("Prenzlauer Berg", "slot")]
    ):
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


def test_org_admin_logs_in_and_sees_only_their_zones(browser, live_server, two_tenants, tmp_path):
    page = browser.new_context(**DESKTOP).new_page()
    watched = Watched(page)

    page.goto(f"{live_server.url}/admin/")
    expect(page).to_have_url(f"{live_server.url}/admin/login/?next=/admin/")
    page.fill("#id_username", "ada@acme.example")
    page.fill("#id_password", builders.PASSWORD)
    page.click("input[type=submit]")

    expect(page).to_have_url(f"{live_server.url}/admin/")
    page.locator("tr.model-zone th a").click()  # the Zones row of the index
    expect(page).to_have_url(f"{live_server.url}/admin/zones/zone/")
    rows = page.locator("#result_list tbody tr")
    expect(rows).to_have_count(3)
    for name in ("Mitte", "Kreuzberg", "Prenzlauer Berg"):
        expect(page.locator("#result_list")).to_contain_text(name)
    expect(page.locator("#content")).not_to_contain_text("Globex Central")

    screenshot = SCREENSHOT if os.environ.get("UPDATE_SCREENSHOTS") == "1" else tmp_path / "a.png"
    page.screenshot(path=str(screenshot), full_page=True)
    assert screenshot.stat().st_size > 10_000
    assert watched.errors == []
    assert watched.strangers(live_server.url) == []


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
