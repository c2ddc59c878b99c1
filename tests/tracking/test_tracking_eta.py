"""Tracking's ETA, stops before and delivery time (contract "Tracking"): a rounded ETA with a
window while a driver has the order, the stops ahead while in transit, never the driver's
position, the address or other stops."""

import datetime as dt

import pytest

from integrations.models import Order
from tests import builders
from tests.tracking.conftest import PRIVATE, make_order
from tests.tracking.html import Page
from tracking.selectors import eta_rounded

pytestmark = pytest.mark.django_db

#: Tuesday 4 March 2031, 09:02 UTC (10:02 in Berlin): the route starts; stop n is due n x 15 min
#: later (tests/builders.py committed_route)
START = dt.datetime(2031, 3, 4, 9, 2, tzinfo=dt.UTC)
DAY = dt.date(2031, 3, 4)
#: where the driver is, and the other recipients' places: none of it may show
DRIVER_AT = (52.4987654, 13.3123456)
OTHERS = [
    {
        "external_ref": "OTHER-1",
        "dropoff_address": "Secret Alley 1, 10119 Berlin",
        "dropoff_lat": 52.5311111,
        "dropoff_lng": 13.4011111,
        "recipient_name": "Otto Otherperson",
    },
    {
        "external_ref": "OTHER-3",
        "dropoff_address": "Quiet Court 3, 10405 Berlin",
        "dropoff_lat": 52.5333333,
        "dropoff_lng": 13.4233333,
        "recipient_name": "Olga Otherperson",
    },
]


@pytest.fixture
def clock(time_machine):
    time_machine.move_to(START, tick=False)
    return time_machine


@pytest.fixture
def route(clock, organization):
    """Three stops on Samira's committed route: another recipient's, ours, another's."""
    zone = builders.zone_row(organization, timezone="Europe/Berlin")
    driver = builders.driver(organization)
    first = make_order(organization, zone=zone, **{**PRIVATE, **OTHERS[0]})
    ours = make_order(organization, zone=zone, external_ref="OURS")
    last = make_order(organization, zone=zone, **{**PRIVATE, **OTHERS[1]})
    builders.committed_route(driver, [first, ours, last], day=DAY, zone=zone, start=START)
    return driver, first, ours, last


def track(client, order: Order) -> dict:
    response = client.get(f"/api/track/{order.tracking_token}")
    assert response.status_code == 200, response.content
    return response.json()


def to(order: Order, *statuses: str) -> Order:
    return builders.advance(Order.objects.get(pk=order.pk), *statuses)


def test_eta_is_rounded_to_five_minutes():
    at = dt.datetime(2031, 3, 4, 9, 0, tzinfo=dt.UTC)
    assert eta_rounded(at + dt.timedelta(minutes=32)) == at + dt.timedelta(minutes=30)
    assert eta_rounded(at + dt.timedelta(minutes=32, seconds=30)) == at + dt.timedelta(minutes=35)
    assert eta_rounded(at + dt.timedelta(minutes=33)) == at + dt.timedelta(minutes=35)
    assert eta_rounded(at + dt.timedelta(minutes=35)) == at + dt.timedelta(minutes=35)


def test_an_assigned_order_shows_its_eta_window_but_no_stops(api_client, route):
    _, _, ours, _ = route

    body = track(api_client, ours)

    # Stop 2 is due at 09:32: shown as 09:30, from 09:20 to 09:40.
    assert body["status"] == "assigned"
    assert body["eta"] == "2031-03-04T09:30:00Z"
    assert body["etaWindow"] == {"from": "2031-03-04T09:20:00Z", "to": "2031-03-04T09:40:00Z"}
    assert body["stopsBefore"] is None
    assert body["deliveredAt"] is None


def test_in_transit_shows_the_stops_still_ahead(api_client, route, clock):
    _, first, ours, _ = route
    to(ours, "picked_up", "in_transit")

    assert track(api_client, ours)["stopsBefore"] == 1

    to(first, "picked_up", "in_transit", "delivered")

    body = track(api_client, ours)
    assert body["stopsBefore"] == 0
    assert body["eta"] == "2031-03-04T09:30:00Z"


def test_a_courier_position_moves_the_eta(api_client, route, clock):
    driver, first, ours, _ = route
    to(first, "picked_up", "in_transit", "delivered")
    courier = builders.courier_client(driver)
    clock.move_to(START + dt.timedelta(minutes=50), tick=False)

    response = courier.post(
        "/api/courier/locations",
        {"points": [{"lat": DRIVER_AT[0], "lng": DRIVER_AT[1], "at": "2031-03-04T09:52:00Z"}]},
        format="json",
    )

    assert response.status_code == 202, response.content
    body = track(api_client, ours)
    assert body["eta"] > "2031-03-04T09:52:00Z"
    ours.refresh_from_db()
    assert body["eta"] == eta_rounded(ours.eta).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_delivered_shows_when_and_no_eta(api_client, route, clock):
    _, _, ours, _ = route
    to(ours, "picked_up", "in_transit")
    clock.move_to(START + dt.timedelta(minutes=31, seconds=7), tick=False)
    to(ours, "delivered")

    body = track(api_client, ours)

    assert body["deliveredAt"] == "2031-03-04T09:33:07Z"
    assert (body["eta"], body["etaWindow"], body["stopsBefore"]) == (None, None, None)


@pytest.mark.parametrize("status", ["pending", "dispatching", "failed", "cancelled"])
def test_without_a_driver_at_work_there_is_no_eta(api_client, organization, clock, status):
    zone = builders.zone_row(organization, timezone="Europe/Berlin")
    order = make_order(organization, zone=zone)
    paths = {
        "pending": (),
        "dispatching": ("dispatching",),
        "failed": ("dispatching", "assigned", "failed"),
        "cancelled": ("cancelled",),
    }
    builders.advance(order, *paths[status], driver=builders.driver(organization))

    body = track(api_client, order)

    assert (body["eta"], body["etaWindow"], body["stopsBefore"], body["deliveredAt"]) == (
        None,
        None,
        None,
        None,
    )


def _private_values(route) -> list[str]:
    driver, first, _ours, last = route
    values = [
        *(str(value) for value in PRIVATE.values()),
        f"{DRIVER_AT[0]}",
        f"{DRIVER_AT[1]}",
        str(driver.id),
        driver.phone,
        driver.name,
    ]
    for other in (first, last):
        values += [
            str(other.id),
            other.tracking_token,
            other.external_ref,
            other.dropoff_address,
            str(other.dropoff_lat),
            str(other.dropoff_lng),
            other.recipient_name,
        ]
    return values


def test_tracking_never_shows_position_address_or_other_stops(api_client, route, clock):
    driver, _first, ours, _ = route
    to(ours, "picked_up", "in_transit")
    courier = builders.courier_client(driver)
    sent = courier.post(
        "/api/courier/locations",
        {"points": [{"lat": DRIVER_AT[0], "lng": DRIVER_AT[1], "at": "2031-03-04T09:02:00Z"}]},
        format="json",
    )
    assert sent.status_code == 202, sent.content

    api = api_client.get(f"/api/track/{ours.tracking_token}")
    page = api_client.get(f"/track/{ours.tracking_token}")

    private = [*_private_values(route), ours.external_ref, str(ours.id)]
    for text in (api.content.decode(), page.content.decode()):
        assert [value for value in private if value in text] == []
    body = api.json()
    assert set(body["etaWindow"]) == {"from", "to"}
    assert body["stopsBefore"] == 1


def test_the_page_shows_the_eta_window_and_the_stops_before(api_client, route):
    _, _, ours, _ = route
    to(ours, "picked_up", "in_transit")

    page = Page(api_client.get(f"/track/{ours.tracking_token}").content.decode())

    # 09:20-09:40 UTC is 10:20-10:40 in Berlin.
    assert page.text("eta") == "10:20\u201310:40"
    assert page.text("stops-before") == "1 stop before yours"
    assert page.text("delivered-at") == ""


def test_the_page_of_a_delivered_order_shows_when(api_client, route, clock):
    _, _, ours, _ = route
    to(ours, "picked_up", "in_transit")
    clock.move_to(START + dt.timedelta(minutes=31), tick=False)
    to(ours, "delivered")

    page = Page(api_client.get(f"/track/{ours.tracking_token}").content.decode())

    assert page.text("delivered-at") == "Tue 4 Mar, 10:33"
    assert page.text("eta") == ""


def test_in_transit_on_a_route_reads_in_four_queries(api_client, route, django_assert_num_queries):
    _, _, ours, _ = route
    to(ours, "picked_up", "in_transit")

    # the order, its history, its stop, the stops still ahead
    with django_assert_num_queries(4):
        track(api_client, ours)
