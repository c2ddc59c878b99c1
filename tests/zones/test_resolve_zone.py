"""POST /api/promises/resolve-zone: confidence levels in metres (contract "Geocoding and
resolve-zone"), errors, scope."""

import pytest

from tests import builders
from tests.conftest import assert_error
from zones.models import ZonePurpose

pytestmark = pytest.mark.django_db

URL = "/api/promises/resolve-zone"


@pytest.fixture
def client(organization):
    return builders.key_client(builders.api_key(organization, "standard"))


def resolve(client, address):
    return client.post(URL, {"address": address}, format="json")


def test_precise_point_well_inside_is_high_with_the_exact_resource(client, mitte, organization):
    response = resolve(client, builders.literal(builders.BERLIN))
    assert response.status_code == 200, response.content
    body = response.json()
    assert set(body.pop("evidence")) == {  # added (tests/zones/test_resolve_zone_evidence.py)
        "distanceMeters",
        "boundaryDistanceMeters",
        "geocoderPrecision",
        "nextBestZone",
    }
    assert body == {
        "zone": {
            "id": str(mitte.id),
            "name": "Mitte",
            "slug": "mitte",
            "organizationId": str(organization.id),
        },
        "coordinates": {
            "lat": pytest.approx(builders.BERLIN[0]),
            "lng": pytest.approx(builders.BERLIN[1]),
        },
        "confidence": "high",
    }


def test_point_30_m_inside_the_boundary_is_medium(client, mitte):
    point = builders.offset(builders.BERLIN[0], builders.east_edge(mitte.geodata), east_m=-30)
    body = resolve(client, builders.literal(point)).json()
    assert (body["zone"]["name"], body["confidence"]) == ("Mitte", "medium")


def test_point_60_m_inside_the_boundary_is_high(client, mitte):
    point = builders.offset(builders.BERLIN[0], builders.east_edge(mitte.geodata), east_m=-60)
    assert resolve(client, builders.literal(point)).json()["confidence"] == "high"


def test_point_20_m_outside_the_boundary_is_medium_for_that_zone(client, mitte):
    point = builders.offset(builders.BERLIN[0], builders.east_edge(mitte.geodata), east_m=20)
    body = resolve(client, builders.literal(point)).json()
    assert (body["zone"]["id"], body["confidence"]) == (str(mitte.id), "medium")


def test_point_20_m_north_of_the_boundary_is_medium(client, mitte):
    point = builders.offset(builders.north_edge(mitte.geodata), builders.BERLIN[1], north_m=20)
    assert resolve(client, builders.literal(point)).json()["confidence"] == "medium"


def test_point_2_km_away_is_low_with_the_nearest_zone(client, mitte, organization):
    far_zone = builders.box(
        *builders.offset(*builders.BERLIN, east_m=10_000), width_m=1000, height_m=1000
    )
    builders.zone(organization, "Far east", far_zone)
    point = builders.offset(builders.BERLIN[0], builders.east_edge(mitte.geodata), east_m=2000)
    body = resolve(client, builders.literal(point)).json()
    assert (body["zone"]["name"], body["confidence"]) == ("Mitte", "low")
    assert body["coordinates"] == {
        "lat": pytest.approx(point[0]),
        "lng": pytest.approx(point[1]),
    }


def test_point_50_km_away_is_404(client, mitte):
    point = builders.offset(*builders.BERLIN, east_m=50_000)
    assert_error(
        resolve(client, builders.literal(point)),
        404,
        "No delivery zone found for the given address",
    )


@pytest.mark.parametrize(
    ("east_m", "confidence"), [(45, "medium"), (55, "low"), (4_900, "low"), (5_100, None)]
)
def test_bands_are_measured_in_metres_at_high_latitude(client, organization, east_m, confidence):
    # At 60°N a degree of longitude is 55.8 km, of latitude 111.4 km: degrees would be wrong.
    helsinki = (60.17, 24.94)
    zone = builders.zone(
        organization, "Helsinki", builders.box(*helsinki, width_m=1000, height_m=1000)
    )
    point = builders.offset(helsinki[0], builders.east_edge(zone.geodata), east_m=east_m)
    response = resolve(client, builders.literal(point))
    if confidence is None:
        assert_error(response, 404, "No delivery zone found for the given address")
    else:
        assert response.json()["confidence"] == confidence


@pytest.mark.parametrize(("north_m", "confidence"), [(4_900, "low"), (5_100, None)])
def test_nearest_zone_limit_north_south_is_5_km(client, organization, north_m, confidence):
    zone = builders.zone(
        organization, "Mitte", builders.box(*builders.BERLIN, width_m=1000, height_m=1000)
    )
    point = builders.offset(builders.north_edge(zone.geodata), builders.BERLIN[1], north_m=north_m)
    response = resolve(client, builders.literal(point))
    if confidence is None:
        assert response.status_code == 404
    else:
        assert response.json()["confidence"] == "low"


def test_nearest_of_several_zones_wins(client, organization):
    builders.zone(
        organization,
        "West",
        builders.box(*builders.offset(*builders.BERLIN, east_m=-3000), width_m=500, height_m=500),
    )
    builders.zone(
        organization,
        "East",
        builders.box(*builders.offset(*builders.BERLIN, east_m=2000), width_m=500, height_m=500),
    )
    body = resolve(client, builders.literal(builders.BERLIN)).json()
    assert (body["zone"]["name"], body["confidence"]) == ("East", "low")


def test_smallest_containing_zone_wins(client, organization, mitte):
    builders.zone(organization, "Alex", builders.box(*builders.BERLIN, width_m=400, height_m=400))
    body = resolve(client, builders.literal(builders.BERLIN)).json()
    assert (body["zone"]["name"], body["confidence"]) == ("Alex", "high")


def test_disabled_zones_are_ignored(client, organization):
    builders.zone(
        organization,
        "Closed",
        builders.box(*builders.BERLIN, width_m=2000, height_m=2000),
        enabled=False,
    )
    assert_error(
        resolve(client, builders.literal(builders.BERLIN)),
        404,
        "No delivery zone found for the given address",
    )


def test_every_purpose_resolves(client, organization):
    builders.zone(
        organization,
        "Slots",
        builders.box(*builders.BERLIN, width_m=2000, height_m=2000),
        purpose=ZonePurpose.SLOT,
    )
    assert resolve(client, builders.literal(builders.BERLIN)).json()["zone"]["name"] == "Slots"


def test_exact_gazetteer_address_is_precise(client, organization, mitte):
    builders.alexanderplatz(organization, "Alexanderplatz 1, 10178 Berlin")
    body = resolve(client, "alexanderplatz 1 10178 BERLIN").json()
    assert (body["zone"]["name"], body["confidence"]) == ("Mitte", "high")


def test_postal_code_only_match_is_medium_even_deep_inside(client, organization, mitte):
    builders.alexanderplatz(organization)
    body = resolve(client, "Karl-Liebknecht-Straße 9, 10178 Berlin").json()
    assert (body["zone"]["name"], body["confidence"]) == ("Mitte", "medium")
    assert body["coordinates"] == {"lat": builders.BERLIN[0], "lng": builders.BERLIN[1]}


def test_unknown_address_is_404(client, mitte):
    assert_error(
        resolve(client, "1 Nowhere Lane, Atlantis"),
        404,
        "No delivery zone found for the given address",
    )


@pytest.mark.parametrize("body", [{}, {"address": ""}, {"address": "   "}, {"address": None}])
def test_missing_address_is_400(client, body):
    assert_error(client.post(URL, body, format="json"), 400, ["address is required"])


def test_address_of_another_type_is_400(client):
    body = assert_error(client.post(URL, {"address": 12}, format="json"), 400)
    assert body["message"] == ["address: must be a string"]


def test_missing_key_is_401(api_client):
    assert_error(
        api_client.post(URL, {"address": "x"}, format="json"), 401, "Missing X-API-Key header"
    )


@pytest.mark.parametrize("platform", ["partner_a", "erp", "standard"])
def test_any_platform_key_may_resolve(organization, mitte, platform):
    response = resolve(
        builders.key_client(builders.api_key(organization, platform)),
        builders.literal(builders.BERLIN),
    )
    assert response.status_code == 200


def test_another_organizations_zones_are_invisible(organization, mitte):
    other = builders.organization()
    response = resolve(
        builders.key_client(builders.api_key(other, "standard")), builders.literal(builders.BERLIN)
    )
    assert_error(response, 404, "No delivery zone found for the given address")


def test_trailing_slash_works(client, mitte):
    assert (
        client.post(
            URL + "/", {"address": builders.literal(builders.BERLIN)}, format="json"
        ).status_code
        == 200
    )


@pytest.mark.parametrize("zone_count", [1, 150])
def test_query_count_does_not_grow_with_zones(
    client, organization, zone_count, django_assert_max_num_queries
):
    for i in range(zone_count):
        centre = builders.offset(*builders.BERLIN, north_m=(i // 15) * 600, east_m=(i % 15) * 600)
        builders.zone(organization, f"Zone {i}", builders.box(*centre, width_m=500, height_m=500))
    resolve(client, builders.literal(builders.BERLIN))  # the key is cached after its first use
    far = builders.offset(*builders.BERLIN, north_m=-1000)
    with django_assert_max_num_queries(2):
        assert resolve(client, builders.literal(builders.BERLIN)).status_code == 200
    with django_assert_max_num_queries(2):
        assert resolve(client, builders.literal(far)).json()["confidence"] == "low"
