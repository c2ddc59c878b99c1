"""Geocoding (contract "Geocoding and resolve-zone"): the local geocoder and its gazetteer,
Nominatim, the cache."""

import json
import time

import pytest
from werkzeug import Response

from tests import builders
from tests.conftest import assert_error
from zones.errors import GeocoderUnavailable
from zones.geocoding import GeocodeResult, geocode, normalize_text, parse_coordinates

pytestmark = pytest.mark.django_db


add_place = builders.place


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        ("52.52,13.405", (52.52, 13.405)),
        (" -33.8688 , 151.2093 ", (-33.8688, 151.2093)),
        ("90,180", (90.0, 180.0)),
        ("91,10", None),
        ("10,181", None),
        ("52.52;13.4", None),
        ("Hauptstraße 5, 10115 Berlin", None),
    ],
)
def test_parse_coordinates(address, expected):
    assert parse_coordinates(address) == expected


def test_normalize_text_folds_case_accents_and_punctuation():
    assert normalize_text("  Straße 1,  KÖLN-Süd ") == "strasse 1 koln sud"


def test_literal_coordinates_are_precise_without_a_query(organization, django_assert_num_queries):
    with django_assert_num_queries(0):
        assert geocode(organization_id=organization.id, address="52.5,13.4") == GeocodeResult(
            52.5, 13.4, precise=True
        )


def test_exact_gazetteer_match_is_precise(organization):
    add_place(organization, "Alexanderplatz 1, 10178 Berlin", postal_code="10178", lat=52.52)
    assert geocode(
        organization_id=organization.id, address="ALEXANDERPLATZ 1 10178 Berlin"
    ) == GeocodeResult(52.52, 13.4, precise=True)


def test_postal_code_match_is_approximate_at_the_mean_position(organization):
    add_place(organization, "A-Straße 1", postal_code="10178", locality="Berlin", lat=52.50)
    add_place(organization, "B-Straße 2", postal_code="10178", locality="Berlin", lat=52.52)
    add_place(organization, "C-Weg 3", postal_code="20095", locality="Hamburg", lat=53.55)
    result = geocode(organization_id=organization.id, address="Unknown-Weg 7, 10178 Berlin")
    assert result == GeocodeResult(pytest.approx(52.51), pytest.approx(13.4), precise=False)


def test_two_token_postal_codes_match(organization):
    add_place(organization, "10 Downing St", postal_code="SW1A 2AA", lat=51.5034, lng=-0.1276)
    result = geocode(organization_id=organization.id, address="12 Downing Street, London SW1A 2AA")
    assert result == GeocodeResult(51.5034, -0.1276, precise=False)


def test_locality_match_is_approximate_and_the_last_locality_wins(organization):
    add_place(organization, "Rathaus", locality="Hamburg", lat=53.55, lng=10.0)
    add_place(organization, "Rotes Rathaus", locality="Frankfurt am Main", lat=50.11, lng=8.68)
    result = geocode(organization_id=organization.id, address="Hamburg Allee 3, Frankfurt am Main")
    assert result == GeocodeResult(50.11, 8.68, precise=False)


def test_unknown_address_is_none(organization):
    add_place(organization, "Alexanderplatz 1", postal_code="10178", locality="Berlin")
    assert geocode(organization_id=organization.id, address="1 Main Street, Springfield") is None


def test_another_organizations_gazetteer_is_not_used(organization):
    add_place(builders.organization(), "Alexanderplatz 1", postal_code="10178", locality="Berlin")
    assert geocode(organization_id=organization.id, address="Alexanderplatz 1") is None


def test_answers_are_cached(organization, django_assert_num_queries):
    add_place(organization, "Alexanderplatz 1")
    geocode(organization_id=organization.id, address="Alexanderplatz 1")
    geocode(organization_id=organization.id, address="Nowhere 1")
    with django_assert_num_queries(0):
        assert geocode(organization_id=organization.id, address="alexanderplatz 1").precise
        assert geocode(organization_id=organization.id, address="Nowhere 1") is None


def test_a_gazetteer_change_drops_cached_answers(organization):
    assert geocode(organization_id=organization.id, address="Alexanderplatz 1") is None
    add_place(organization, "Alexanderplatz 1", lat=52.52)
    assert geocode(organization_id=organization.id, address="Alexanderplatz 1").lat == 52.52


# ----- Nominatim, against a real local HTTP server -----


@pytest.fixture
def nominatim(httpserver, settings):
    settings.GEOCODER = "nominatim"
    settings.NOMINATIM_URL = httpserver.url_for("/")
    return httpserver


def nominatim_answers(httpserver, results):
    httpserver.expect_request("/search").respond_with_json(results)


def test_nominatim_house_result_is_precise(organization, nominatim):
    nominatim_answers(
        nominatim,
        [
            {
                "lat": "52.5219",
                "lon": "13.4132",
                "display_name": "Alexanderplatz 1",
                "place_rank": 30,
            }
        ],
    )
    result = geocode(organization_id=organization.id, address="Alexanderplatz 1, Berlin")
    assert result == GeocodeResult(52.5219, 13.4132, precise=True)
    request, _ = nominatim.log[0]
    assert request.args["q"] == "Alexanderplatz 1, Berlin"
    assert request.args["format"] == "json"
    assert request.headers["User-Agent"] == "delivery-geocoder/1"


def test_nominatim_street_result_is_approximate(organization, nominatim):
    nominatim_answers(
        nominatim,
        [
            {
                "lat": "52.52",
                "lon": "13.41",
                "display_name": "Karl-Marx-Allee",
                "place_rank": 26,
                "address": {"road": "Karl-Marx-Allee"},
            }
        ],
    )
    result = geocode(organization_id=organization.id, address="Karl-Marx-Allee, Berlin")
    assert result == GeocodeResult(52.52, 13.41, precise=False)


def test_nominatim_house_number_makes_it_precise(organization, nominatim):
    nominatim_answers(
        nominatim,
        [{"lat": "1.5", "lon": "2.5", "display_name": "x", "address": {"house_number": "9"}}],
    )
    assert geocode(organization_id=organization.id, address="9 Some Street").precise is True


def test_nominatim_no_result_resolves_404_and_is_cached(organization, nominatim):
    nominatim_answers(nominatim, [])
    client = builders.key_client(builders.api_key(organization, "standard"))
    for _ in range(2):
        response = client.post("/api/promises/resolve-zone", {"address": "Atlantis"}, format="json")
        assert_error(response, 404, "No delivery zone found for the given address")
    assert len(nominatim.log) == 1


def test_nominatim_result_resolves_a_zone(organization, nominatim):
    builders.zone(
        organization, "Mitte", builders.box(*builders.BERLIN, width_m=2000, height_m=2000)
    )
    nominatim_answers(
        nominatim,
        [
            {
                "lat": str(builders.BERLIN[0]),
                "lon": str(builders.BERLIN[1]),
                "display_name": "x",
                "place_rank": 30,
            }
        ],
    )
    client = builders.key_client(builders.api_key(organization, "standard"))
    body = client.post(
        "/api/promises/resolve-zone", {"address": "Alexanderplatz 1"}, format="json"
    ).json()
    assert (body["zone"]["name"], body["confidence"]) == ("Mitte", "high")


def test_nominatim_failure_is_503_and_not_cached(organization, nominatim):
    nominatim.expect_oneshot_request("/search").respond_with_response(
        Response(json.dumps({"error": "down"}), status=500)
    )
    with pytest.raises(GeocoderUnavailable):
        geocode(organization_id=organization.id, address="Alexanderplatz 1")
    nominatim_answers(nominatim, [{"lat": "1", "lon": "2", "display_name": "x"}])
    assert geocode(organization_id=organization.id, address="Alexanderplatz 1") == GeocodeResult(
        1.0, 2.0, precise=False
    )


def test_nominatim_timeout_is_503(organization, nominatim, settings):
    settings.NOMINATIM_TIMEOUT_SECONDS = 0.2

    def slow(request):
        time.sleep(1)
        return Response("[]", content_type="application/json")

    nominatim.expect_request("/search").respond_with_handler(slow)
    client = builders.key_client(builders.api_key(organization, "standard"))
    response = client.post("/api/promises/resolve-zone", {"address": "Somewhere"}, format="json")
    assert_error(response, 503, "Geocoding service unavailable")


def test_nominatim_still_answers_literal_coordinates_itself(organization, nominatim):
    assert geocode(organization_id=organization.id, address="1.5,2.5").precise
    assert nominatim.log == []
