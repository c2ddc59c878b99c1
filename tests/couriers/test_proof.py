"""Proof of delivery reads (docs/contract.md "Couriers", "Proof"): management and partner APIs,
signed URLs served by the service that expire after 10 minutes, and the proof in Django admin."""

import datetime as dt
import io

import pytest
from PIL import Image
from rest_framework.test import APIClient

from tests import builders
from tests.conftest import assert_error
from tests.couriers.conftest import BARCODE
from tests.couriers.test_events import png_data_url, send, walk
from tests.couriers.test_photos import image_bytes, upload

pytestmark = pytest.mark.django_db


def proof_path(organization, order) -> str:
    return f"/api/manage/organizations/{organization.id}/orders/{order.id}/proof"


def deliver_with_proof(courier, order) -> None:
    walk(courier, order, "picked_up", "in_transit")
    photo_id = upload(courier, image_bytes()).json()["photoId"]
    response = send(
        courier,
        order,
        {
            "type": "delivered",
            "location": {"lat": 52.5219, "lng": 13.4132},
            "proof": {
                "recipientName": "Ada Lovelace",
                "barcode": BARCODE,
                "signature": png_data_url(),
                "photoIds": [photo_id],
            },
        },
    )
    assert response.status_code == 200, response.content


@pytest.fixture
def delivered(courier, route_orders):
    order = route_orders[1]
    deliver_with_proof(courier, order)
    return order


def test_the_management_api_reads_the_proof_with_signed_urls(organization, manager, delivered):
    response = manager.get(proof_path(organization, delivered))

    assert response.status_code == 200, response.content
    body = response.json()
    assert {key: body[key] for key in body if not key.endswith(("Url", "Urls"))} == {
        "status": "delivered",
        "at": "2026-11-26T09:00:00Z",
        "location": {"lat": 52.5219, "lng": 13.4132, "accuracyM": None},
        "recipientName": "Ada Lovelace",
        "barcode": BARCODE,
        "cashCollected": None,
        "failureReason": None,
        "note": None,
    }
    assert body["signatureUrl"].startswith("http://testserver/api/proof-files/")
    assert len(body["photoUrls"]) == 1
    signature = APIClient().get(body["signatureUrl"])
    assert signature.status_code == 200
    assert signature["Content-Type"] == "image/png"
    assert Image.open(io.BytesIO(b"".join(signature.streaming_content))).format == "PNG"
    photo = APIClient().get(body["photoUrls"][0])
    assert photo["Content-Type"] == "image/jpeg"


def test_proof_urls_expire_after_10_minutes(clock, organization, manager, delivered):
    url = manager.get(proof_path(organization, delivered)).json()["signatureUrl"]

    clock.shift(dt.timedelta(minutes=9, seconds=59))
    assert APIClient().get(url).status_code == 200
    clock.shift(dt.timedelta(seconds=2))
    assert_error(APIClient().get(url), 403, "Proof URL has expired", code="proof_url_expired")
    # A fresh read gives fresh URLs.
    fresh = manager.get(proof_path(organization, delivered)).json()["signatureUrl"]
    assert APIClient().get(fresh).status_code == 200


def test_an_altered_proof_url_is_not_found(organization, manager, delivered):
    url = manager.get(proof_path(organization, delivered)).json()["signatureUrl"]

    assert_error(APIClient().get(url[:-3] + "xyz"), 404)
    assert_error(APIClient().get("/api/proof-files/photos%2Fanything.jpg"), 404)


def test_no_proof_before_the_outcome(organization, manager, route_orders):
    assert_error(manager.get(proof_path(organization, route_orders[0])), 404, "Proof not found")


def test_an_admins_failure_has_a_proof_without_files(organization, manager, route_orders):
    order = route_orders[0]
    response = manager.post(
        f"/api/manage/organizations/{organization.id}/orders/{order.id}/transition",
        {"status": "failed", "failureReason": "access_denied"},
        format="json",
    )
    assert response.status_code == 200, response.content
    assert response.json()["failureReason"] == "access_denied"

    body = manager.get(proof_path(organization, order)).json()

    assert (body["status"], body["failureReason"], body["signatureUrl"], body["photoUrls"]) == (
        "failed",
        "access_denied",
        None,
        [],
    )


def test_an_admins_failure_needs_a_reason(organization, manager, route_orders):
    order = route_orders[0]

    response = manager.post(
        f"/api/manage/organizations/{organization.id}/orders/{order.id}/transition",
        {"status": "failed", "reason": "Nobody home"},
        format="json",
    )

    assert_error(response, 400, ["failureReason is required for status failed"])


def test_another_organizations_admin_does_not_see_the_proof(other_organization, delivered):
    stranger = builders.manager_client(other_organization, "other@example.com")

    response = stranger.get(proof_path(other_organization, delivered))

    assert_error(response, 404, "Order not found")


def test_the_partner_reads_the_proof_of_its_own_orders(organization, delivered):
    partner = builders.partner_client(organization, "partner_a")
    other_platform = builders.partner_client(organization, "partner_b")

    response = partner.get(f"/api/integrations/partner-a/orders/{delivered.external_ref}/proof")

    assert response.status_code == 200, response.content
    assert response.json()["recipientName"] == "Ada Lovelace"
    assert APIClient().get(response.json()["photoUrls"][0]).status_code == 200
    assert_error(
        other_platform.get(f"/api/integrations/partner-b/orders/{delivered.external_ref}/proof"),
        404,
        "Order not found",
    )


def test_another_organizations_key_gets_404(other_organization, delivered):
    stranger = builders.partner_client(other_organization)

    response = stranger.get(f"/api/integrations/partner-a/orders/{delivered.external_ref}/proof")

    assert_error(response, 404, "Order not found")


def test_admin_shows_the_proof_on_the_order(organization, delivered):
    site = builders.admin_site_client(organization, "site@example.com")

    page = site.get(f"/admin/integrations/order/{delivered.id}/change/").content.decode()

    assert "Ada Lovelace" in page
    assert "/api/proof-files/" in page


def test_the_route_lists_the_days_stops(courier, route_orders):
    response = courier.get("/api/courier/route", {"date": "2026-11-26"})

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["date"] == "2026-11-26"
    assert [stop["externalRef"] for stop in body["stops"]] == ["SO-1", "SO-2", "SO-3"]
    first = body["stops"][0]
    assert first["eta"] == "2026-11-26T10:15:00+01:00"
    assert (first["sequence"], first["kind"], first["address"], first["status"]) == (
        1,
        "delivery",
        "Alexanderplatz 1, Berlin",
        "assigned",
    )
    assert body["stops"][2]["codAmount"] == 24.9
    # Today in the driver's zone time is the default.
    assert courier.get("/api/courier/route").json() == body


def test_no_route_that_day(courier, route_orders):
    body = courier.get("/api/courier/route", {"date": "2026-11-27"}).json()

    assert (body["routeId"], body["stops"]) == (None, [])
    assert_error(courier.get("/api/courier/route", {"date": "tomorrow"}), 400)


def test_proof_files_are_rate_limited_per_address(organization, manager, delivered, settings):
    settings.PROOF_FILE_RATE_LIMIT = "1/m"
    url = manager.get(proof_path(organization, delivered)).json()["signatureUrl"]

    assert APIClient().get(url).status_code == 200
    assert_error(APIClient().get(url), 429, "Too many requests")
