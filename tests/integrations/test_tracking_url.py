"""`trackingUrl` on the partner and ERP order answers (contract "Orders"): the public tracking
page of the order, under TRACKING_BASE_URL or, when that is empty, the request's own scheme and
host; built from the order row, with no query of its own."""

from urllib.parse import urlsplit

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from integrations.models import Order
from tests import builders

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("traveller")]

PARTNER_PATHS = ["partner-a", "partner-b", "partner-c"]


@pytest.fixture
def zone(organization):
    return builders.zone(organization)


@pytest.fixture
def template(organization):
    """Sundays 08:00-12:00 in Berlin (a slot zone of its own)."""
    zone = builders.slot_zone(organization, name="Slots")
    return builders.slot_template(zone, day_of_week=0, start="08:00", capacity=3)


def partner_client(organization, family_path: str):
    return builders.partner_client(organization, family_path.replace("-", "_"))


@pytest.mark.parametrize("family_path", PARTNER_PATHS)
def test_partner_create_read_and_cancel_answer_the_tracking_page_of_this_host(
    organization, zone, family_path
):
    client = partner_client(organization, family_path)
    orders = f"/api/integrations/{family_path}/orders"

    created = builders.create_order(client, orders)
    read = client.get(f"{orders}/PO-1001", HTTP_HOST="delivery.example:8443", secure=True)
    cancelled = client.post(f"{orders}/PO-1001/cancel")

    token = Order.objects.get().tracking_token
    assert created.status_code == 201, created.content
    assert created.json()["trackingUrl"] == f"http://testserver/track/{token}"
    assert read.json()["trackingUrl"] == f"https://delivery.example:8443/track/{token}"
    assert cancelled.json()["trackingUrl"] == f"http://testserver/track/{token}"


@pytest.mark.parametrize("family_path", PARTNER_PATHS)
def test_partner_answers_use_tracking_base_url_when_set(organization, zone, settings, family_path):
    settings.TRACKING_BASE_URL = "https://track.example.com/"
    client = partner_client(organization, family_path)
    orders = f"/api/integrations/{family_path}/orders"

    created = builders.create_order(client, orders).json()
    read = client.get(f"{orders}/PO-1001").json()

    token = Order.objects.get().tracking_token
    assert (
        created["trackingUrl"] == read["trackingUrl"] == f"https://track.example.com/track/{token}"
    )


def test_the_tracking_url_opens_the_orders_tracking_page(organization, zone, api_client):
    client = partner_client(organization, "partner-a")
    url = builders.create_order(client).json()["trackingUrl"]

    page = api_client.get(urlsplit(url).path)
    unknown = api_client.get(urlsplit(url).path[:-4] + "AAAA")

    assert page.status_code == 200
    assert page["Content-Type"].startswith("text/html")
    assert unknown.status_code == 404  # the page is this order's, not any page


def test_erp_create_read_and_cancel_answer_the_tracking_page(organization, template):
    client = builders.erp_client(organization)

    created = builders.book(client, template, builders.SUNDAY)
    read = client.get("/api/integrations/erp/orders/SO-1001", HTTP_HOST="erp.example")
    cancelled = client.post("/api/integrations/erp/orders/SO-1001/cancel")

    token = Order.objects.get().tracking_token
    assert created.status_code == 201, created.content
    assert created.json()["trackingUrl"] == f"http://testserver/track/{token}"
    assert read.json()["trackingUrl"] == f"http://erp.example/track/{token}"
    assert cancelled.json()["trackingUrl"] == f"http://testserver/track/{token}"


def test_erp_answers_use_tracking_base_url_when_set(organization, template, settings):
    settings.TRACKING_BASE_URL = "https://track.example.com/shop"
    client = builders.erp_client(organization)

    created = builders.book(client, template, builders.SUNDAY).json()
    read = client.get("/api/integrations/erp/orders/SO-1001").json()

    token = Order.objects.get().tracking_token
    assert created["trackingUrl"] == read["trackingUrl"]
    assert read["trackingUrl"] == f"https://track.example.com/shop/track/{token}"


@pytest.mark.parametrize("base", ["", "https://track.example.com"])
def test_reads_make_no_query_for_the_tracking_url(organization, zone, template, settings, base):
    """The token is on the order row: the reads keep their shape, with or without the setting
    (partner: the order; ERP: the order and its slot booking)."""
    settings.TRACKING_BASE_URL = base
    partner = partner_client(organization, "partner-a")
    erp = builders.erp_client(organization)
    builders.create_order(partner)
    builders.book(erp, template, builders.SUNDAY)

    with CaptureQueriesContext(connection) as partner_read:
        partner_body = partner.get("/api/integrations/partner-a/orders/PO-1001").json()
    with CaptureQueriesContext(connection) as erp_read:
        erp_body = erp.get("/api/integrations/erp/orders/SO-1001").json()

    assert partner_body["trackingUrl"].endswith(f"/track/{partner_body['trackingToken']}")
    assert erp_body["trackingUrl"].endswith(f"/track/{erp_body['trackingToken']}")
    assert len(partner_read.captured_queries) == 1, partner_read.captured_queries
    erp_tables = [q["sql"].split(" FROM ")[1].split()[0] for q in erp_read.captured_queries]
    assert erp_tables == ['"integrations_order"', '"slots_slotbooking"'], erp_tables
