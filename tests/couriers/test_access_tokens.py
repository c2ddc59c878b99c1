"""Drivers' access tokens (docs/contract.md "Couriers"): issued by an admin, shown once, stored
hashed, ended at once by a new token, a revoke, or the driver or organization made inactive."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from couriers.models import DriverAccessToken
from tenants import models as tenant_models
from tenants import services as tenant_services
from tenants.services import secret_digest
from tests import builders
from tests.conftest import assert_error

pytestmark = pytest.mark.django_db

ROUTE = "/api/courier/route"


def token_path(organization, driver) -> str:
    return f"/api/manage/organizations/{organization.id}/drivers/{driver.id}/access-token"


def bearer(value: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {value}")
    return client


def test_an_admin_issues_a_token_shown_once_and_stored_hashed(organization, manager):
    driver = builders.driver(organization)

    response = manager.post(token_path(organization, driver))

    assert response.status_code == 201, response.content
    body = response.json()
    assert set(body) == {"token", "createdAt"}
    assert body["token"].startswith("drv_")
    stored = DriverAccessToken.objects.get(driver=driver)
    assert stored.digest == secret_digest(body["token"])
    assert body["token"] not in str(list(DriverAccessToken.objects.values()))
    assert bearer(body["token"]).get(ROUTE).status_code == 200


def test_a_new_token_ends_the_old_one_at_once(organization, manager):
    driver = builders.driver(organization)
    first = manager.post(token_path(organization, driver)).json()["token"]
    second = manager.post(token_path(organization, driver)).json()["token"]

    assert_error(bearer(first).get(ROUTE), 401, "Invalid or missing token", code="token_invalid")
    assert bearer(second).get(ROUTE).status_code == 200


def test_a_revoked_token_is_refused_at_once(organization, manager):
    driver = builders.driver(organization)
    value = manager.post(token_path(organization, driver)).json()["token"]
    assert bearer(value).get(ROUTE).status_code == 200

    response = manager.delete(token_path(organization, driver))

    assert response.status_code == 204
    assert_error(bearer(value).get(ROUTE), 401, "Invalid or missing token")
    # Ending it again (no token left) is still a 204.
    assert manager.delete(token_path(organization, driver)).status_code == 204


def test_a_known_token_is_read_from_the_key_cache(organization):
    value = builders.courier_token(builders.driver(organization))
    assert bearer(value).get(ROUTE).status_code == 200

    with CaptureQueriesContext(connection) as queries:
        assert bearer(value).get(ROUTE).status_code == 200

    assert not [q for q in queries.captured_queries if "couriers_driveraccesstoken" in q["sql"]]


def test_a_cached_token_ends_when_a_new_one_is_issued(organization, manager):
    driver = builders.driver(organization)
    first = manager.post(token_path(organization, driver)).json()["token"]
    assert bearer(first).get(ROUTE).status_code == 200  # now in the key cache

    second = manager.post(token_path(organization, driver)).json()["token"]

    assert_error(bearer(first).get(ROUTE), 401, "Invalid or missing token")
    assert bearer(second).get(ROUTE).status_code == 200


def test_a_bulk_deactivation_or_a_deleted_token_row_ends_a_cached_token(organization):
    driver, other = builders.driver(organization), builders.driver(organization, name="Other")
    value, other_value = builders.courier_token(driver), builders.courier_token(other)
    assert bearer(value).get(ROUTE).status_code == 200
    assert bearer(other_value).get(ROUTE).status_code == 200

    tenant_models.Driver.objects.filter(pk=driver.pk).update(is_active=False)
    DriverAccessToken.objects.filter(driver=other).delete()

    assert_error(bearer(value).get(ROUTE), 401, "Invalid or missing token")
    assert_error(bearer(other_value).get(ROUTE), 401, "Invalid or missing token")


def test_an_inactive_driver_or_organization_ends_the_token(organization):
    driver = builders.driver(organization)
    value = builders.courier_token(driver)

    tenant_services.driver_update(driver=driver, is_active=False)
    assert_error(bearer(value).get(ROUTE), 401, "Invalid or missing token")

    tenant_services.driver_update(driver=driver, is_active=True)
    assert bearer(value).get(ROUTE).status_code == 200
    organization.is_active = False
    organization.save()
    assert_error(bearer(value).get(ROUTE), 401, "Invalid or missing token")


@pytest.mark.parametrize(
    "header", [None, "Bearer", "Bearer drv_unknown", "Token abc", "Basic dXNlcjpwYXNz"]
)
def test_a_missing_malformed_or_unknown_token_is_a_401(db, header):
    client = APIClient()
    if header is not None:
        client.credentials(HTTP_AUTHORIZATION=header)

    assert_error(client.get(ROUTE), 401, "Invalid or missing token")


def test_a_management_token_is_not_a_courier_token(organization):
    builders.admin(organization, "ops@example.com")
    _, login = builders.bearer_login("ops@example.com")

    assert_error(bearer(login["token"]).get(ROUTE), 401, "Invalid or missing token")


def test_another_organizations_driver_is_not_found(organization, other_organization, manager):
    stranger = builders.driver(other_organization)

    assert_error(manager.post(token_path(organization, stranger)), 404, "Driver not found")
    assert_error(manager.delete(token_path(organization, stranger)), 404, "Driver not found")
    assert not DriverAccessToken.objects.exists()


def test_the_courier_api_is_rate_limited_per_driver(organization, settings):
    settings.COURIER_RATE_LIMIT = "2/m"
    client = builders.courier_client(builders.driver(organization))

    assert client.get(ROUTE).status_code == 200
    assert client.get(ROUTE).status_code == 200
    response = client.get(ROUTE)
    assert_error(response, 429, "Too many requests")
    assert int(response["Retry-After"]) >= 1


def test_admin_issues_a_token_and_its_sign_in_link_once(organization):
    driver = builders.driver(organization)
    site = builders.admin_site_client(organization)

    response = site.post(
        "/admin/tenants/driver/",
        {"action": "issue_courier_token", "_selected_action": [str(driver.id)]},
    )

    assert response.status_code == 200
    page = response.content.decode()
    stored = DriverAccessToken.objects.get(driver=driver)
    value = page.split("<code>")[1].split("</code>")[0]
    assert value.startswith("drv_") and secret_digest(value) == stored.digest
    assert f"/courier/#token={value}" in page
    assert bearer(value).get(ROUTE).status_code == 200

    site.post(
        "/admin/tenants/driver/",
        {"action": "end_courier_token", "_selected_action": [str(driver.id)]},
    )
    assert_error(bearer(value).get(ROUTE), 401, "Invalid or missing token")
