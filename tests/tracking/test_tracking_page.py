"""GET /track/<token> (contract "Tracking"): the recipient's page, per status, and
self-contained."""

import datetime as dt
import re

import pytest

from tests import builders
from tests.tracking.conftest import PATHS, PRIVATE, make_order, order_in_status
from tests.tracking.html import Page, assert_self_contained

pytestmark = pytest.mark.django_db

CREATED = dt.datetime(2031, 3, 3, 8, 15, tzinfo=dt.UTC)


def get_page(client, token: str):
    return client.get(f"/track/{token}")


@pytest.mark.parametrize(
    ("status", "title", "description"),
    [
        (
            "pending",
            "Order received",
            "Acme Deliveries has received your order and is preparing the delivery.",
        ),
        ("dispatching", "Preparing for dispatch", "We are finding a driver for your delivery."),
        ("assigned", "Driver assigned", "Samira will pick up your package soon."),
        ("picked_up", "Picked up", "Samira has picked up your package."),
        ("in_transit", "On the way", "Samira is on the way to you with your package."),
        ("delivered", "Delivered", "Your package was delivered on Mon 3 Mar, 10:05."),
        (
            "failed",
            "Delivery failed",
            "We could not deliver your package (Mon 3 Mar, 09:55). Please contact "
            "Acme Deliveries to arrange what happens next.",
        ),
        (
            "cancelled",
            "Cancelled",
            "This delivery was cancelled on Mon 3 Mar, 09:25. Nothing will be delivered for "
            "this order. If you did not expect this, please contact Acme Deliveries.",
        ),
    ],
)
def test_page_says_each_status_in_plain_words(
    client, organization, time_machine, status, title, description
):
    time_machine.move_to(CREATED, tick=False)
    order = make_order(organization)
    driver = builders.driver(organization)
    for step in PATHS[status]:
        time_machine.shift(dt.timedelta(minutes=10))
        order = builders.advance(order, step, driver=driver)

    response = get_page(client, order.tracking_token)

    assert response.status_code == 200
    assert response["Content-Type"] == "text/html; charset=utf-8"
    page = Page(response.content.decode())
    assert page.text("status-title") == title
    assert page.text("status-description") == description
    assert page.find("section", id="status-card")[0]["data-status"] == status
    assert page.find("title") and f"{title} · Acme Deliveries" in response.content.decode()
    timeline = [attrs["data-status"] for attrs in page.find("li") if "data-status" in attrs]
    assert timeline == ["pending", *PATHS[status]]
    assert_self_contained(response.content.decode())


@pytest.mark.parametrize(
    ("status", "states"),
    [
        ("pending", ["current", "todo", "todo", "todo", "todo"]),
        ("dispatching", ["current", "todo", "todo", "todo", "todo"]),
        ("assigned", ["done", "current", "todo", "todo", "todo"]),
        ("picked_up", ["done", "done", "current", "todo", "todo"]),
        ("in_transit", ["done", "done", "done", "current", "todo"]),
        ("delivered", ["done", "done", "done", "done", "current"]),
    ],
)
def test_progress_steps_mark_how_far_the_order_got(client, organization, status, states):
    order = order_in_status(organization, status)

    page = Page(get_page(client, order.tracking_token).content.decode())

    steps = [attrs for attrs in page.find("li") if "data-step" in attrs]
    assert [attrs["class"].removeprefix("step step-") for attrs in steps] == states
    current = [attrs for attrs in steps if attrs.get("aria-current") == "step"]
    assert len(current) == 1
    assert "hidden" not in page.find("ol", id="steps")[0]


@pytest.mark.parametrize("status", ["failed", "cancelled"])
def test_failed_and_cancelled_pages_show_what_happened_instead_of_progress(
    client, organization, status
):
    order = order_in_status(organization, status)

    html = get_page(client, order.tracking_token).content.decode()
    page = Page(html)

    assert "hidden" in page.find("ol", id="steps")[0]
    assert f"status-{status}" in page.find("section", id="status-card")[0]["class"]
    events = [attrs for attrs in page.find("li") if "data-status" in attrs]
    assert events[-1]["class"] == f"event event-{status}"
    label = {"failed": "Delivery failed", "cancelled": "Cancelled"}[status]
    assert re.search(rf"{label} \w{{3}} \d{{1,2}} \w{{3}}, \d\d:\d\d$", page.text("timeline"))
    assert "Recipient not at home" not in html  # the internal reason is not public


def test_delivery_window_is_in_the_zone_local_time(client, organization):
    order = make_order(organization, zone=builders.zone_row(organization, timezone="Europe/Berlin"))

    page = Page(get_page(client, order.tracking_token).content.decode())

    # 09:00-11:00 UTC is 10:00-12:00 in Berlin in March (CET)
    assert page.text("window") == "Tuesday 4 March, 10:00\u201312:00"
    assert page.text("time-zone-note") == "Times are shown in Europe/Berlin time."


def test_window_across_midnight_and_open_windows_are_written_out(client, organization):
    zone = builders.zone_row(organization, timezone="America/New_York")
    start = dt.datetime(2031, 7, 1, 2, 0, tzinfo=dt.UTC)  # 22:00 on 30 June in New York (EDT)
    end = dt.datetime(2031, 7, 1, 6, 0, tzinfo=dt.UTC)  # 02:00 on 1 July
    across = make_order(organization, zone=zone, window=(start, end))
    only_start = make_order(organization, zone=zone, window=(start, None))
    none = make_order(organization, zone=zone, window=(None, None))

    def window(order):
        return Page(get_page(client, order.tracking_token).content.decode()).text("window")

    assert window(across) == "Mon 30 Jun, 22:00 \u2013 Tue 1 Jul, 02:00"
    assert window(only_start) == "From Mon 30 Jun, 22:00"
    assert window(none) == "Not scheduled yet"


def test_timeline_lists_each_change_in_zone_time_oldest_first(client, organization, time_machine):
    time_machine.move_to(CREATED, tick=False)
    driver = builders.driver(organization)
    order = make_order(organization, zone=builders.zone_row(organization, timezone="Asia/Tokyo"))
    for step in ("dispatching", "assigned", "picked_up"):
        time_machine.shift(dt.timedelta(minutes=30))
        order = builders.advance(order, step, driver=driver)

    page = Page(get_page(client, order.tracking_token).content.decode())

    assert page.text("timeline") == (
        "Order received Mon 3 Mar, 17:15 Preparing for dispatch Mon 3 Mar, 17:45 "
        "Driver assigned Mon 3 Mar, 18:15 Picked up Mon 3 Mar, 18:45"
    )
    times = [attrs["datetime"] for attrs in page.find("time") if attrs.get("datetime")]
    assert times[:4] == [
        "2031-03-03T08:15:00+00:00",
        "2031-03-03T08:45:00+00:00",
        "2031-03-03T09:15:00+00:00",
        "2031-03-03T09:45:00+00:00",
    ]
    assert page.text("time-zone-note") == "Times are shown in Asia/Tokyo time."


def test_driver_first_name_appears_once_assigned(client, organization):
    driver = builders.driver(organization, name="Samira Haddad-Khan")
    order = make_order(organization)
    before = Page(get_page(client, order.tracking_token).content.decode())

    builders.advance(order, "assigned", driver=driver)
    html = get_page(client, order.tracking_token).content.decode()
    after = Page(html)

    assert "hidden" in before.find("div", id="driver-row")[0]
    assert "hidden" not in after.find("div", id="driver-row")[0]
    assert after.text("driver-name") == "Samira"
    assert "Haddad" not in html and driver.phone not in html


def test_page_shows_the_organization_and_nothing_private(client, organization):
    order = order_in_status(organization, "in_transit")
    order.refresh_from_db()

    html = get_page(client, order.tracking_token).content.decode()

    assert Page(html).text("sender") == "Acme Deliveries"
    private = [
        *(str(value) for value in PRIVATE.values()),
        str(order.id),
        str(order.organization_id),
        order.external_ref,
        str(order.zone_id),
        order.zone.name,
        str(order.driver_id),
        order.driver.phone,
        order.driver.name,
    ]
    assert [value for value in private if value in html] == []


def test_erp_orders_have_a_page_too(client, organization):
    order = order_in_status(organization, "picked_up", family="erp")

    response = get_page(client, order.tracking_token)

    assert response.status_code == 200
    assert Page(response.content.decode()).text("status-title") == "Picked up"


def test_page_is_a_phone_page_in_english_with_semantic_landmarks(client, organization):
    order = make_order(organization)

    html = get_page(client, order.tracking_token).content.decode()
    page = Page(html)

    assert html.startswith("<!DOCTYPE html>")
    assert page.find("html") == [{"lang": "en"}]
    assert page.find("meta", name="viewport") == [
        {"name": "viewport", "content": "width=device-width, initial-scale=1"}
    ]
    assert page.find("meta", charset="utf-8")
    assert len(page.find("main")) == 1 and len(page.find("h1")) == 1
    assert page.find("header") and page.find("footer")
    assert [attrs["id"] for attrs in page.find("h2")] == ["details-title", "history-title"]
    for attrs in page.find("section"):
        assert attrs["aria-labelledby"] in page.text_by_id
    assert page.find("div", **{"aria-live": "polite"})


def test_page_without_javascript_is_complete_and_says_how_to_refresh(client, organization):
    order = order_in_status(organization, "assigned")

    html = get_page(client, order.tracking_token).content.decode()
    page = Page(html)

    # everything is in the HTML itself; the script only refreshes it
    assert page.text("status-title") == "Driver assigned"
    assert page.text("window") == "Tuesday 4 March, 10:00\u201312:00"
    assert page.text("driver-name") == "Samira"
    assert "<noscript><p>Reload this page to see the latest status.</p></noscript>" in html


def test_page_polls_the_tracking_api_while_the_order_is_under_way(client, organization, settings):
    settings.TRACKING_POLL_INTERVAL_SECONDS = 2.5
    order = make_order(organization)

    response = get_page(client, order.tracking_token)
    page = Page(response.content.decode())

    config = page.find("script", id="tracking-config", type="application/json")
    assert len(config) == 1
    assert f'"apiUrl": "/api/track/{order.tracking_token}"' in response.content.decode()
    assert '"pollIntervalMs": 2500' in response.content.decode()


def test_default_poll_interval_is_fifteen_seconds(client, organization):
    order = make_order(organization)

    assert '"pollIntervalMs": 15000' in get_page(client, order.tracking_token).content.decode()


@pytest.mark.parametrize("status", ["delivered", "failed", "cancelled"])
def test_final_pages_do_not_poll(client, organization, status):
    order = order_in_status(organization, status)

    html = get_page(client, order.tracking_token).content.decode()

    assert Page(html).find("script") == []
    assert "<noscript>" not in html


def test_inline_script_and_style_carry_the_policy_nonce(client, organization):
    order = make_order(organization)

    response = get_page(client, order.tracking_token)
    page = Page(response.content.decode())

    policy = response["Content-Security-Policy"]
    nonce = re.search(r"script-src 'nonce-([^']+)'", policy).group(1)
    assert "default-src 'none'" in policy
    assert "connect-src 'self'" in policy
    assert "form-action 'none'" in policy
    executable = [attrs for attrs in page.find("script") if attrs.get("type") is None]
    assert [attrs["nonce"] for attrs in executable] == [nonce]
    assert [attrs["nonce"] for attrs in page.find("style")] == [nonce]
    assert get_page(client, order.tracking_token)["Content-Security-Policy"] != policy
    assert response["Referrer-Policy"] == "no-referrer"
    assert response["X-Robots-Tag"] == "noindex, nofollow"
    assert response["Cache-Control"] == "no-store"


def test_no_style_attribute_or_inline_handler_that_the_policy_would_block(client, organization):
    order = order_in_status(organization, "assigned")

    page = Page(get_page(client, order.tracking_token).content.decode())

    for tag, attributes in page.tags:
        assert "style" not in attributes, tag
        assert not [name for name in attributes if name.startswith("on")], tag


def test_names_are_escaped(client, other_organization):
    other_organization.name = '<script>alert("org")</script> & Sons'
    other_organization.save()
    driver = builders.driver(other_organization, name="<img src=x onerror=alert(1)> Bob")
    order = builders.advance(make_order(other_organization), "assigned", driver=driver)

    html = get_page(client, order.tracking_token).content.decode()

    assert "<script>alert" not in html
    assert "<img" not in html
    assert Page(html).text("sender") == '<script>alert("org")</script> & Sons'
    assert Page(html).text("driver-name") == "<img"
    assert '\\u003Cscript\\u003Ealert(\\"org\\")\\u003C/script\\u003E' in html


@pytest.mark.parametrize(
    "outside",
    [
        '<script src="https://cdn.example.com/app.js"></script>',
        '<link rel="stylesheet" href="//fonts.example.com/css">',
        '<img src="http://maps.example.com/tile.png" alt="">',
        '<form action="https://collect.example.com/"></form>',
        "<style>body { background: url(/texture.png); }</style>",
        "<style>@import 'https://example.com/x.css';</style>",
        '<a href="mailto:someone@example.com">mail</a>',
        '<meta http-equiv="refresh" content="0; url=/elsewhere">',
        '<script>fetch("//tracker.example.com/p")</script>',
    ],
)
def test_the_self_contained_check_catches_each_way_out(outside):
    html = f'<!DOCTYPE html><html lang="en"><head></head><body>{outside}</body></html>'

    with pytest.raises(AssertionError):
        assert_self_contained(html)


def test_unknown_token_gets_a_clear_html_404(client):
    response = get_page(client, "no-such-token")

    assert response.status_code == 404
    assert response["Content-Type"] == "text/html; charset=utf-8"
    html = response.content.decode()
    page = Page(html)
    assert page.text("status-title") == "Tracking link not found"
    assert "We could not find a delivery for this tracking link." in html
    assert page.find("html") == [{"lang": "en"}]
    assert page.find("meta", name="viewport")
    assert_self_contained(html)


def test_trailing_slash_serves_the_same_page(client, organization):
    order = make_order(organization)

    response = client.get(f"/track/{order.tracking_token}/")

    assert response.status_code == 200
    assert Page(response.content.decode()).text("status-title") == "Order received"


def test_page_is_rate_limited_with_an_html_answer(client, organization, settings):
    settings.TRACKING_RATE_LIMIT = "2/m"
    order = make_order(organization)
    assert get_page(client, order.tracking_token).status_code == 200
    assert get_page(client, "guess").status_code == 404

    response = get_page(client, order.tracking_token)

    assert response.status_code == 429
    assert response["Content-Type"] == "text/html; charset=utf-8"
    assert int(response["Retry-After"]) >= 1
    assert Page(response.content.decode()).text("status-title") == "Too many requests"
    assert_self_contained(response.content.decode())


def test_page_reads_with_a_constant_number_of_queries(
    client, organization, driver, django_assert_num_queries
):
    order = builders.advance(
        make_order(organization),
        *("dispatching", "assigned", "picked_up", "in_transit"),
        driver=driver,
    )

    # the order, its history, and its stop on a committed route (for the ETA; none here)
    with django_assert_num_queries(3):
        assert get_page(client, order.tracking_token).status_code == 200


def test_only_reading_methods_are_allowed(client, organization):
    order = make_order(organization)

    assert client.post(f"/track/{order.tracking_token}").status_code == 405
    assert client.head(f"/track/{order.tracking_token}").status_code == 200
