"""Provisioning: API keys (contract "Provisioning", "Authentication and scope"; contract
"Authentication and scope", "Provisioning")."""

import pytest
from rest_framework.test import APIClient

from tenants.models import ApiKey
from tests.conftest import assert_error

pytestmark = pytest.mark.django_db

#: the fields of an API key in every answer (contract "Provisioning")
KEY_FIELDS = {
    "id",
    "name",
    "apiKey",
    "platform",
    "test",
    "webhookUrl",
    "webhookEvents",
    "isActive",
    "createdAt",
}

HELLO = "/api/bench/hello-auth"


@pytest.fixture(autouse=True)
def _bench_endpoints(settings):
    settings.BENCH_ENDPOINTS = True


def keys_url(organization) -> str:
    return f"/api/provisioning/organizations/{organization.id}/api-keys"


def create_key(client, organization, **body):
    body.setdefault("name", "Partner A production")
    return client.post(keys_url(organization), body, format="json")


def call_with(value: str):
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=value)
    return client.get(HELLO)


def test_create_key_returns_full_value_and_webhook_secret_once(provisioning_client, organization):
    response = create_key(
        provisioning_client,
        organization,
        platform="partner_a",
        webhookUrl="https://hooks.example.com/a",
    )

    assert response.status_code == 201
    body = response.json()
    assert set(body) == KEY_FIELDS | {"webhookSecret"}  # the secret shows once, here
    assert body["apiKey"].startswith("sk_partner_a_")
    assert len(body["apiKey"]) >= len("sk_partner_a_") + 32
    assert body["webhookSecret"].startswith("whsec_")
    assert body["platform"] == "partner_a"
    assert body["webhookUrl"] == "https://hooks.example.com/a"
    assert body["isActive"] is True
    stored = ApiKey.objects.get(pk=body["id"])
    assert body["apiKey"] not in (stored.digest, stored.encrypted_value, stored.prefix)
    assert body["webhookSecret"] not in stored.encrypted_webhook_secret


def test_platform_defaults_to_standard(provisioning_client, organization):
    assert create_key(provisioning_client, organization).json()["platform"] == "standard"


def test_erp_platform_is_accepted(provisioning_client, organization):
    body = create_key(provisioning_client, organization, platform="erp").json()
    assert body["platform"] == "erp"
    assert body["apiKey"].startswith("sk_erp_")


def test_unknown_platform_is_400(provisioning_client, organization):
    body = assert_error(create_key(provisioning_client, organization, platform="partner_z"), 400)
    assert body["message"] == [
        "platform must be one of: partner_a, partner_b, partner_c, standard, erp"
    ]


def test_key_without_name_is_400(provisioning_client, organization):
    response = provisioning_client.post(keys_url(organization), {}, format="json")
    assert_error(response, 400, ["API key name is required"])


def test_second_key_for_a_platform_is_409(provisioning_client, organization):
    create_key(provisioning_client, organization, platform="partner_a")
    response = create_key(provisioning_client, organization, platform="partner_a")
    assert_error(
        response, 409, "A key for this platform already exists for this tenant; rotate or revoke it"
    )


def test_other_platforms_and_other_organizations_are_independent(
    provisioning_client, organization, other_organization
):
    assert create_key(provisioning_client, organization, platform="partner_a").status_code == 201
    assert create_key(provisioning_client, organization, platform="partner_b").status_code == 201
    assert (
        create_key(provisioning_client, other_organization, platform="partner_a").status_code == 201
    )


def test_list_masks_values_and_shows_last_used(provisioning_client, organization):
    created = create_key(provisioning_client, organization, platform="partner_a").json()
    assert call_with(created["apiKey"]).status_code == 200

    listed = provisioning_client.get(keys_url(organization)).json()

    assert len(listed) == 1
    item = listed[0]
    assert item["apiKey"] == created["apiKey"][: len("sk_partner_a_") + 4] + "****"
    assert "webhookSecret" not in item
    assert item["lastUsedAt"] is not None
    assert set(item) == KEY_FIELDS | {"lastUsedAt"}


def test_rotate_invalidates_the_old_value_at_once(provisioning_client, organization):
    created = create_key(provisioning_client, organization, platform="partner_a").json()
    assert call_with(created["apiKey"]).status_code == 200  # now cached in Redis

    response = provisioning_client.post(f"{keys_url(organization)}/{created['id']}/rotate")

    assert response.status_code == 200
    rotated = response.json()
    assert rotated["id"] == created["id"]
    assert rotated["name"] == created["name"]
    assert rotated["apiKey"] != created["apiKey"]
    assert rotated["webhookSecret"] != created["webhookSecret"]
    assert rotated["rotatedAt"] is not None
    assert_error(call_with(created["apiKey"]), 401, "Invalid API key")
    assert call_with(rotated["apiKey"]).status_code == 200


def test_revoked_key_is_refused_and_frees_the_platform(provisioning_client, organization):
    created = create_key(provisioning_client, organization, platform="partner_a").json()
    assert call_with(created["apiKey"]).status_code == 200

    response = provisioning_client.delete(f"{keys_url(organization)}/{created['id']}")

    assert response.status_code == 200
    body = response.json()
    assert body["id"] == created["id"]
    assert body["isActive"] is False
    assert body["revokedAt"] is not None
    assert_error(call_with(created["apiKey"]), 401, "Invalid API key")
    assert create_key(provisioning_client, organization, platform="partner_a").status_code == 201


def test_revoked_key_cannot_be_rotated_or_updated(provisioning_client, organization):
    created = create_key(provisioning_client, organization, platform="partner_a").json()
    provisioning_client.delete(f"{keys_url(organization)}/{created['id']}")
    url = f"{keys_url(organization)}/{created['id']}"
    assert_error(provisioning_client.post(f"{url}/rotate"), 409, "API key is revoked")
    assert_error(
        provisioning_client.post(url, {"name": "x"}, format="json"), 409, "API key is revoked"
    )


def test_webhook_url_update(provisioning_client, organization):
    created = create_key(provisioning_client, organization, platform="partner_a").json()
    response = provisioning_client.post(
        f"{keys_url(organization)}/{created['id']}",
        {"name": "Renamed", "webhookUrl": "https://hooks.example.com/new"},
        format="json",
    )
    assert response.status_code == 200
    body = response.json()
    assert body["name"] == "Renamed"
    assert body["webhookUrl"] == "https://hooks.example.com/new"
    assert body["apiKey"].endswith("****")


def test_update_to_a_taken_platform_is_409(provisioning_client, organization):
    create_key(provisioning_client, organization, platform="partner_a")
    other = create_key(provisioning_client, organization, platform="partner_b").json()
    response = provisioning_client.post(
        f"{keys_url(organization)}/{other['id']}", {"platform": "partner_a"}, format="json"
    )
    assert_error(response, 409)


@pytest.mark.parametrize(
    "url", ["ftp://example.com/hook", "not a url", "/relative/path", "https://"]
)
def test_webhook_url_must_be_absolute_http(provisioning_client, organization, url):
    assert_error(create_key(provisioning_client, organization, webhookUrl=url), 400)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/hook",
        "http://localhost/hook",
        "http://10.0.0.5/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/hook",
    ],
)
def test_private_webhook_urls_are_refused_in_production(
    provisioning_client, organization, settings, url
):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False
    assert_error(create_key(provisioning_client, organization, webhookUrl=url), 400)


def test_another_organizations_key_is_404(provisioning_client, organization, other_organization):
    created = create_key(provisioning_client, organization, platform="partner_a").json()
    response = provisioning_client.post(f"{keys_url(other_organization)}/{created['id']}/rotate")
    assert_error(response, 404, "API key not found")
    response = provisioning_client.delete(f"{keys_url(other_organization)}/{created['id']}")
    assert_error(response, 404, "API key not found")


@pytest.mark.parametrize("key_id", ["nope", "00000000-0000-0000-0000-000000000000"])
def test_unknown_key_is_404(provisioning_client, organization, key_id):
    assert_error(
        provisioning_client.delete(f"{keys_url(organization)}/{key_id}"), 404, "API key not found"
    )


def test_unknown_organization_is_404(provisioning_client):
    response = provisioning_client.get("/api/provisioning/organizations/not-a-uuid/api-keys")
    assert_error(response, 404, "Organization not found")
