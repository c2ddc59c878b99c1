"""Both families' orders are trackable end to end: created through their own APIs, followed
through the public tracking API and page (contract "Tracking"; contract "Tracking")."""

from datetime import UTC, datetime

import pytest
import time_machine

from tests import builders
from tests.tracking.html import Page, assert_self_contained

pytestmark = pytest.mark.django_db

#: Tuesday 1 January 2030, 09:00 UTC; deliveries are for Sunday 6 January (Berlin, +01:00)
NOW = datetime(2030, 1, 1, 9, 0, tzinfo=UTC)
MITTE = {
    "type": "Polygon",
    "coordinates": [
        [[13.37, 52.50], [13.43, 52.50], [13.43, 52.54], [13.37, 52.54], [13.37, 52.50]]
    ],
}
RECIPIENT = {
    "pickupAddress": "Warehouse, Storkower Str. 1, Berlin",
    "pickupLat": 52.53,
    "pickupLng": 13.45,
    "dropoffAddress": "Karl-Liebknecht-Str. 9, Berlin",
    "dropoffLat": 52.52,
    "dropoffLng": 13.40,
    "recipientName": "Ada Lovelace",
    "recipientPhone": "+491701234567",
    "packageSize": "small",
}


@pytest.fixture(autouse=True)
def _frozen_now():
    with time_machine.travel(NOW, tick=False):
        yield


def _instant(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _assert_nothing_private(text: str, order_id: str, external_ref: str) -> None:
    leaked = [
        value
        for value in (
            RECIPIENT["recipientName"],
            RECIPIENT["recipientPhone"],
            RECIPIENT["dropoffAddress"],
            RECIPIENT["pickupAddress"],
            "52.52",
            "13.4",
            order_id,
            external_ref,
        )
        if value in text
    ]
    assert leaked == []


def test_partner_order_is_trackable_from_its_token(api_client, client, organization):
    builders.zone(organization, "Mitte", MITTE, purpose="both")
    partner = builders.key_client(builders.api_key(organization, "partner_a"))
    created = partner.post(
        "/api/integrations/partner-a/orders",
        {**RECIPIENT, "externalRef": "PO-7", "deliveryWindowStart": "2030-01-06T09:00:00+01:00"},
        format="json",
    )
    assert created.status_code == 201, created.content
    order = partner.get("/api/integrations/partner-a/orders/PO-7").json()
    token = order["trackingToken"]

    tracked = api_client.get(f"/api/track/{token}")

    body = tracked.json()
    assert body["trackingToken"] == token == created.json()["trackingToken"]
    assert body["status"] == "pending"
    assert body["driver"] is None
    assert body["events"] == [{"status": "pending", "at": "2030-01-01T09:00:00Z"}]
    assert _instant(body["deliveryWindowStart"]) == _instant(order["deliveryWindowStart"])
    assert _instant(body["deliveryWindowEnd"]) == _instant(order["deliveryWindowEnd"])
    _assert_nothing_private(tracked.content.decode(), order["serviceOrderId"], "PO-7")

    page = client.get(f"/track/{token}")
    html = page.content.decode()
    assert page.status_code == 200
    assert Page(html).text("status-title") == "Order received"
    assert Page(html).text("window").startswith("Sunday 6 January, ")
    assert Page(html).text("sender") == organization.name
    _assert_nothing_private(html, order["serviceOrderId"], "PO-7")
    assert_self_contained(html)


def test_erp_order_is_trackable_and_shows_its_slot_in_zone_time(api_client, client, organization):
    zone = builders.slot_zone(organization, "Mitte", geodata=MITTE)
    template = builders.slot_template(zone, day_of_week=0, capacity=5)  # Sunday 08:00-12:00
    erp = builders.key_client(builders.api_key(organization, "erp"))
    created = erp.post(
        "/api/integrations/erp/orders",
        {
            **RECIPIENT,
            "externalRef": "SO-7",
            "deliverySlotTemplateId": str(template.id),
            "deliverySlotDate": "2030-01-06",
        },
        format="json",
    )
    assert created.status_code == 201, created.content
    token = created.json()["trackingToken"]

    body = api_client.get(f"/api/track/{token}").json()

    assert body["status"] == "pending"
    assert _instant(body["deliveryWindowStart"]) == datetime(2030, 1, 6, 7, 0, tzinfo=UTC)
    assert _instant(body["deliveryWindowEnd"]) == datetime(2030, 1, 6, 11, 0, tzinfo=UTC)
    page = Page(client.get(f"/track/{token}").content.decode())
    assert page.text("window") == "Sunday 6 January, 08:00\u201312:00"
    assert page.text("time-zone-note") == "Times are shown in Europe/Berlin time."

    cancelled = erp.post("/api/integrations/erp/orders/SO-7/cancel", {}, format="json")
    assert cancelled.status_code == 200, cancelled.content

    body = api_client.get(f"/api/track/{token}").json()
    assert body["status"] == "cancelled"
    assert [event["status"] for event in body["events"]] == ["pending", "cancelled"]
    html = client.get(f"/track/{token}").content.decode()
    assert Page(html).text("status-title") == "Cancelled"
    _assert_nothing_private(html, created.json()["id"], "SO-7")
