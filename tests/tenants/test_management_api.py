"""Management API: tokens, drivers and API keys for organization admins (contract "Management
API")."""

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone
from rest_framework.test import APIClient

from tenants.models import AuthToken, Membership
from tests import builders
from tests.conftest import assert_error

pytestmark = pytest.mark.django_db


def test_login_returns_token_user_and_organizations(organization):
    user = builders.admin(organization, name="Ada Admin")
    _, body = builders.bearer_login()
    assert body["user"] == {"id": str(user.id), "email": "admin@example.com", "name": "Ada Admin"}
    assert body["organizations"] == [
        {
            "id": str(organization.id),
            "slug": organization.slug,
            "name": organization.name,
            "orgRole": "admin",
        }
    ]
    expires = timezone.datetime.fromisoformat(body["expiresAt"])
    assert abs(expires - (timezone.now() + timedelta(hours=12))) < timedelta(minutes=1)
    assert not AuthToken.objects.filter(digest=body["token"]).exists()  # stored hashed


def test_wrong_password_is_401(organization):
    builders.admin(organization)
    response = APIClient().post(
        "/api/auth/token", {"email": "admin@example.com", "password": "nope"}, format="json"
    )
    assert_error(response, 401)


@pytest.mark.parametrize("header", [None, "Bearer", "Bearer made-up", "Basic abc", "bearer "])
def test_missing_or_bad_token_is_401(organization, header):
    client = APIClient()
    if header is not None:
        client.credentials(HTTP_AUTHORIZATION=header)
    response = client.get(f"/api/manage/organizations/{organization.id}/drivers")
    assert_error(response, 401, "Invalid or missing token")


def test_token_expires_after_12_hours(organization):
    client = builders.manager_client(organization, "admin@example.com")
    with time_machine.travel(timezone.now() + timedelta(hours=12, minutes=1)):
        response = client.get(f"/api/manage/organizations/{organization.id}/drivers")
        assert_error(response, 401, "Invalid or missing token")


def test_logout_ends_the_token(organization):
    client = builders.manager_client(organization, "admin@example.com")
    assert client.delete("/api/auth/token").status_code == 204
    assert_error(client.get(f"/api/manage/organizations/{organization.id}/drivers"), 401)


def test_admin_of_another_organization_gets_404(organization, other_organization):
    client = builders.manager_client(organization, "admin@example.com")
    for path in ("drivers", "api-keys"):
        response = client.get(f"/api/manage/organizations/{other_organization.id}/{path}")
        assert_error(response, 404, "Organization not found")


def test_pending_admin_cannot_manage(organization):
    user = builders.admin(organization)
    Membership.objects.filter(user=user).update(is_active=False)
    client, _ = builders.bearer_login()
    assert_error(client.get(f"/api/manage/organizations/{organization.id}/drivers"), 404)


def test_drivers_crud(organization):
    client = builders.manager_client(organization, "admin@example.com")
    base = f"/api/manage/organizations/{organization.id}/drivers"

    created = client.post(
        base,
        {"name": "Dee Driver", "phone": "+49 (30) 123-4567", "vehicleType": "van"},
        format="json",
    )
    assert created.status_code == 201
    driver = created.json()
    assert driver == {
        "id": driver["id"],
        "name": "Dee Driver",
        "phone": "+49301234567",
        "vehicleType": "van",
        "isActive": True,
        # issue 26 (contract "Dispatch"): the dispatch fields, at their defaults
        "capacity": None,
        "effectiveCapacity": 10,
        "shiftStart": "08:00",
        "shiftEnd": "20:00",
        "zoneIds": [],
    }
    assert client.get(base).json() == [driver]
    assert client.get(f"{base}/{driver['id']}").json() == driver

    patched = client.patch(f"{base}/{driver['id']}", {"isActive": False}, format="json")
    assert patched.status_code == 200
    assert patched.json()["isActive"] is False
    assert patched.json()["name"] == "Dee Driver"


def test_driver_validation(organization):
    client = builders.manager_client(organization, "admin@example.com")
    base = f"/api/manage/organizations/{organization.id}/drivers"
    body = assert_error(client.post(base, {"phone": "call me"}, format="json"), 400)
    assert body["message"] == [
        "name is required",
        "phone: must be a phone number: + optional, then 7 to 15 digits",
    ]


def test_drivers_of_another_organization_are_404(organization, other_organization):
    builders.admin(organization)
    builders.admin(other_organization, email="other@example.com")
    other_client, _ = builders.bearer_login("other@example.com")
    foreign = other_client.post(
        f"/api/manage/organizations/{other_organization.id}/drivers",
        {"name": "Theirs"},
        format="json",
    ).json()
    client, _ = builders.bearer_login()
    response = client.get(f"/api/manage/organizations/{organization.id}/drivers/{foreign['id']}")
    assert_error(response, 404, "Driver not found")


def test_api_keys_through_management_api(organization):
    client = builders.manager_client(organization, "admin@example.com")
    base = f"/api/manage/organizations/{organization.id}/api-keys"
    created = client.post(base, {"name": "ERP", "platform": "erp"}, format="json")
    assert created.status_code == 201
    assert created.json()["apiKey"].startswith("sk_erp_")
    listed = client.get(base).json()
    assert [k["apiKey"].endswith("****") for k in listed] == [True]
    assert_error(client.post(base, {"name": "ERP 2", "platform": "erp"}, format="json"), 409)
