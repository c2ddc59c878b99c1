"""Django admin: each organization admin sees only their organization's rows (contract "Management
API")."""

import pytest

from tenants.models import ApiKey, Driver, User
from tests import builders

pytestmark = pytest.mark.django_db


def test_org_admin_sees_only_their_drivers(organization, other_organization):
    Driver.objects.create(organization=organization, name="Our Driver")
    theirs = Driver.objects.create(organization=other_organization, name="Their Driver")
    client = builders.admin_site_client(organization)

    listing = client.get("/admin/tenants/driver/")
    assert listing.status_code == 200
    assert b"Our Driver" in listing.content
    assert b"Their Driver" not in listing.content
    assert client.get(f"/admin/tenants/driver/{theirs.pk}/change/").status_code in (302, 403, 404)


def test_org_admin_cannot_create_in_another_organization(organization, other_organization):
    client = builders.admin_site_client(organization)
    response = client.post(
        "/admin/tenants/driver/add/",
        {
            "organization": str(other_organization.id),
            "name": "Sneaky",
            "phone": "",
            "vehicle_type": "",
            "is_active": "on",
        },
    )
    assert response.status_code == 200  # the form refuses the organization choice
    assert not Driver.objects.filter(name="Sneaky").exists()


def test_org_admin_sees_only_their_api_keys(organization, other_organization):
    builders.api_key(organization, "partner_a", name="Ours")
    builders.api_key(other_organization, "partner_a", name="Theirs")
    listing = builders.admin_site_client(organization).get("/admin/tenants/apikey/")
    assert b"Ours" in listing.content
    assert b"Theirs" not in listing.content


def api_key_form(organization, name: str, webhook_url: str = "") -> dict:
    """The admin's form for a new partner_b key of `organization`."""
    return {
        "organization": str(organization.id),
        "name": name,
        "platform": "partner_b",
        "webhook_url": webhook_url,
    }


def test_api_key_created_in_admin_shows_its_value_once(organization):
    client = builders.admin_site_client(organization)
    response = client.post(
        "/admin/tenants/apikey/add/", api_key_form(organization, "From admin"), follow=True
    )
    assert response.status_code == 200
    api_key = ApiKey.objects.get(name="From admin")
    assert b"sk_partner_b_" in response.content
    assert api_key.platform == "partner_b"


def test_user_without_membership_cannot_enter_admin(organization):
    User.objects.create_user(email="nobody@example.com", password=builders.PASSWORD)
    client = builders.admin_site_login("nobody@example.com")
    assert client.get("/admin/tenants/driver/").status_code == 302  # to the login page


def test_superuser_sees_everything(organization, other_organization):
    Driver.objects.create(organization=organization, name="Our Driver")
    Driver.objects.create(organization=other_organization, name="Their Driver")
    User.objects.create_superuser(email="root@example.com", password=builders.PASSWORD)
    listing = builders.admin_site_login("root@example.com").get("/admin/tenants/driver/")
    assert b"Our Driver" in listing.content
    assert b"Their Driver" in listing.content


def test_org_admin_cannot_tell_user_ids_from_made_up_ones(organization, other_organization):
    """Found by the cross-tenant tests: a user's history page answered 403, a made-up id's a
    redirect, telling an organization admin which ids are users."""
    client = builders.admin_site_client(organization)
    stranger = User.objects.create_user(email="stranger@example.com", password="x-Strong-pass-1")
    real = client.get(f"/admin/tenants/user/{stranger.pk}/history/")
    made_up = client.get("/admin/tenants/user/00000000-0000-4000-8000-000000000000/history/")
    assert (real.status_code, made_up.status_code) == (302, 302)
    assert real["Location"] == made_up["Location"] == "/admin/"


@pytest.mark.parametrize(
    "url",
    ["https://user:secret@hooks.example.com/hook", "http://127.0.0.1/hook", "http://[::1]/hook"],
)
def test_a_refused_webhook_url_is_a_form_error_in_admin(organization, settings, url):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False
    issued = builders.api_key(organization, "partner_a", name="Ours")
    client = builders.admin_site_client(organization)

    created = client.post("/admin/tenants/apikey/add/", api_key_form(organization, "New", url))
    changed = client.post(
        f"/admin/tenants/apikey/{issued.api_key.pk}/change/",
        {"name": "Ours", "webhook_url": url},
    )

    for response in (created, changed):
        assert response.status_code == 200  # the form again, with the reason
        assert b"webhookUrl must not" in response.content
    assert not ApiKey.objects.filter(name="New").exists()
    issued.api_key.refresh_from_db()
    assert issued.api_key.webhook_url == ""
