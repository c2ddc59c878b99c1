"""The dispatcher's page in a real browser (headless Chromium, tests/core/browser.py): an
organization admin logs in through admin's login form, opens a seeded day, presses Plan, waits
while a real Celery worker solves it, looks at the map, moves a stop and commits.

With UPDATE_SCREENSHOTS=1 (`make screenshots`) the page, with its plan ready and a stop just
moved, is saved to docs/dispatch.png (the README shows it).
"""

import os
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings as django_settings
from playwright.sync_api import expect

from dispatch.models import PlanStatus, PlanStop
from integrations.models import Order, OrderStatus
from tests import builders
from tests.core.browser import Watched
from tests.dispatch.seeded_day import DAY, MITTE_ORDERS, seed_day

SCREENSHOT = Path(django_settings.BASE_DIR) / "docs" / "dispatch.png"
DESKTOP = {"viewport": {"width": 1366, "height": 1000}, "locale": "en-GB"}
#: the worker's solve (a second of solver time) and the page's reloads, on a loaded machine
READY_WITHIN_MS = 60_000


@pytest.fixture
def seeded(transactional_db, fast_password_hashing):
    organization = builders.organization("Acme Deliveries")
    builders.admin(organization, "ada@acme.example")
    return organization, seed_day(organization)


def screenshot_path(tmp_path: Path) -> Path:
    return SCREENSHOT if os.environ.get("UPDATE_SCREENSHOTS") == "1" else tmp_path / SCREENSHOT.name


def test_dispatcher_plans_moves_a_stop_and_commits_in_a_real_browser(
    browser, live_server, celery_worker, seeded, tmp_path
):
    _, day = seeded
    mitte = day["zones"]["Mitte"]
    page = browser.new_context(**DESKTOP).new_page()
    watched = Watched(page)
    wanted = f"/admin/dispatch/plan/dispatcher/?date={DAY.isoformat()}&zone={mitte.id}"

    page.goto(f"{live_server.url}{wanted}")
    expect(page).to_have_url(f"{live_server.url}/admin/login/?next={quote(wanted, safe='/')}")
    page.fill("#id_username", "ada@acme.example")
    page.fill("#id_password", builders.PASSWORD)
    page.click("input[type=submit]")
    expect(page).to_have_url(f"{live_server.url}{wanted}")
    expect(page.locator(".dispatch-bar")).to_contain_text("No plan for Mitte on 2031-01-08 yet.")
    expect(page.locator("svg.dispatch-map path.zone")).to_have_count(1)

    page.click("input[name=plan]")
    status = page.locator(".dispatch-bar .status")
    expect(page.locator("ul.messagelist")).to_contain_text("Planning Mitte on 2031-01-08")
    expect(status).to_contain_text("ready", timeout=READY_WITHIN_MS)

    # The map: the zone, its depot, a numbered circle per routed order, one line per route.
    svg = page.locator("svg.dispatch-map")
    expect(svg).to_be_visible()
    expect(svg.locator("path.zone")).to_have_count(1)
    expect(svg.locator("g.depot")).to_have_count(1)
    expect(svg.locator("g.stop")).to_have_count(MITTE_ORDERS)
    routes = page.locator(".dispatch-routes > .module")
    expect(svg.locator("polyline.route")).to_have_count(routes.count())
    assert routes.count() >= 2
    expect(page.locator("#unassigned")).to_contain_text("SO-FROZEN")
    expect(page.locator("#excluded")).to_contain_text("SO-COLLECT")
    expect(routes.first.locator("td.eta").first).to_contain_text("2031-01-08")
    expect(routes.first.locator("td.eta").first).to_contain_text("Europe/Berlin")

    # Move the last stop of the longest route to the end of the shortest.
    lengths = [routes.nth(n).locator("tr.stop").count() for n in range(routes.count())]
    longest, shortest = lengths.index(max(lengths)), lengths.index(min(lengths))
    last = routes.nth(longest).locator("tr.stop").last
    ref = last.locator("td").nth(1).inner_text().split()[0]
    heading = routes.nth(shortest).locator("h2").inner_text()
    target = next(name for name in day["drivers"] if heading.startswith(name))
    position = lengths[shortest] + 1
    last.locator("select[name=route]").select_option(label=target)
    last.locator("input[name=position]").fill(str(position))
    last.locator("input[value=Move]").click()
    expect(page.locator("ul.messagelist")).to_contain_text(
        f"Order {ref} is now stop {position} of {target}'s route"
    )
    moved = PlanStop.objects.select_related("route__driver").get(order__external_ref=ref)
    assert (moved.route.driver.name, moved.sequence) == (target, position)
    expect(routes.nth(shortest).locator("tr.stop").last).to_contain_text(ref)

    screenshot = screenshot_path(tmp_path)
    # The top of the page: messages, buttons, the map, the summary and the first stops.
    page.screenshot(path=str(screenshot))
    assert screenshot.stat().st_size > 20_000

    page.click("input[name=commit]")
    expect(page.locator("ul.messagelist")).to_contain_text("Plan committed: ")
    expect(status).to_contain_text("committed")
    assert moved.plan.__class__.objects.get(pk=moved.plan_id).status == PlanStatus.COMMITTED
    assigned = Order.objects.get(external_ref=ref)
    assert (assigned.status, assigned.driver.name) == (OrderStatus.ASSIGNED, target)

    assert watched.errors == []
    assert watched.strangers(live_server.url) == []
