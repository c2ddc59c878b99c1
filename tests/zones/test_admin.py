"""Django admin of zones and the gazetteer: isolation, GeoJSON validation, preview, CSV import."""

import datetime
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from tenants.models import User
from tests import builders
from webhooks.models import Event
from zones.models import Place, Zone, ZoneBlackout

pytestmark = pytest.mark.django_db

SQUARE = builders.box(*builders.BERLIN, width_m=1000, height_m=1000)


def admin_client_for(organization, email="zones-admin@example.com") -> Client:
    user = builders.admin(organization, email)
    assert user.is_staff is False  # organization admins get in without being staff
    return builders.admin_site_login(email)


def zone_form(organization, **overrides) -> dict:
    return {
        "organization": str(organization.id),
        "name": "Mitte",
        "slug": "",
        "purpose": "both",
        "enabled": "on",
        "timezone": "Europe/Berlin",
        "window_capacity": "20",
        "geodata": json.dumps(SQUARE),
        "metadata": "{}",
        **overrides,
    }


def test_org_admin_sees_only_their_zones(organization, other_organization):
    ours = builders.zone(organization, "Our Zone", SQUARE)
    theirs = builders.zone(other_organization, "Their Zone", SQUARE)
    client = admin_client_for(organization)
    listing = client.get("/admin/zones/zone/")
    assert listing.status_code == 200
    assert b"Our Zone" in listing.content
    assert b"Their Zone" not in listing.content
    assert client.get(f"/admin/zones/zone/{ours.pk}/change/").status_code == 200
    assert client.get(f"/admin/zones/zone/{theirs.pk}/change/").status_code in (302, 403, 404)
    assert client.post(f"/admin/zones/zone/{theirs.pk}/delete/", {"post": "yes"}).status_code in (
        302,
        403,
        404,
    )
    assert Zone.objects.filter(pk=theirs.pk).exists()


def test_superuser_sees_every_zone(organization, other_organization):
    builders.zone(organization, "Our Zone", SQUARE)
    builders.zone(other_organization, "Their Zone", SQUARE)
    User.objects.create_superuser("root@example.com", builders.PASSWORD)
    client = Client()
    client.login(username="root@example.com", password=builders.PASSWORD)
    listing = client.get("/admin/zones/zone/")
    assert b"Our Zone" in listing.content
    assert b"Their Zone" in listing.content


def test_change_form_draws_the_polygon_as_inline_svg(organization):
    zone = builders.zone(organization, "Mitte", SQUARE)
    page = admin_client_for(organization).get(f"/admin/zones/zone/{zone.pk}/change/")
    content = page.content.decode()
    assert '<svg xmlns="http://www.w3.org/2000/svg"' in content
    assert "<polygon points=" in content
    assert "1000 m by 1000 m" in content


def test_adding_a_zone_goes_through_the_service(organization):
    client = admin_client_for(organization)
    response = client.post("/admin/zones/zone/add/", zone_form(organization))
    assert response.status_code == 302, response.content.decode()[:2000]
    zone = Zone.objects.get(organization=organization)
    assert (zone.slug, zone.timezone, zone.geodata) == ("mitte", "Europe/Berlin", SQUARE)
    assert Event.objects.filter(organization=organization, name="erp.polygon.updated").count() == 1


def test_admin_refuses_a_self_intersecting_polygon(organization):
    bow_tie = {
        "type": "Polygon",
        "coordinates": [[[13.40, 52.51], [13.42, 52.53], [13.42, 52.51], [13.40, 52.53]]],
    }
    client = admin_client_for(organization)
    response = client.post(
        "/admin/zones/zone/add/", zone_form(organization, geodata=json.dumps(bow_tie))
    )
    assert response.status_code == 200
    assert "geodata polygon must not intersect itself" in response.content.decode()
    assert not Zone.objects.exists()


def test_admin_keeps_a_zone_with_slot_templates_from_becoming_a_dispatch_zone(organization):
    zone = builders.zone(organization, "Mitte", SQUARE)
    builders.slot_template(zone)
    client = admin_client_for(organization)

    response = client.post(
        f"/admin/zones/zone/{zone.pk}/change/", zone_form(organization, purpose="dispatch")
    )

    assert response.status_code == 200
    assert (
        "Zone Mitte has slot templates; delete them before making it a dispatch zone"
        in response.content.decode()
    )
    zone.refresh_from_db()
    assert zone.purpose == "both"


def test_admin_refuses_a_bad_timezone_and_another_organization(organization, other_organization):
    client = admin_client_for(organization)
    response = client.post("/admin/zones/zone/add/", zone_form(organization, timezone="Nowhere/X"))
    assert "timezone Nowhere/X is not an IANA time zone name" in response.content.decode()
    response = client.post("/admin/zones/zone/add/", zone_form(other_organization, name="Sneaky"))
    assert response.status_code == 200
    assert not Zone.objects.exists()


def test_editing_keeps_the_slug_and_closes_the_ring(organization):
    zone = builders.zone(organization, "Mitte", SQUARE)
    open_ring = {"type": "Polygon", "coordinates": [SQUARE["coordinates"][0][:-1]]}
    client = admin_client_for(organization)
    response = client.post(
        f"/admin/zones/zone/{zone.pk}/change/",
        zone_form(organization, name="Mitte Neu", geodata=json.dumps(open_ring), enabled=""),
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    zone.refresh_from_db()
    assert (zone.name, zone.slug, zone.enabled, zone.geodata) == (
        "Mitte Neu",
        "mitte",
        False,
        SQUARE,
    )


def test_deleting_in_admin_emits_the_event(organization):
    zone = builders.zone(organization, "Mitte", SQUARE)
    client = admin_client_for(organization)
    assert client.post(f"/admin/zones/zone/{zone.pk}/delete/", {"post": "yes"}).status_code == 302
    assert not Zone.objects.exists()
    event = Event.objects.get(organization=organization, name="erp.polygon.updated")
    assert event.payload["deleted"] is True


# ----- gazetteer -----

CSV = (
    "address,postal_code,locality,lat,lng\n"
    "Alexanderplatz 1,10178,Berlin,52.5219,13.4132\n"
    "Oranienstraße 25,10999,Berlin,52.5010,13.4190\n"
    "Broken row,,Berlin,north,13.4\n"
)


def test_org_admin_sees_only_their_places(organization, other_organization):
    Place.objects.create(organization=organization, address="Ours 1", lat=1, lng=1)
    Place.objects.create(organization=other_organization, address="Theirs 1", lat=1, lng=1)
    listing = admin_client_for(organization).get("/admin/zones/place/")
    assert b"Ours 1" in listing.content
    assert b"Theirs 1" not in listing.content
    assert b"Import CSV" in listing.content


def test_csv_import_in_admin_shows_progress_and_imports(organization):
    client = admin_client_for(organization)
    form = client.get("/admin/zones/place/import-csv/")
    assert form.status_code == 200
    upload = SimpleUploadedFile("places.csv", CSV.encode("utf-8"), content_type="text/csv")
    response = client.post(
        "/admin/zones/place/import-csv/", {"organization": str(organization.id), "file": upload}
    )
    assert response.status_code == 200
    page = b"".join(response.streaming_content).decode()
    assert "3 rows read, 2 imported" in page
    assert "line 4: lat must be a number" in page
    assert "Done:</strong> 3 rows read, 2 imported, 1 skipped." in page
    places = Place.objects.filter(organization=organization).order_by("address")
    assert [(p.address, p.postal_code_key, p.locality_key) for p in places] == [
        ("Alexanderplatz 1", "10178", "berlin"),
        ("Oranienstraße 25", "10999", "berlin"),
    ]


def test_csv_import_into_another_organization_is_refused(organization, other_organization):
    client = admin_client_for(organization)
    upload = SimpleUploadedFile("places.csv", CSV.encode(), content_type="text/csv")
    response = client.post(
        "/admin/zones/place/import-csv/",
        {"organization": str(other_organization.id), "file": upload},
    )
    assert response.status_code == 200
    assert "Select a valid choice" in response.content.decode()
    assert not Place.objects.exists()


def test_csv_import_with_a_wrong_header_says_so(organization):
    client = admin_client_for(organization)
    upload = SimpleUploadedFile("places.csv", b"name,x,y\na,1,2\n", content_type="text/csv")
    response = client.post(
        "/admin/zones/place/import-csv/", {"organization": str(organization.id), "file": upload}
    )
    page = b"".join(response.streaming_content).decode()
    assert "Import failed:</strong> CSV header must name the columns" in page


def test_place_added_in_admin_is_normalized_and_geocodes(organization):
    client = admin_client_for(organization)
    response = client.post(
        "/admin/zones/place/add/",
        {
            "organization": str(organization.id),
            "address": "Unter den Linden 40",
            "postal_code": "10117",
            "locality": "Berlin",
            "lat": "52.517",
            "lng": "13.3888",
        },
    )
    assert response.status_code == 302
    place = Place.objects.get()
    assert place.address_key == "unter den linden 40"


# ----- for people: dates with their weekday, times in the zone's time with its name -----


def test_blackouts_and_zones_show_dates_and_times_of_the_zone(organization):
    zone = builders.zone(organization, "Mitte", timezone_name="America/New_York")
    # 13:05 UTC is 08:05 in New York (EST, UTC-5)
    Zone.objects.filter(pk=zone.pk).update(
        created_at=datetime.datetime(2031, 1, 15, 13, 5, tzinfo=datetime.UTC)
    )
    reason = "Christmas Day: the depot is closed and no drivers are rostered for any zone at all"
    blackout = ZoneBlackout.objects.create(
        zone=zone,
        date=datetime.date(2026, 12, 25),
        reason=reason,
        created_at=datetime.datetime(2026, 12, 1, 4, 30, tzinfo=datetime.UTC),
    )
    client = admin_client_for(organization)

    listing = client.get("/admin/zones/zoneblackout/").content.decode()
    page = client.get(f"/admin/zones/zoneblackout/{blackout.pk}/change/").content.decode()
    zone_page = client.get(f"/admin/zones/zone/{zone.pk}/change/").content.decode()

    assert "2026-12-25 Friday" in listing
    assert f'title="{reason}"' in listing  # shortened, the whole reason its tooltip
    assert f">{reason}<" not in listing
    assert "2026-11-30 23:30 America/New_York" in page  # created the evening before, there
    assert "2031-01-15 08:05 America/New_York" in zone_page
