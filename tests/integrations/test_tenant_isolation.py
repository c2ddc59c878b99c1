"""Tenants never see each other's orders; keys only work on their own family (contract
"Authentication and scope")."""

import pytest

from integrations.models import Order
from tenants.services import api_key_revoke
from tests import builders
from tests.conftest import assert_error

pytestmark = pytest.mark.django_db


@pytest.fixture
def ours(organization):
    builders.zone(organization)
    return builders.partner_client(organization)


@pytest.fixture
def theirs(other_organization):
    builders.zone(other_organization)
    return builders.partner_client(other_organization)


@pytest.mark.parametrize("action", ["get", "release", "cancel"])
def test_another_organizations_external_ref_is_404(ours, theirs, action):
    assert builders.create_order(theirs, externalRef="THEIRS-1").status_code == 201
    path = "/api/integrations/partner-a/orders/THEIRS-1"

    response = ours.get(path) if action == "get" else ours.post(f"{path}/{action}")

    assert_error(response, 404, "Order not found")
    assert Order.objects.get().status == "pending"


def test_erp_orders_are_not_partner_orders(ours, organization):
    Order.objects.create(
        organization=organization, family="erp", platform="erp", external_ref="ERP-1"
    )

    assert_error(ours.get("/api/integrations/partner-a/orders/ERP-1"), 404, "Order not found")


@pytest.mark.parametrize(
    ("platform", "path", "integration"),
    [
        ("partner_b", "/api/integrations/partner-a/orders", "partner-a"),
        ("partner_a", "/api/integrations/partner-b/orders", "partner-b"),
        ("standard", "/api/integrations/partner-c/orders", "partner-c"),
        ("erp", "/api/integrations/partner-a/orders", "partner-a"),
        ("partner_c", "/api/integrations/partner-a/delivery-windows", "partner-a"),
        ("partner_b", "/api/integrations/partner-a/orders/X-1", "partner-a"),
        ("partner_b", "/api/integrations/partner-a/orders/X-1/release", "partner-a"),
        ("partner_b", "/api/integrations/partner-a/orders/X-1/cancel", "partner-a"),
    ],
)
def test_key_of_another_platform_is_403(organization, platform, path, integration):
    client = builders.partner_client(organization, platform)

    if "windows" in path or path.endswith("X-1"):
        response = client.get(path)
    else:
        response = client.post(path, builders.partner_order(), format="json")

    assert_error(response, 403, f"API key does not match {integration} integration")


@pytest.mark.parametrize(
    ("platform", "integration"), [("partner_b", "partner-b"), ("partner_c", "partner-c")]
)
def test_partner_b_and_c_are_served_the_same_way(organization, platform, integration):
    builders.zone(organization)
    client = builders.partner_client(organization, platform)
    base = f"/api/integrations/{integration}"

    created = builders.create_order(client, path=f"{base}/orders")
    read = client.get(f"{base}/orders/PO-1001")
    windows = client.get(f"{base}/delivery-windows", {"zone": "Mitte", "date": "2030-01-06"})

    assert created.status_code == 201, created.content
    assert Order.objects.get().platform == platform
    assert read.json()["status"] == "pending"
    assert len(windows.json()["windows"]) == 3


def test_missing_key_is_401(api_client):
    response = api_client.post(
        "/api/integrations/partner-a/orders", builders.partner_order(), format="json"
    )

    assert_error(response, 401, "Missing X-API-Key header")


def test_revoked_key_is_401(organization):
    builders.zone(organization)
    issued = builders.api_key(organization, "partner_a")
    api_key_revoke(api_key=issued.api_key)
    response = builders.key_client(issued).post(
        "/api/integrations/partner-a/orders", builders.partner_order(), format="json"
    )

    assert_error(response, 401, "Invalid API key")
