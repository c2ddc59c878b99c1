"""Deactivating an organization or a user, and revoking or rotating a key, take effect at once,
whatever path made the change and in every process (docs/contract.md "Authentication and
scope": immediate effect). A key used a moment ago sits in the Redis lookup cache for minutes;
these tests use it, change it, and call again at once."""

import pytest
from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from tenants import services
from tenants.models import ApiKey, Membership, Organization, User
from tests import builders
from tests.conftest import assert_error
from tests.gunicorn import body_of, gunicorn_server, raw_request, status_of

HELLO = "/api/bench/hello-auth"


@pytest.fixture(autouse=True)
def _bench_endpoints(settings):
    settings.BENCH_ENDPOINTS = True


def warmed(issued) -> APIClient:
    """A client whose key is in the lookup cache (the second call makes no database query)."""
    client = builders.key_client(issued)
    assert client.get(HELLO).status_code == 200
    assert client.get(HELLO).status_code == 200
    return client


def provisioning() -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_PROVISIONING_SECRET=settings.PROVISIONING_SECRET)
    return client


def superuser_admin() -> Client:
    User.objects.create_superuser(email="root@example.com", password=builders.PASSWORD)
    client = Client()
    assert client.login(username="root@example.com", password=builders.PASSWORD)
    return client


def _revoke_by_api(organization, api_key):
    url = f"/api/provisioning/organizations/{organization.id}/api-keys/{api_key.id}"
    assert provisioning().delete(url).status_code == 200


def _rotate_by_api(organization, api_key):
    url = f"/api/provisioning/organizations/{organization.id}/api-keys/{api_key.id}/rotate"
    assert provisioning().post(url).status_code == 200


def _deactivate_by_api(organization, api_key):
    url = f"/api/provisioning/organizations/{organization.id}"
    response = provisioning().patch(url, {"isActive": False}, format="json")
    assert response.status_code == 200, response.content


def _revoke_by_admin_action(organization, api_key):
    response = superuser_admin().post(
        "/admin/tenants/apikey/", {"action": "revoke_keys", "_selected_action": [str(api_key.id)]}
    )
    assert response.status_code == 302


def _rotate_by_admin_action(organization, api_key):
    response = superuser_admin().post(
        "/admin/tenants/apikey/", {"action": "rotate_keys", "_selected_action": [str(api_key.id)]}
    )
    assert response.status_code == 302


def _deactivate_by_admin_form(organization, api_key):
    now = timezone.localtime(organization.created_at)
    response = superuser_admin().post(
        f"/admin/tenants/organization/{organization.id}/change/",
        {
            "name": organization.name,
            "slug": organization.slug,
            # is_active left out: the checkbox unticked
            "created_at_0": now.strftime("%Y-%m-%d"),
            "created_at_1": now.strftime("%H:%M:%S"),
            "memberships-TOTAL_FORMS": "0",
            "memberships-INITIAL_FORMS": "0",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]


def _revoke_by_save(organization, api_key):
    api_key.is_active = False
    api_key.save()


def _deactivate_by_save(organization, api_key):
    organization.is_active = False
    organization.save()


def _deactivate_by_queryset_update(organization, api_key):
    Organization.objects.filter(pk=organization.pk).update(is_active=False)


def _revoke_by_queryset_update(organization, api_key):
    ApiKey.objects.filter(pk=api_key.pk).update(is_active=False)


def _delete_key(organization, api_key):
    ApiKey.objects.filter(pk=api_key.pk).delete()


def _delete_organization(organization, api_key):
    organization.delete()


def _revoke_by_service(organization, api_key):
    services.api_key_revoke(api_key=api_key)


def _deactivate_by_service(organization, api_key):
    services.organization_update(organization=organization, is_active=False)


CHANGES = [
    _revoke_by_api,
    _rotate_by_api,
    _deactivate_by_api,
    _revoke_by_admin_action,
    _rotate_by_admin_action,
    _deactivate_by_admin_form,
    _revoke_by_service,
    _deactivate_by_service,
    _revoke_by_save,
    _deactivate_by_save,
    _revoke_by_queryset_update,
    _deactivate_by_queryset_update,
    _delete_key,
    _delete_organization,
]


@pytest.mark.django_db
@pytest.mark.parametrize("change", CHANGES, ids=lambda f: f.__name__.strip("_"))
def test_a_cached_key_is_refused_right_after_the_change(organization, change):
    issued = builders.api_key(organization, "standard")
    client = warmed(issued)
    change(organization, issued.api_key)
    assert_error(client.get(HELLO), 401, "Invalid API key")


@pytest.mark.django_db
def test_other_keys_keep_working_after_a_change(organization, other_organization):
    ours = builders.api_key(organization, "standard")
    theirs = warmed(builders.api_key(other_organization, "standard"))
    _deactivate_by_api(organization, ours.api_key)
    assert theirs.get(HELLO).status_code == 200


@pytest.mark.django_db
def test_a_reactivated_organizations_keys_work_again(organization):
    client = warmed(builders.api_key(organization, "standard"))
    _deactivate_by_api(organization, None)
    assert client.get(HELLO).status_code == 401
    url = f"/api/provisioning/organizations/{organization.id}"
    assert provisioning().patch(url, {"isActive": True}, format="json").status_code == 200
    assert client.get(HELLO).status_code == 200


# ----- PATCH /provisioning/organizations/:id -----


@pytest.mark.django_db
def test_patch_organization_renames_and_deactivates(organization):
    url = f"/api/provisioning/organizations/{organization.id}"
    response = provisioning().patch(url, {"name": "Acme GmbH", "isActive": False}, format="json")
    assert response.status_code == 200
    body = response.json()
    assert body["id"] == str(organization.id)
    assert body["name"] == "Acme GmbH"
    assert body["slug"] == organization.slug
    assert body["isActive"] is False
    assert set(body) == {"id", "slug", "name", "isActive", "createdAt"}


@pytest.mark.django_db
@pytest.mark.parametrize(
    "body, message",
    [
        ({"isActive": "false"}, "isActive: must be a boolean"),
        ({"isActive": None}, None),
        ({"name": ""}, "Organization name is required"),
        ({"name": 7}, None),
    ],
)
def test_patch_organization_validates(organization, body, message):
    url = f"/api/provisioning/organizations/{organization.id}"
    response = provisioning().patch(url, body, format="json")
    assert_error(response, 400, message)
    organization.refresh_from_db()
    assert organization.is_active


@pytest.mark.django_db
@pytest.mark.parametrize("org_id", ["not-a-uuid", "00000000-0000-0000-0000-000000000000"])
def test_patch_unknown_organization_is_404(org_id):
    url = f"/api/provisioning/organizations/{org_id}"
    response = provisioning().patch(url, {"isActive": False}, format="json")
    assert_error(response, 404, "Organization not found")


@pytest.mark.django_db
def test_patch_organization_needs_the_secret(organization):
    url = f"/api/provisioning/organizations/{organization.id}"
    response = APIClient().patch(url, {"isActive": False}, format="json")
    assert_error(response, 401, "Missing X-Provisioning-Secret header")


@pytest.mark.django_db
def test_patch_organization_is_rate_limited(organization, settings):
    settings.PROVISIONING_RATE_LIMITS = {
        **settings.PROVISIONING_RATE_LIMITS,
        "organizations.update": "2/h",
    }
    url = f"/api/provisioning/organizations/{organization.id}"
    client = provisioning()
    for _ in range(2):
        assert client.patch(url, {"name": "Acme"}, format="json").status_code == 200
    response = client.patch(url, {"name": "Acme"}, format="json")
    assert_error(response, 429)
    assert int(response["Retry-After"]) >= 1


# ----- admins of an inactive organization, deactivated users -----


@pytest.mark.django_db
def test_an_inactive_organizations_admins_lose_management_and_admin_site(organization):
    builders.admin(organization)
    manage, _ = builders.bearer_login()
    drivers = f"/api/manage/organizations/{organization.id}/drivers"
    site = Client()
    assert site.login(username="admin@example.com", password=builders.PASSWORD)
    assert manage.get(drivers).status_code == 200
    assert site.get("/admin/tenants/driver/").status_code == 200

    _deactivate_by_api(organization, None)

    assert_error(manage.get(drivers), 404, "Organization not found")
    assert site.get("/admin/tenants/driver/").status_code == 302  # to the login page
    assert site.get("/admin/").status_code == 302
    _, login = builders.bearer_login()
    assert login["organizations"] == []


@pytest.mark.django_db
def test_an_admin_of_two_keeps_the_active_one(organization, other_organization):
    user = builders.admin(organization)
    Membership.objects.create(
        organization=other_organization, user=user, org_role="admin", is_active=True
    )
    services.organization_update(organization=organization, is_active=False)
    manage, login = builders.bearer_login()
    assert [o["id"] for o in login["organizations"]] == [str(other_organization.id)]
    assert (
        manage.get(f"/api/manage/organizations/{other_organization.id}/drivers").status_code == 200
    )
    site = Client()
    assert site.login(username="admin@example.com", password=builders.PASSWORD)
    driver = services.driver_create(organization_id=organization.id, name="Hidden")
    assert site.get(f"/admin/tenants/driver/{driver.id}/change/").status_code == 302


@pytest.mark.django_db
def test_a_deactivated_user_loses_tokens_and_admin_site_at_once(organization):
    user = builders.admin(organization)
    manage, _ = builders.bearer_login()
    site = Client()
    assert site.login(username="admin@example.com", password=builders.PASSWORD)
    drivers = f"/api/manage/organizations/{organization.id}/drivers"
    assert manage.get(drivers).status_code == 200

    user.is_active = False
    user.save()

    assert_error(manage.get(drivers), 401, "Invalid or missing token")
    assert site.get("/admin/tenants/driver/").status_code == 302


# ----- across processes: a gunicorn worker warms its cache, this process changes the key -----


def _get(port: int, value: str) -> tuple[int, bytes]:
    raw = raw_request(
        port,
        f"GET {HELLO} HTTP/1.1\r\nHost: localhost\r\nX-API-Key: {value}\r\n"
        "Connection: close\r\n\r\n".encode(),
    )
    return status_of(raw), body_of(raw)


@pytest.mark.django_db(transaction=True)
def test_changes_reach_another_process_at_once(tmp_path):
    organization = builders.organization("Acme")
    revoked = builders.api_key(organization, "standard")
    rotated = builders.api_key(organization, "partner_a")
    other = builders.organization("Globex")
    deactivated = builders.api_key(other, "standard")
    keys = (revoked, rotated, deactivated)
    with gunicorn_server(tmp_path, BENCH_ENDPOINTS="true") as port:
        for issued in keys:
            for _ in range(2):  # the second answer comes from the cache that worker filled
                assert _get(port, issued.value)[0] == 200
            digest = services.secret_digest(issued.value)
            assert settings.CACHES["default"]["BACKEND"].endswith("RedisCache")
            assert cache.get(f"apikey:{digest}") is not None  # it is cached, in Redis

        services.api_key_revoke(api_key=revoked.api_key)
        status, body = _get(port, revoked.value)
        assert status == 401, body
        assert b"Invalid API key" in body

        fresh = services.api_key_rotate(api_key=rotated.api_key)
        assert _get(port, rotated.value)[0] == 401
        assert _get(port, fresh.value)[0] == 200

        services.organization_update(organization=other, is_active=False)
        assert _get(port, deactivated.value)[0] == 401
        # ... and the other organization's remaining key still works.
        assert _get(port, fresh.value)[0] == 200


@pytest.mark.django_db(transaction=True)
def test_an_entry_cached_by_another_process_before_the_commit_is_not_trusted_after_it(tmp_path):
    """While the revoking transaction is open, another process still reads the key as active
    and caches it; from the commit on, that entry counts for nothing."""
    organization = builders.organization("Acme")
    issued = builders.api_key(organization, "standard")
    with gunicorn_server(tmp_path, BENCH_ENDPOINTS="true") as port:
        assert _get(port, issued.value)[0] == 200
        with transaction.atomic():
            services.api_key_revoke(api_key=issued.api_key)
            # Not committed: the worker's own connection still sees the active row.
            assert _get(port, issued.value)[0] == 200
            assert _get(port, issued.value)[0] == 200  # and now answers from its cache
        assert _get(port, issued.value)[0] == 401
