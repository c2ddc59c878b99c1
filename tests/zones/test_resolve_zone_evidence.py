"""POST /api/promises/resolve-zone: the `evidence` of an answer, in geodesic metres (WGS 84):
distance to the zone, depth inside it, the geocoder's precision and the next-best zone."""

import pytest

from tests import builders

pytestmark = pytest.mark.django_db

URL = "/api/promises/resolve-zone"


@pytest.fixture
def client(organization):
    return builders.key_client(builders.api_key(organization, "standard"))


def evidence_of(client, address) -> dict:
    response = client.post(URL, {"address": address}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def test_deep_inside_distance_is_0_and_the_depth_is_the_way_to_the_edge(client, mitte):
    body = evidence_of(client, builders.literal(builders.BERLIN))

    evidence = body["evidence"]
    assert evidence["distanceMeters"] == 0
    assert evidence["boundaryDistanceMeters"] == pytest.approx(1000, abs=1.0)
    assert evidence["geocoderPrecision"] == "precise"
    assert evidence["nextBestZone"] is None
    assert body["confidence"] == "high"


def test_30_m_inside_the_edge(client, mitte):
    point = builders.offset(builders.BERLIN[0], builders.east_edge(mitte.geodata), east_m=-30)
    evidence = evidence_of(client, builders.literal(point))["evidence"]
    assert evidence["distanceMeters"] == 0
    assert evidence["boundaryDistanceMeters"] == pytest.approx(30, abs=0.5)


def test_outside_the_distance_is_to_the_zone_and_the_depth_is_0(client, mitte):
    point = builders.offset(builders.BERLIN[0], builders.east_edge(mitte.geodata), east_m=20)
    body = evidence_of(client, builders.literal(point))
    assert body["confidence"] == "medium"
    assert body["evidence"]["distanceMeters"] == pytest.approx(20, abs=0.5)
    assert body["evidence"]["boundaryDistanceMeters"] == 0


def test_a_low_answer_2_km_away(client, mitte):
    point = builders.offset(builders.BERLIN[0], builders.east_edge(mitte.geodata), east_m=2000)
    body = evidence_of(client, builders.literal(point))
    assert body["confidence"] == "low"
    assert body["evidence"]["distanceMeters"] == pytest.approx(2000, abs=2.0)


def test_the_next_best_zone_is_the_nearest_other_zone_with_its_distance(
    client, organization, mitte
):
    # A 1 km box whose west edge lies 1,500 m east of the centre, 500 m beyond Mitte's edge.
    east = builders.zone(
        organization,
        "East",
        builders.box(*builders.offset(*builders.BERLIN, east_m=2000), width_m=1000, height_m=1000),
    )
    builders.zone(
        organization,
        "Disabled near",
        builders.box(*builders.offset(*builders.BERLIN, north_m=1200), width_m=200, height_m=200),
        enabled=False,
    )

    evidence = evidence_of(client, builders.literal(builders.BERLIN))["evidence"]
    assert evidence["nextBestZone"] == {
        "id": str(east.id),
        "name": "East",
        "slug": "east",
        "distanceMeters": pytest.approx(1500, abs=1.5),
    }


def test_a_zone_covering_the_point_too_is_the_next_best_at_distance_0(client, organization, mitte):
    inner = builders.zone(
        organization, "Inner", builders.box(*builders.BERLIN, width_m=400, height_m=400)
    )

    body = evidence_of(client, builders.literal(builders.BERLIN))
    assert body["zone"]["id"] == str(inner.id)  # the smallest covering zone wins
    assert body["evidence"]["boundaryDistanceMeters"] == pytest.approx(200, abs=0.5)
    assert body["evidence"]["nextBestZone"]["id"] == str(mitte.id)
    assert body["evidence"]["nextBestZone"]["distanceMeters"] == 0


def test_nothing_else_within_5_km_is_null(client, organization, mitte):
    builders.zone(
        organization,
        "Far",
        builders.box(*builders.offset(*builders.BERLIN, east_m=8000), width_m=500, height_m=500),
    )
    assert (
        evidence_of(client, builders.literal(builders.BERLIN))["evidence"]["nextBestZone"] is None
    )


def test_an_approximate_geocode_says_so(client, organization, mitte):
    builders.alexanderplatz(organization)
    body = evidence_of(client, "Karl-Liebknecht-Straße 9, 10178 Berlin")
    assert body["confidence"] == "medium"
    assert body["evidence"]["geocoderPrecision"] == "approximate"
    assert body["evidence"]["boundaryDistanceMeters"] == pytest.approx(1000, abs=1.0)


def test_the_existing_fields_come_first_and_unchanged(client, organization, mitte):
    body = evidence_of(client, builders.literal(builders.BERLIN))
    assert list(body) == ["zone", "coordinates", "confidence", "evidence"]
