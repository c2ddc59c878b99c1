"""Django admin of zones and the gazetteer: isolation, GeoJSON validation, preview, CSV import."""

import datetime
import json
import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.files.uploadhandler import StopUpload
from django.test import Client

from tenants.models import User
from tests import builders
from webhooks.models import Event
from zones.admin import UploadSizeLimit
from zones.models import GazetteerImport, Place, Zone, ZoneBlackout

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


def post_csv(client, organization, content: bytes, name="places.csv"):
    upload = SimpleUploadedFile(name, content, content_type="text/csv")
    return client.post(
        "/admin/zones/place/import-csv/",
        {"organization": str(organization.id), "file": upload},
        follow=True,
    )


def shown_messages(response) -> list[str]:
    return [str(message) for message in response.context["messages"]]


def test_csv_import_in_admin_imports_a_small_file_at_once(organization):
    client = admin_client_for(organization)
    form = client.get("/admin/zones/place/import-csv/")
    assert form.status_code == 200
    assert "All or nothing" in form.content.decode()
    response = post_csv(client, organization, CSV.rsplit("Broken", 1)[0].encode())
    assert response.redirect_chain == [("/admin/zones/place/", 302)]
    assert shown_messages(response) == [f"Imported 2 places into {organization.name} from 2 rows."]
    places = Place.objects.filter(organization=organization).order_by("address")
    assert [(p.address, p.postal_code_key, p.locality_key) for p in places] == [
        ("Alexanderplatz 1", "10178", "berlin"),
        ("Oranienstraße 25", "10999", "berlin"),
    ]
    record = GazetteerImport.objects.get(organization=organization)
    assert (record.status, record.rows, record.imported, record.requested_by) == (
        "imported",
        2,
        2,
        "zones-admin@example.com",
    )


def test_csv_import_in_admin_refuses_a_bad_file_and_lists_every_problem(organization):
    client = admin_client_for(organization)
    content = CSV + "Line five,,,52.1,1e1\n" + "Control\x07char,,,52.1,13.1\n"
    response = post_csv(client, organization, content.encode())
    assert response.status_code == 200
    assert shown_messages(response) == [
        "Import refused, nothing was imported: 3 problems in 5 rows",
        "line 4: lat must be a number between -90 and 90",
        "line 5: lng must be a number between -180 and 180",
        "line 6: address must not contain control characters or line breaks",
    ]
    assert not Place.objects.exists()
    record = GazetteerImport.objects.get(organization=organization)
    page = client.get(f"/admin/zones/gazetteerimport/{record.pk}/change/").content.decode()
    assert "Refused" in page
    assert "line 5: lng must be a number between -180 and 180" in page


def test_csv_import_in_admin_with_a_nul_byte_in_line_1001_commits_nothing(organization):
    lines = ["address,lat,lng"] + [f"Street {i},50.1,10.1" for i in range(1500)]
    lines[1000] = "Street\x00 999,50.1,10.1"
    response = post_csv(admin_client_for(organization), organization, "\n".join(lines).encode())
    assert shown_messages(response) == [
        "Import refused, nothing was imported: 1 problem in 1500 rows",
        "line 1001: address contains a NUL character",
    ]
    assert not Place.objects.exists()


def test_csv_import_in_admin_reports_a_200000_character_field(organization):
    content = f"address,lat,lng\nA 1,1,1\n{'x' * 200_000},1,1\nA 3,1,1\n".encode()
    response = post_csv(admin_client_for(organization), organization, content)
    assert response.status_code == 200
    assert shown_messages(response)[1:] == ["line 3: a field is longer than 4096 characters"]
    assert not Place.objects.exists()


def test_csv_import_in_admin_refuses_a_file_over_the_size_limit(settings, organization):
    settings.GAZETTEER_IMPORT_MAX_BYTES = 10_000
    client = admin_client_for(organization)
    refusal = (
        "Import refused: the file is larger than the limit of 10,000 bytes "
        "(GAZETTEER_IMPORT_MAX_BYTES): split it into smaller files"
    )
    content = b"address,lat,lng\n" + b"Street,1,1\n" * 2000  # 22 KB: stopped while read
    assert shown_messages(post_csv(client, organization, content)) == [refusal]
    content = b"address,lat,lng\n" + b"Street,1,1\n" * 20_000  # 220 KB: by its length
    assert shown_messages(post_csv(client, organization, content)) == [refusal]
    assert not Place.objects.exists()
    assert not GazetteerImport.objects.exists()
    content = b"address,lat,lng\n" + b"Street,1,1\n" * 900  # within the limit
    assert shown_messages(post_csv(client, organization, content))[0].startswith("Imported 1")


def test_the_upload_limit_keeps_no_byte_past_the_limit():
    limit = UploadSizeLimit(None, 100)
    assert limit.receive_data_chunk(b"x" * 60, 0) == b"x" * 60
    assert limit.receive_data_chunk(b"x" * 40, 60) == b"x" * 40
    with pytest.raises(StopUpload):
        limit.receive_data_chunk(b"x", 100)
    assert (limit.exceeded, limit.received) == (True, 101)


def test_csv_import_in_admin_still_checks_csrf(organization):
    builders.admin(organization, "csrf-admin@example.com")
    client = Client(enforce_csrf_checks=True)
    assert client.login(username="csrf-admin@example.com", password=builders.PASSWORD)
    upload = SimpleUploadedFile("places.csv", CSV.encode(), content_type="text/csv")
    response = client.post(
        "/admin/zones/place/import-csv/", {"organization": str(organization.id), "file": upload}
    )
    assert response.status_code == 403
    assert not GazetteerImport.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_csv_import_in_admin_queues_a_large_file_and_a_worker_imports_it(
    settings, tmp_path, organization, other_organization, celery_worker
):
    settings.GAZETTEER_IMPORT_INLINE_MAX_BYTES = 1000
    settings.STORAGES = {
        **settings.STORAGES,
        "gazetteer_imports": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path)},
        },
    }
    client = admin_client_for(organization)
    content = "address,lat,lng\n" + "".join(f"Street {i},52.{i},13.{i}\n" for i in range(3000))
    response = post_csv(client, organization, content.encode(), name="big.csv")
    assert response.redirect_chain == [("/admin/zones/gazetteerimport/", 302)]
    record = GazetteerImport.objects.get(organization=organization)
    assert shown_messages(response) == [
        "Import queued: big.csv is imported in the background; the result appears in "
        f'<a href="/admin/zones/gazetteerimport/{record.pk}/change/">gazetteer imports</a>.'
    ]
    deadline = time.monotonic() + 30
    while record.status == "queued" and time.monotonic() < deadline:
        time.sleep(0.1)
        record.refresh_from_db()
    assert (record.status, record.rows, record.imported) == ("imported", 3000, 3000)
    assert Place.objects.filter(organization=organization).count() == 3000
    assert list(tmp_path.rglob("*.csv")) == []  # the stored upload went with the import

    listing = client.get("/admin/zones/gazetteerimport/").content.decode()
    assert "big.csv" in listing and "Imported" in listing
    others = admin_client_for(other_organization, "other-admin@example.com")
    assert "big.csv" not in others.get("/admin/zones/gazetteerimport/").content.decode()
    assert others.get(f"/admin/zones/gazetteerimport/{record.pk}/change/").status_code != 200


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
    response = post_csv(admin_client_for(organization), organization, b"name,x,y\na,1,2\n")
    assert shown_messages(response)[1].startswith(
        "line 1: CSV header must name the columns address, postal_code, locality, lat, lng"
    )


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


def test_a_zone_gets_its_depot_in_admin_and_half_a_depot_is_refused(organization):
    client = admin_client_for(organization)
    depot = {"depot_address": "Alexanderplatz 1", "depot_lat": "52.5219", "depot_lng": "13.4132"}

    half = client.post("/admin/zones/zone/add/", zone_form(organization, depot_lat="52.5219"))
    assert half.status_code == 200
    assert "A depot needs both its latitude and its longitude" in half.content.decode()
    response = client.post("/admin/zones/zone/add/", zone_form(organization, **depot))

    assert response.status_code == 302, response.content.decode()[:2000]
    zone = Zone.objects.get(organization=organization)
    assert (zone.depot_address, zone.depot_lat, zone.depot_lng) == (
        "Alexanderplatz 1",
        52.5219,
        13.4132,
    )
