"""Polygons are read on the lng/lat plane (GeoJSON): one that crosses the antimeridian or covers
more than a hemisphere would be read as another shape, so it is refused with the reason
(contract "Slots and windows")."""

import json

import pytest

from tests import builders
from tests.conftest import assert_error
from tests.zones.test_admin import admin_client_for, zone_form
from zones.errors import PolygonInvalid
from zones.geometry import polygon_from_geodata, polygon_normalize
from zones.models import Zone

ANTIMERIDIAN = (
    "geodata crosses the antimeridian (the edge from position {} to {} spans more than 180 "
    "degrees of longitude): split it into two zones, one each side of longitude 180"
)


def polygon(*positions) -> dict:
    return {"type": "Polygon", "coordinates": [[list(p) for p in positions]]}


# Fiji's Taveuni and Vanua Levu reach across 180: 179.5 E to 179.5 W is one degree that way.
ACROSS_THE_ANTIMERIDIAN = polygon(
    (179.5, -16.5), (-179.5, -16.5), (-179.5, -17.0), (179.5, -17.0), (179.5, -16.5)
)
WHOLE_WORLD = polygon((-180, -90), (180, -90), (180, 90), (-180, 90), (-180, -90))
# Short edges, but 200 degrees wide: more than a hemisphere.
WIDE_BAND = polygon(
    *[(lng, 10) for lng in range(-100, 101, 50)],
    *[(lng, 20) for lng in range(100, -101, -50)],
    (-100, 10),
)


@pytest.mark.parametrize(
    ("geodata", "message"),
    [
        (ACROSS_THE_ANTIMERIDIAN, ANTIMERIDIAN.format(0, 1)),
        (
            WHOLE_WORLD,
            "geodata spans 360 degrees of longitude: a zone may span at most 180 (more covers "
            "more than a hemisphere)",
        ),
        (
            WIDE_BAND,
            "geodata spans 200 degrees of longitude: a zone may span at most 180 (more covers "
            "more than a hemisphere)",
        ),
    ],
    ids=["antimeridian", "whole-world", "wider-than-a-hemisphere"],
)
def test_polygons_read_as_another_shape_are_refused(geodata, message):
    with pytest.raises(PolygonInvalid) as refused:
        polygon_normalize(geodata)

    assert refused.value.message == [message]


def test_an_open_ring_across_the_antimeridian_is_refused_at_its_closing_edge():
    open_ring = polygon((170, 0), (175, 0), (-175, 5))  # closed back to (170, 0)

    with pytest.raises(PolygonInvalid) as refused:
        polygon_normalize(open_ring)

    assert refused.value.message == [ANTIMERIDIAN.format(1, 2)]


@pytest.mark.parametrize(
    "geodata",
    [
        # up to the antimeridian from either side: two zones of one area split there
        polygon((179.5, -16.5), (180, -16.5), (180, -17.0), (179.5, -17.0)),
        polygon((-180, -16.5), (-179.5, -16.5), (-179.5, -17.0), (-180, -17.0)),
        # exactly a hemisphere wide
        polygon((-90, -10), (90, -10), (90, 10), (-90, 10)),
    ],
)
def test_polygons_up_to_the_limits_are_kept(geodata):
    normalized = polygon_normalize(geodata)

    assert polygon_from_geodata(normalized).area == pytest.approx(
        polygon_from_geodata({"coordinates": [geodata["coordinates"][0]]}).area
    )


@pytest.mark.django_db
def test_the_management_api_answers_400_with_the_reason(organization):
    response = builders.manager_client(organization).post(
        f"/api/manage/organizations/{organization.id}/zones",
        {"name": "Taveuni", "geodata": ACROSS_THE_ANTIMERIDIAN},
        format="json",
    )

    assert_error(response, 400, [ANTIMERIDIAN.format(0, 1)])
    assert not Zone.objects.exists()


@pytest.mark.django_db
def test_the_django_admin_refuses_it_with_the_reason(organization):
    response = admin_client_for(organization).post(
        "/admin/zones/zone/add/",
        zone_form(organization, geodata=json.dumps(WHOLE_WORLD)),
    )

    assert response.status_code == 200  # the form again, with its error
    assert "geodata spans 360 degrees of longitude" in response.content.decode()
    assert not Zone.objects.exists()
