"""Django admin: each organization admin sees only their organization's rows (contract "Management
API")."""

import datetime
import re

import pytest
from django.test import Client

from tenants import admin_display
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


# ----- for people: View site, times that say their zone, columns that fit -----


def test_view_site_goes_to_the_api_docs(organization):
    index = builders.admin_site_client(organization).get("/admin/").content.decode()

    assert re.search(r'<a href="/api/docs/">\s*View site\s*</a>', index)
    assert Client().get("/api/docs/").status_code == 200


def test_times_tied_to_no_zone_say_utc(organization):
    issued = builders.api_key(organization, "partner_a", name="Shop")
    used = datetime.datetime(2031, 1, 15, 13, 5, tzinfo=datetime.UTC)
    ApiKey.objects.filter(pk=issued.api_key.pk).update(last_used_at=used)
    client = builders.admin_site_client(organization)

    listing = client.get("/admin/tenants/apikey/").content.decode()
    page = client.get(f"/admin/tenants/apikey/{issued.api_key.pk}/change/").content.decode()

    assert "2031-01-15 13:05 UTC" in listing
    assert "2031-01-15 13:05 UTC" in page
    # Never rotated nor revoked: admin's empty value, not Python's None.
    assert re.search(r"Rotated:</label>\s*<div class=\"readonly\">-</div>", page)


def test_an_admin_of_one_organization_sees_no_organization_column(organization, other_organization):
    Driver.objects.create(organization=organization, name="Our Driver")
    one = builders.admin_site_client(organization)
    assert "column-organization" not in one.get("/admin/tenants/driver/").content.decode()

    # An admin of two organizations needs to tell their rows apart.
    builders.admin(other_organization, "admin@example.com")
    two = builders.admin_site_login("admin@example.com")
    assert "column-organization" in two.get("/admin/tenants/driver/").content.decode()


def test_zone_time_names_its_zone_and_falls_back_to_utc():
    at = datetime.datetime(2026, 11, 26, 13, 0, tzinfo=datetime.UTC)
    assert admin_display.zone_time(at, "Europe/Berlin") == "2026-11-26 14:00 Europe/Berlin"
    assert admin_display.zone_time(at, "America/New_York") == "2026-11-26 08:00 America/New_York"
    assert admin_display.zone_time(at, None) == "2026-11-26 13:00 UTC"
    assert admin_display.zone_time(at, "Not/AZone") == "2026-11-26 13:00 UTC"
    assert admin_display.zone_time(None, "Europe/Berlin") is None
    # A window past midnight writes out the end's date.
    late = datetime.datetime(2026, 11, 26, 22, 0, tzinfo=datetime.UTC)
    assert admin_display.zone_period(at, late, "Europe/Berlin") == (
        "2026-11-26 14:00\u201323:00 Europe/Berlin"
    )
    assert (
        admin_display.zone_period(at, late + datetime.timedelta(hours=2), "Europe/Berlin")
        == "2026-11-26 14:00\u20132026-11-27 01:00 Europe/Berlin"
    )
    assert admin_display.minutes(120) == "120 min"
    assert admin_display.calendar_day(datetime.date(2026, 12, 25)) == "2026-12-25 Friday"


def test_a_driver_is_added_without_a_time_field_and_shows_when_in_utc(organization):
    client = builders.admin_site_client(organization)
    form = {"organization": str(organization.id), "name": "Ada", "phone": "", "vehicle_type": ""}

    response = client.post("/admin/tenants/driver/add/", {**form, "is_active": "on"})

    assert response.status_code == 302, response.content.decode()[:2000]
    driver = Driver.objects.get(name="Ada")
    page = client.get(f"/admin/tenants/driver/{driver.pk}/change/").content.decode()
    assert 'name="created_at_0"' not in page
    assert f"{driver.created_at:%Y-%m-%d %H:%M} UTC" in page
