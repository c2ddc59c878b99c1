"""Test keys (docs/webhooks.md "Sandbox"): `test: true|false` at creation, through provisioning
and the management API, shown in the key's listing, false by default, fixed afterwards."""

import pytest

from tenants.models import ApiKey
from tests import builders
from tests.conftest import assert_error

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def provisioning_keys(organization) -> str:
    return f"/api/provisioning/organizations/{organization.id}/api-keys"


def management_keys(organization) -> str:
    return f"/api/manage/organizations/{organization.id}/api-keys"


def test_provisioning_creates_a_test_key_and_lists_it(provisioning_client, organization):
    created = provisioning_client.post(
        provisioning_keys(organization),
        {"name": "Sandbox", "platform": "partner_a", "test": True},
        format="json",
    )
    live = provisioning_client.post(
        provisioning_keys(organization), {"name": "Live", "platform": "erp"}, format="json"
    )

    assert created.status_code == 201, created.content
    assert created.json()["test"] is True
    assert live.json()["test"] is False  # the default
    assert ApiKey.objects.get(pk=created.json()["id"]).test is True
    listed = provisioning_client.get(provisioning_keys(organization)).json()
    assert {key["name"]: key["test"] for key in listed} == {"Sandbox": True, "Live": False}


def test_management_api_creates_a_test_key_and_lists_it(organization):
    manager = builders.manager_client(organization)

    created = manager.post(
        management_keys(organization), {"name": "Sandbox", "test": True}, format="json"
    )

    assert created.status_code == 201, created.content
    assert created.json()["test"] is True
    assert [key["test"] for key in manager.get(management_keys(organization)).json()] == [True]


@pytest.mark.parametrize("value", ["true", 1, None])
def test_test_must_be_a_boolean(provisioning_client, organization, value):
    response = provisioning_client.post(
        provisioning_keys(organization), {"name": "Sandbox", "test": value}, format="json"
    )

    assert_error(response, 400)
    assert any(message.startswith("test") for message in response.json()["message"])


def test_an_update_does_not_change_it(provisioning_client, organization):
    created = provisioning_client.post(
        provisioning_keys(organization), {"name": "Sandbox", "test": True}, format="json"
    ).json()

    provisioning_client.post(
        f"{provisioning_keys(organization)}/{created['id']}",
        {"name": "Renamed", "test": False},
        format="json",
    )

    assert ApiKey.objects.get(pk=created["id"]).test is True


def test_admin_creates_a_test_key_and_cannot_change_it_afterwards(organization):
    client = builders.admin_site_client(organization)

    client.post(
        "/admin/tenants/apikey/add/",
        {
            "organization": str(organization.id),
            "name": "Sandbox from admin",
            "platform": "partner_a",
            "test": "on",
            "webhook_url": "",
        },
        follow=True,
    )
    api_key = ApiKey.objects.get(name="Sandbox from admin")
    client.post(
        f"/admin/tenants/apikey/{api_key.pk}/change/",
        {"name": "Renamed", "webhook_url": "", "test": ""},
        follow=True,
    )

    api_key.refresh_from_db()
    assert (api_key.name, api_key.test) == ("Renamed", True)
