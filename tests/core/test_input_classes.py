"""Classes of input that once gave a 500 or a lenient answer, each refused where it enters.

- every problem of a body in one 400, fields and rules between fields together;
- NUL characters and lone surrogates in paths, query strings, headers, JSON keys and values;
- dates and date-times at the edges of the calendar, and one strict date format;
- integers in query strings beyond what the database holds;
- time zones only by their IANA names;
- an externalRef that its own paths could not give back.

(docs/contract.md "Errors", "Conventions", "Orders"). tests/core/test_hostile_classes.py sends
the same classes to every operation of the OpenAPI document.
"""

import json
from urllib.parse import quote

import pytest
from django.test import Client

from tests.conftest import assert_error
from tests.core.world import erp_order_body, partner_order_body

pytestmark = pytest.mark.django_db

PARTNER_ORDERS = "/api/integrations/partner-a/orders"
ERP_ORDERS = "/api/integrations/erp/orders"
UNSTORABLE = "must not contain NUL characters or unpaired surrogates"


def post_json(client: Client, path: str, body) -> object:
    """The body as JSON text: lone surrogates are written as the `\\udXXX` escapes a caller
    would send (json.dumps escapes them; the test client would not encode them)."""
    return client.post(path, json.dumps(body), content_type="application/json")


def keyed(world, platform: str) -> Client:
    return Client(headers={"X-API-Key": world.keys[platform]})


def managing(world) -> Client:
    return Client(headers={"Authorization": f"Bearer {world.token}"})


# ----- every problem at once -----


def test_an_erp_order_lists_a_missing_field_and_a_half_given_pair_together(world):
    body = erp_order_body("SO-pair", world.ids["template_id"], world.ids["slot_date"])
    del body["recipientName"]
    body["pickupLat"] = 52.5
    body.pop("pickupLng", None)

    response = post_json(keyed(world, "erp"), ERP_ORDERS, body)

    assert_error(response, 400)
    assert response.json()["message"] == [
        "recipientName required",
        "pickupLat and pickupLng must be given together",
    ]


def test_a_slot_template_lists_a_bad_day_and_an_end_before_its_start_together(world):
    response = post_json(
        managing(world),
        f"{world.manage}/slot-templates",
        {"zoneId": world.ids["zone_id"], "dayOfWeek": 9, "startTime": "10:00", "endTime": "09:00"},
    )

    assert_error(response, 400)
    message = response.json()["message"]
    assert "dayOfWeek must be between 0 (Sunday) and 6 (Saturday)" in message
    assert "endTime must be after startTime" in message


def test_a_seed_lists_a_bad_day_and_a_start_after_its_end_together(world):
    response = post_json(
        managing(world),
        f"{world.manage}/slot-templates/seed",
        {"daysOfWeek": [8], "firstStart": "12:00", "lastEnd": "08:00"},
    )

    assert_error(response, 400)
    message = response.json()["message"]
    assert "firstStart must be before lastEnd" in message
    assert len(message) == 2, message


# ----- NUL characters and lone surrogates -----


@pytest.mark.parametrize("text", ["A\x00B", "\ud800", "x\udfffy"])
def test_unstorable_text_in_a_json_value_is_a_400(world, text):
    response = post_json(keyed(world, "partner_a"), PARTNER_ORDERS, partner_order_body(text))

    assert_error(response, 400, [f"externalRef {UNSTORABLE}"])


@pytest.mark.parametrize("text", ["\x00", "\ud83d"])
def test_unstorable_text_deep_in_zone_metadata_is_a_400(world, text):
    manager = managing(world)
    path = f"{world.manage}/zones/{world.ids['zone_id']}"

    as_value = post_json_patch(manager, path, {"metadata": {"tags": ["ok", {"note": text}]}})
    as_key = post_json_patch(manager, path, {"metadata": {"nested": {f"k{text}": 1}}})

    assert_error(as_value, 400, [f"metadata.tags[1].note {UNSTORABLE}"])
    assert_error(as_key, 400, [f"metadata.nested (an object key) {UNSTORABLE}"])


def post_json_patch(client: Client, path: str, body):
    return client.patch(path, json.dumps(body), content_type="application/json")


def test_a_nul_in_an_id_in_the_path_is_the_404_of_that_id(world):
    partner, erp = keyed(world, "partner_a"), keyed(world, "erp")

    answers = [
        partner.get(f"{PARTNER_ORDERS}/PO%00x"),
        post_json(partner, f"{PARTNER_ORDERS}/PO%00x/cancel", {}),
        partner.post(f"{PARTNER_ORDERS}/PO%00x/release"),
        erp.get(f"{ERP_ORDERS}/SO%00x"),
        Client().get("/api/track/abc%00"),
    ]

    for response in answers:
        assert_error(response, 404, "Order not found")
    assert_error(Client().get("/api/provisioning/invite/abc%00"), 404)
    assert_error(Client().get("/api/no-such-route%00"), 404, "Not found")


def test_a_nul_in_the_tracking_page_path_is_a_404_not_a_500():
    assert Client().get("/track/abc%00").status_code == 404


@pytest.mark.parametrize(
    "query",
    ["status=%00", "date=2030-01-01%00", "zoneId=%00", "x%00=1"],
)
def test_a_nul_in_a_query_string_is_a_400(world, query):
    response = managing(world).get(f"{world.manage}/orders?{query}")

    assert_error(response, 400, [f"Query string {UNSTORABLE}"])


def test_a_nul_in_a_header_is_a_400(world):
    response = Client(headers={"X-API-Key": world.keys["partner_a"] + "\x00"}).get(
        f"{PARTNER_ORDERS}/{world.ids['partner_ref']}"
    )

    assert_error(response, 400, [f"Header X-Api-Key {UNSTORABLE}"])


# ----- dates at the edges of the calendar, one date format -----

EDGE_DATE_TIMES = [
    "0001-01-01T00:00:00+14:00",
    "0001-01-01T00:00:00",
    "9999-12-31T23:59:59-14:00",
    "9999-12-31T23:59:59.999999-01:00",
    "9999-12-31T23:59:59",
]


@pytest.mark.parametrize("moment", EDGE_DATE_TIMES)
def test_a_window_at_the_edge_of_the_calendar_is_a_400(world, moment):
    body = partner_order_body("PO-edge", deliveryWindowStart=moment)
    response = post_json(keyed(world, "partner_a"), PARTNER_ORDERS, body)

    assert_error(response, 400, ["deliveryWindowStart must be an ISO 8601 date-time"])


@pytest.mark.parametrize(
    "moment", ["20300106T0800", "2030-W01-1T08:00", "2030-01-06 08:00", " 2030-01-06T08:00"]
)
def test_a_window_in_another_iso_form_is_a_400(world, moment):
    body = partner_order_body("PO-form", deliveryWindowStart=moment)
    response = post_json(keyed(world, "partner_a"), PARTNER_ORDERS, body)

    assert_error(response, 400, ["deliveryWindowStart must be an ISO 8601 date-time"])


BAD_DATES = [
    "0001-01-01",
    "9999-12-31",
    "2030-1-6",
    "2030-01-6",
    " 2030-01-06",
    "2030-01-06 ",
    "+2030-01-06",
    "\uff12\uff10\uff13\uff10-01-06",  # full-width digits
    "20300106",
]


@pytest.mark.parametrize("day", BAD_DATES)
def test_every_date_field_refuses_the_same_dates_with_the_same_message(world, day):
    erp = keyed(world, "erp")
    standard = keyed(world, "standard")
    template, zone = world.ids["template_id"], world.ids["zone_id"]
    q = quote(day)

    answers = {
        "deliverySlotDate": post_json(erp, ERP_ORDERS, erp_order_body("SO-d", template, day)),
        "date": managing(world).get(f"{world.manage}/orders?date={q}"),
        "startDate": standard.get(
            f"/api/public/delivery-slots/availability/bulk?zoneId={zone}"
            f"&startDate={q}&endDate=2030-01-10"
        ),
        "endDate": standard.get(
            f"/api/public/delivery-slots/availability/bulk?zoneId={zone}"
            f"&startDate=2030-01-05&endDate={q}"
        ),
    }
    windows = keyed(world, "partner_a").get(
        f"/api/integrations/partner-a/delivery-windows?zone=x&date={q}"
    )
    day_availability = standard.get(
        f"/api/public/delivery-slots/availability?zoneId={zone}&date={q}"
    )

    for field, response in answers.items():
        assert_error(response, 400, [f"{field} must be a valid date (format: YYYY-MM-DD)"])
    for response in (windows, day_availability):
        assert_error(response, 400, "date must be a valid date (format: YYYY-MM-DD)")


def test_an_empty_date_query_is_missing_not_invalid(world):
    response = keyed(world, "partner_a").get(
        "/api/integrations/partner-a/delivery-windows?zone=x&date="
    )

    assert_error(response, 400, ["date query parameter is required (format: YYYY-MM-DD)"])


# ----- integers beyond what the database holds -----


@pytest.mark.parametrize("page", ["1000001", str(2**63), "9" * 40])
def test_a_page_beyond_the_limit_is_a_400(world, page):
    manager = managing(world)

    orders = manager.get(f"{world.manage}/orders?page={page}")
    deliveries = manager.get(f"{world.manage}/webhook-deliveries?page={page}")

    assert_error(orders, 400, ["page must be at most 1000000"])
    assert deliveries.status_code == 400, deliveries.content


def test_the_last_allowed_page_is_an_empty_page(world):
    response = managing(world).get(f"{world.manage}/orders?page=1000000&pageSize=100")

    assert response.status_code == 200, response.content
    assert response.json()["items"] == []


# ----- time zones by their IANA names -----


@pytest.mark.parametrize("name", ["localtime", "Factory", "posixrules", "posix/Europe/Berlin"])
def test_a_file_of_the_zone_database_that_is_no_zone_is_refused(world, name):
    manager = managing(world)

    zone = post_json_patch(
        manager, f"{world.manage}/zones/{world.ids['zone_id']}", {"timezone": name}
    )
    policy = manager.put(
        f"{world.manage}/slot-policy", json.dumps({"timezone": name}), "application/json"
    )

    assert_error(zone, 400, [f"timezone {name} is not an IANA time zone name"])
    assert_error(policy, 400, [f"timezone {name} is not an IANA time zone name"])


@pytest.mark.parametrize("name", ["Europe/Berlin", "Etc/GMT+2", "US/Pacific", "UTC", "GB"])
def test_canonical_and_backward_names_are_accepted(world, name):
    response = post_json_patch(
        managing(world), f"{world.manage}/zones/{world.ids['zone_id']}", {"timezone": name}
    )

    assert response.status_code == 200, response.content
    assert response.json()["timezone"] == name


# ----- an externalRef its paths can give back -----


@pytest.mark.parametrize(
    ("ref", "why"),
    [
        ("PO-1/release", "must not end with /release"),
        ("PO-1/cancel", "must not end with /cancel"),
        ("SO-1/delivery-slot", "must not end with /delivery-slot"),
        ("PO-1/", "must not begin or end with / or contain //"),
        ("/PO-1", "must not begin or end with / or contain //"),
        ("PO//1", "must not begin or end with / or contain //"),
        ("PO/../1", "must not have . or .. between slashes"),
        ("./PO-1", "must not have . or .. between slashes"),
    ],
)
def test_an_external_ref_its_paths_cannot_give_back_is_refused(world, ref, why):
    partner = post_json(keyed(world, "partner_a"), PARTNER_ORDERS, partner_order_body(ref))
    erp = post_json(
        keyed(world, "erp"),
        ERP_ORDERS,
        erp_order_body(ref, world.ids["template_id"], world.ids["slot_date"]),
    )

    for response in (partner, erp):
        assert_error(response, 400)
        (message,) = response.json()["message"]
        assert message.startswith(f"externalRef {why}"), message


@pytest.mark.parametrize("ref", ["PO/2026/1", "release", "cancel/PO-7", "a:b.c#d_e"])
def test_an_accepted_external_ref_reads_back_by_its_path(world, ref):
    client = keyed(world, "partner_a")
    created = post_json(client, PARTNER_ORDERS, partner_order_body(ref))
    assert created.status_code == 201, created.content

    read = client.get(f"{PARTNER_ORDERS}/{quote(ref, safe='/:')}")
    cancelled = post_json(client, f"{PARTNER_ORDERS}/{quote(ref, safe='/:')}/cancel", {})

    assert read.status_code == 200, read.content
    assert read.json()["externalRef"] == ref
    assert cancelled.status_code == 200, cancelled.content
    assert cancelled.json()["externalRef"] == ref
