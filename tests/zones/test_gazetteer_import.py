"""`manage.py import_gazetteer` and the import service (contract "Geocoding and resolve-zone")."""

import io

import pytest
from django.core.management import CommandError, call_command

from zones import services
from zones.geocoding import GeocodeResult, geocode
from zones.models import Place

pytestmark = pytest.mark.django_db


def write_csv(tmp_path, text: str, encoding="utf-8"):
    path = tmp_path / "places.csv"
    path.write_bytes(text.encode(encoding))
    return path


def run(*args) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("import_gazetteer", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_command_imports_and_prints_progress(tmp_path, organization, monkeypatch):
    monkeypatch.setattr(services, "IMPORT_BATCH_SIZE", 2)
    path = write_csv(
        tmp_path,
        "\ufeffAddress,Postcode,City,Latitude,Longitude\n"  # a BOM and header aliases
        "Alexanderplatz 1,10178,Berlin,52.5219,13.4132\n"
        "Oranienstraße 25,10999,Berlin,52.5010,13.4190\n"
        "Bergmannstraße 10,10961,Berlin,52.4905,13.3930\n"
        "Nowhere,,,,\n"
        "Far away,,,95,13\n",
    )
    out, err = run(organization.slug, str(path))
    assert out.splitlines() == [
        "2 rows read, 2 imported",
        "5 rows read, 3 imported",
        f"Done: 5 rows read, 3 imported, 2 skipped into {organization.name}",
    ]
    assert err.splitlines() == [
        "line 5: lat must be a number",
        "line 6: lat must be within -90..90 and lng within -180..180",
    ]
    assert Place.objects.filter(organization=organization).count() == 3
    assert geocode(organization_id=organization.id, address="oranienstrasse 25") == GeocodeResult(
        52.5010, 13.4190, precise=True
    )


def test_reimport_updates_instead_of_duplicating(tmp_path, organization):
    run(organization.slug, str(write_csv(tmp_path, "address,lat,lng\nAlex 1,52.0,13.0\n")))
    assert geocode(organization_id=organization.id, address="Alex 1").lat == 52.0
    run(organization.slug, str(write_csv(tmp_path, "address,lat,lng\nALEX 1,52.5,13.0\n")))
    place = Place.objects.get(organization=organization)
    assert (place.address, place.lat) == ("ALEX 1", 52.5)
    # The cached answer went with the re-import.
    assert geocode(organization_id=organization.id, address="Alex 1").lat == 52.5


def test_a_large_file_goes_in_batches(tmp_path, organization):
    rows = "".join(
        f"Street {i},{10000 + i % 50},Town,{50 + i / 1e5},{10 + i / 1e5}\n" for i in range(2500)
    )
    out, _ = run(
        organization.slug, str(write_csv(tmp_path, "address,postal_code,locality,lat,lng\n" + rows))
    )
    assert out.splitlines()[:3] == [
        "1000 rows read, 1000 imported",
        "2000 rows read, 2000 imported",
        "2500 rows read, 2500 imported",
    ]
    assert Place.objects.filter(organization=organization).count() == 2500


def test_unknown_organization(tmp_path):
    with pytest.raises(CommandError, match="Organization nope not found"):
        run("nope", str(write_csv(tmp_path, "address,lat,lng\n")))


def test_missing_columns(tmp_path, organization):
    with pytest.raises(CommandError, match="CSV header must name the columns"):
        run(organization.slug, str(write_csv(tmp_path, "street,x,y\na,1,2\n")))


def test_missing_file(organization):
    with pytest.raises(CommandError, match=r"Cannot read /nonexistent\.csv"):
        run(organization.slug, "/nonexistent.csv")


def test_not_utf8(tmp_path, organization):
    path = write_csv(tmp_path, "address,lat,lng\nKöln 1,50,7\n", encoding="latin-1")
    with pytest.raises(CommandError, match="is not UTF-8 text"):
        run(organization.slug, str(path))
