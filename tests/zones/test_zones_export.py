"""GET /api/integrations/partner-a/zones/export (interface; contract "Conventions", "Authentication
and scope", "Slots and windows")."""

import csv
import io
import json
from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from tests import builders
from tests.conftest import assert_error
from zones.models import ZonePurpose

pytestmark = pytest.mark.django_db

URL = "/api/integrations/partner-a/zones/export"
RING = [[13.40, 52.51], [13.42, 52.51], [13.42, 52.53], [13.40, 52.53], [13.40, 52.51]]
GEODATA = {"type": "Polygon", "coordinates": [RING]}
LAT_LNG = [[lat, lng] for lng, lat in RING]


@pytest.fixture
def zones(organization):
    created = {
        "mitte": builders.zone(
            organization,
            "Mitte, Nord",
            GEODATA,
            timezone_name=None,
            metadata={"note": 'say "hi", then leave', "floors": [1, 2], "city": "Köln"},
        ),
        "closed": builders.zone(
            organization,
            "Closed",
            GEODATA,
            timezone_name=None,
            purpose=ZonePurpose.DISPATCH,
            enabled=False,
        ),
        "slots": builders.zone(
            organization, "Slots only", GEODATA, timezone_name=None, purpose=ZonePurpose.SLOT
        ),
    }
    builders.zone(builders.organization(), "Foreign", GEODATA, timezone_name=None)
    return created


@pytest.fixture
def client(organization):
    return builders.key_client(builders.api_key(organization, "partner_a"))


def test_json_export(client, organization, zones):
    response = client.get(URL)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    body = json.loads(response.content)
    assert set(body) == {"format", "organizationId", "generatedAt", "zones"}
    assert (body["format"], body["organizationId"]) == ("json", str(organization.id))
    generated = datetime.fromisoformat(body["generatedAt"])
    assert abs(generated - timezone.now()) < timedelta(seconds=30)
    assert body["zones"] == [
        {
            "name": "Closed",
            "slug": "closed",
            "isActive": False,
            "polygon": [{"lat": lat, "lng": lng} for lat, lng in LAT_LNG],
            "metadata": {},
        },
        {
            "name": "Mitte, Nord",
            "slug": "mitte-nord",
            "isActive": True,
            "polygon": [{"lat": lat, "lng": lng} for lat, lng in LAT_LNG],
            "metadata": {"note": 'say "hi", then leave', "floors": [1, 2], "city": "Köln"},
        },
    ]
    assert body["zones"][0]["polygon"][0] == body["zones"][0]["polygon"][-1]  # closed


def test_json_is_the_default_and_explicit(client, zones):
    assert client.get(URL, {"format": "json"}).json()["format"] == "json"


def test_csv_export_parses_back(client, zones):
    response = client.get(URL, {"format": "csv"})
    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="delivery-zones.csv"'
    raw = b"".join(response.streaming_content)
    assert not raw.startswith(b"\xef\xbb\xbf")  # UTF-8 without a byte-order mark
    text = raw.decode("utf-8")
    assert text.startswith("name,slug,isActive,polygon,metadata\r\n")
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    assert [row["name"] for row in rows] == ["Closed", "Mitte, Nord"]
    assert [row["slug"] for row in rows] == ["closed", "mitte-nord"]
    assert [row["isActive"] for row in rows] == ["false", "true"]
    for row in rows:
        assert json.loads(row["polygon"]) == LAT_LNG
    assert json.loads(rows[0]["metadata"]) == {}
    assert json.loads(rows[1]["metadata"]) == {
        "note": 'say "hi", then leave',
        "floors": [1, 2],
        "city": "Köln",
    }


def test_csv_quotes_polygon_and_metadata_with_doubled_quotes(client, zones):
    text = b"".join(client.get(URL, {"format": "csv"}).streaming_content).decode()
    lines = text.split("\r\n")
    assert lines[1] == (
        'Closed,closed,false,"[[52.51,13.4],[52.51,13.42],[52.53,13.42],[52.53,13.4],'
        '[52.51,13.4]]","{}"'
    )
    assert lines[2].startswith('"Mitte, Nord",mitte-nord,true,"[[52.51,13.4],')
    # The metadata cell: one quoted field, inner quotes doubled (JSON's own \" included).
    assert lines[2].endswith('}"')
    assert '""note"":""say \\""hi\\"", then leave""' in lines[2]
    assert '""city"":""Köln""' in lines[2]
    assert lines[3] == ""  # the last row ends with CRLF too


def test_csv_file_name_follows_service_name(client, zones, settings):
    settings.SERVICE_NAME = "courier"
    response = client.get(URL, {"format": "csv"})
    assert response["Content-Disposition"] == 'attachment; filename="courier-zones.csv"'


def test_csv_with_accept_text_csv(client, zones):
    response = client.get(URL, {"format": "csv"}, HTTP_ACCEPT="text/csv")
    assert response.status_code == 200


def test_csv_of_an_organization_without_zones_is_the_header(client):
    text = b"".join(client.get(URL, {"format": "csv"}).streaming_content).decode()
    assert text == "name,slug,isActive,polygon,metadata\r\n"


@pytest.mark.parametrize("value", ["xml", "CSV", ""])
def test_other_format_is_400(client, value):
    assert_error(client.get(URL, {"format": value}), 400, ["format must be json or csv"])


def test_partner_b_key_on_partner_a_export_is_403(organization, zones):
    client = builders.key_client(builders.api_key(organization, "partner_b"))
    assert_error(client.get(URL), 403, "API key does not match partner-a integration")


@pytest.mark.parametrize("platform", ["standard", "erp", "partner_c"])
def test_other_platforms_are_403(organization, platform):
    client = builders.key_client(builders.api_key(organization, platform))
    assert_error(client.get(URL), 403, "API key does not match partner-a integration")


@pytest.mark.parametrize("partner", ["partner-b", "partner-c"])
def test_partner_b_and_c_have_their_own_export(organization, zones, partner):
    client = builders.key_client(builders.api_key(organization, partner.replace("-", "_")))
    url = f"/api/integrations/{partner}/zones/export"
    assert [zone["name"] for zone in client.get(url).json()["zones"]] == ["Closed", "Mitte, Nord"]
    assert_error(
        builders.key_client(builders.api_key(organization, "partner_a")).get(url),
        403,
        f"API key does not match {partner} integration",
    )


def test_missing_key_is_401(api_client):
    assert_error(api_client.get(URL), 401, "Missing X-API-Key header")


def test_trailing_slash_works(client, zones):
    assert client.get(URL + "/", {"format": "csv"}).status_code == 200


def test_export_query_count_is_constant(client, organization, django_assert_max_num_queries):
    for i in range(30):
        builders.zone(organization, f"Zone {i}", GEODATA, timezone_name=None)
    client.get(URL)
    with django_assert_max_num_queries(1):
        assert len(client.get(URL).json()["zones"]) == 30
    with django_assert_max_num_queries(1):
        assert len(b"".join(client.get(URL, {"format": "csv"}).streaming_content)) > 0
