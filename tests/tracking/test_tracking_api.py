"""GET /api/track/<token> (contract "Tracking"): the public fields exactly, nothing private,
404s."""

import datetime as dt
import json

import pytest

from tests import builders
from tests.conftest import assert_error
from tests.tracking.conftest import PRIVATE, make_order, order_in_status

pytestmark = pytest.mark.django_db

CREATED = dt.datetime(2031, 3, 3, 8, 15, tzinfo=dt.UTC)
FIELDS = {
    "eta",
    "etaWindow",
    "stopsBefore",
    "deliveredAt",
    "trackingToken",
    "status",
    "deliveryWindowStart",
    "deliveryWindowEnd",
    "driver",
    "events",
    "updatedAt",
}


def track(api_client, token: str):
    return api_client.get(f"/api/track/{token}")


def test_pending_order_answers_exactly_the_public_fields(api_client, organization, time_machine):
    time_machine.move_to(CREATED, tick=False)
    order = make_order(organization)

    response = track(api_client, order.tracking_token)

    assert response.status_code == 200
    assert response.json() == {
        "trackingToken": order.tracking_token,
        "status": "pending",
        "deliveryWindowStart": "2031-03-04T09:00:00Z",
        "deliveryWindowEnd": "2031-03-04T11:00:00Z",
        "driver": None,
        "events": [{"status": "pending", "at": "2031-03-03T08:15:00Z"}],
        "updatedAt": "2031-03-03T08:15:00Z",
        "eta": None,
        "etaWindow": None,
        "stopsBefore": None,
        "deliveredAt": None,
    }


def test_events_are_oldest_first_with_the_creation_first(api_client, organization, time_machine):
    time_machine.move_to(CREATED, tick=False)
    order = make_order(organization)
    driver = builders.driver(organization)
    for status in ("dispatching", "assigned", "picked_up", "in_transit", "delivered"):
        time_machine.shift(dt.timedelta(minutes=10))
        order = builders.advance(order, status, driver=driver)

    body = track(api_client, order.tracking_token).json()

    assert body["status"] == "delivered"
    assert body["events"] == [
        {"status": "pending", "at": "2031-03-03T08:15:00Z"},
        {"status": "dispatching", "at": "2031-03-03T08:25:00Z"},
        {"status": "assigned", "at": "2031-03-03T08:35:00Z"},
        {"status": "picked_up", "at": "2031-03-03T08:45:00Z"},
        {"status": "in_transit", "at": "2031-03-03T08:55:00Z"},
        {"status": "delivered", "at": "2031-03-03T09:05:00Z"},
    ]
    assert body["updatedAt"] == "2031-03-03T09:05:00Z"


def test_driver_is_shown_by_first_name_only_once_assigned(api_client, organization):
    driver = builders.driver(organization, name="  Samira   Haddad-Khan ")
    order = make_order(organization)
    assert track(api_client, order.tracking_token).json()["driver"] is None

    builders.advance(order, "assigned", driver=driver)
    response = track(api_client, order.tracking_token)

    assert response.json()["driver"] == {"name": "Samira"}
    assert "Haddad" not in response.content.decode()
    assert driver.phone not in response.content.decode()
    assert str(driver.id) not in response.content.decode()


def test_unassigning_hides_the_driver_again(api_client, organization, driver):
    order = builders.advance(make_order(organization), "assigned", "dispatching", driver=driver)

    body = track(api_client, order.tracking_token).json()

    assert body["status"] == "dispatching"
    assert body["driver"] is None
    assert [e["status"] for e in body["events"]] == ["pending", "assigned", "dispatching"]


@pytest.mark.parametrize("status", ["pending", "in_transit", "delivered", "failed", "cancelled"])
def test_no_private_field_is_ever_in_the_answer(api_client, organization, status):
    order = order_in_status(organization, status, family="partner")
    order.refresh_from_db()

    response = track(api_client, order.tracking_token)

    body = response.json()
    assert set(body) == FIELDS
    assert all(set(event) == {"status", "at"} for event in body["events"])
    assert body["driver"] is None or set(body["driver"]) == {"name"}
    text = response.content.decode()
    private = [
        *(str(value) for value in PRIVATE.values()),
        str(order.id),
        str(order.organization_id),
        organization.name,
        organization.slug,
        order.external_ref,
        str(order.zone_id),
        order.zone.name,
        "Recipient not at home",  # the transition's reason is internal
    ]
    if order.driver_id:
        private += [str(order.driver_id), order.driver.phone, order.driver.name]
    leaked = [value for value in private if value in text]
    assert leaked == []


def test_erp_orders_are_trackable_like_partner_orders(api_client, organization, driver):
    order = builders.advance(
        make_order(organization, family="erp"), "dispatching", "assigned", driver=driver
    )

    body = track(api_client, order.tracking_token).json()

    assert body["status"] == "assigned"
    assert body["driver"] == {"name": "Samira"}
    assert [e["status"] for e in body["events"]] == ["pending", "dispatching", "assigned"]


@pytest.mark.parametrize("status", ["failed", "cancelled"])
def test_failed_and_cancelled_orders_say_so(api_client, organization, status):
    order = order_in_status(organization, status)

    body = track(api_client, order.tracking_token).json()

    assert body["status"] == status
    assert body["events"][-1]["status"] == status


def test_order_without_a_window_answers_nulls(api_client, organization):
    order = make_order(organization, window=(None, None))

    body = track(api_client, order.tracking_token).json()

    assert body["deliveryWindowStart"] is None
    assert body["deliveryWindowEnd"] is None


@pytest.mark.parametrize(
    "token",
    ["unknown-token", "x" * 200, "%00", "a%00b", "'; DROP TABLE orders; --", "0" * 32, "é" * 8],
)
def test_unknown_token_is_404_order_not_found(api_client, organization, token):
    make_order(organization)

    assert_error(track(api_client, token), 404, "Order not found")


def test_trailing_slash_answers_the_same_without_redirect(api_client, organization):
    order = make_order(organization)

    response = api_client.get(f"/api/track/{order.tracking_token}/")

    assert response.status_code == 200
    assert response.json()["trackingToken"] == order.tracking_token
    assert_error(api_client.get("/api/track/nope/"), 404, "Order not found")


def test_tokens_of_two_orders_differ_and_carry_at_least_128_bits(organization):
    first, second = make_order(organization), make_order(organization)

    assert first.tracking_token != second.tracking_token
    # URL-safe base64: 6 bits per character.
    assert len(first.tracking_token) * 6 >= 128


def test_no_key_is_needed_and_a_key_changes_nothing(api_client, organization):
    order = make_order(organization)
    keyed = api_client.get(f"/api/track/{order.tracking_token}", HTTP_X_API_KEY="sk_bogus")

    assert keyed.status_code == 200
    assert keyed.json() == track(api_client, order.tracking_token).json()


def test_answer_is_not_cached(api_client, organization):
    order = make_order(organization)

    assert track(api_client, order.tracking_token)["Cache-Control"] == "no-store"


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
def test_only_get_is_allowed(api_client, organization, method):
    order = make_order(organization)

    response = getattr(api_client, method)(f"/api/track/{order.tracking_token}")

    assert_error(response, 405)


def test_query_count_does_not_grow_with_the_history(
    api_client, organization, driver, django_assert_num_queries
):
    short = make_order(organization)
    long = builders.advance(
        make_order(organization),
        *("dispatching", "assigned", "picked_up", "in_transit", "delivered"),
        driver=driver,
    )

    # one query for the order with its zone and driver, one for its history
    with django_assert_num_queries(2):
        assert track(api_client, short.tracking_token).status_code == 200
    with django_assert_num_queries(2):
        assert len(track(api_client, long.tracking_token).json()["events"]) == 6
    with django_assert_num_queries(1):
        assert track(api_client, "unknown").status_code == 404
    with django_assert_num_queries(0):  # cannot be a token: no query at all
        assert track(api_client, "not%20a%20token").status_code == 404


def test_rate_limited_per_client_address(api_client, organization, settings):
    settings.TRACKING_RATE_LIMIT = "3/m"
    order = make_order(organization)

    answers = [track(api_client, order.tracking_token).status_code for _ in range(3)]
    limited = track(api_client, "a-guessed-token")

    assert answers == [200, 200, 200]
    assert_error(limited, 429, "Too many requests")
    assert int(limited["Retry-After"]) >= 1
    other_address = api_client.get(f"/api/track/{order.tracking_token}", REMOTE_ADDR="198.51.100.7")
    assert other_address.status_code == 200


def test_page_and_api_share_one_limit(api_client, client, organization, settings):
    settings.TRACKING_RATE_LIMIT = "2/m"
    order = make_order(organization)

    assert client.get(f"/track/{order.tracking_token}").status_code == 200
    assert track(api_client, order.tracking_token).status_code == 200

    assert_error(track(api_client, order.tracking_token), 429, "Too many requests")
    assert client.get(f"/track/{order.tracking_token}").status_code == 429


def test_the_limit_can_be_switched_off(api_client, organization, settings):
    settings.TRACKING_RATE_LIMIT = "1/m"
    settings.RATELIMIT_ENABLE = False
    order = make_order(organization)

    statuses = {track(api_client, order.tracking_token).status_code for _ in range(5)}

    assert statuses == {200}


def test_openapi_document_describes_the_tracking_api(api_client):
    document = api_client.get("/api/schema/", HTTP_ACCEPT="application/json")

    assert document.status_code == 200
    operation = json.loads(document.content)["paths"]["/api/track/{token}"]["get"]
    assert set(operation["responses"]) == {"200", "404", "429"}
    assert "security" not in operation or operation["security"] in ([], [{}])
