"""In the OpenAPI document, each integration's operations name their integration and the key they
take (tenants.api_bases.IntegrationSchema): partner-a, partner-b and partner-c are served by one
set of views, and a client of one platform reads its own operations apart from the others'."""

import pytest
from django.test import Client

from tenants.authentication import INTEGRATION_PLATFORMS

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def paths(django_db_blocker) -> dict:
    with django_db_blocker.unblock():
        response = Client().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    return response.json()["paths"]


@pytest.mark.parametrize(
    ("integration", "path"),
    [
        ("partner-a", "/api/integrations/partner-a/orders/{external_ref}/cancel"),
        ("partner-b", "/api/integrations/partner-b/orders/{external_ref}/cancel"),
        ("partner-c", "/api/integrations/partner-c/orders/{external_ref}/cancel"),
        ("erp", "/api/integrations/erp/orders/{external_ref}/cancel"),
    ],
)
def test_an_integration_operation_names_its_integration_and_its_key(paths, integration, path):
    operation = paths[path]["post"]
    paragraphs = operation["description"].split("\n\n")
    caller = (
        f"Called with an `X-API-Key` of platform `{INTEGRATION_PLATFORMS[integration]}` (401 "
        "`Missing X-API-Key header` or `Invalid API key`); another platform's key: 403 `API key "
        f"does not match {integration} integration`."
    )

    assert operation["summary"].endswith(f" ({integration})")
    # what the operation does first, then who calls it, then its own list of errors
    assert paragraphs.index(caller) == paragraphs.index("Errors:") - 1 > 0


def test_the_partner_platforms_read_as_three_operations(paths):
    creates = [
        paths[f"/api/integrations/{name}/orders"]["post"]
        for name in ("partner-a", "partner-b", "partner-c")
    ]

    assert len({create["summary"] for create in creates}) == 3
    assert len({create["description"] for create in creates}) == 3
    assert {create["operationId"] for create in creates} == {
        "integrations_partner_a_orders_create",
        "integrations_partner_b_orders_create",
        "integrations_partner_c_orders_create",
    }


def test_an_operation_outside_the_integrations_names_no_integration(paths):
    operation = paths["/api/promises/resolve-zone"]["post"]

    assert operation["summary"] == "Resolve an address to its delivery zone"
    assert "another platform's key" not in operation["description"]
