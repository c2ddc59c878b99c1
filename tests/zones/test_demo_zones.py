"""`zones.demo.demo_zones_create`: realistic demo zones and gazetteer, idempotently."""

import pytest

from tests import builders
from zones.demo import demo_zones_create
from zones.models import Place, Zone

pytestmark = pytest.mark.django_db


def test_demo_zones_are_created_once(organization):
    zones = demo_zones_create(organization=organization)
    assert [(zone.name, zone.purpose, zone.timezone) for zone in zones] == [
        ("Berlin Mitte", "both", "Europe/Berlin"),
        ("Kreuzberg", "both", "Europe/Berlin"),
        ("Prenzlauer Berg", "slot", "Europe/Berlin"),
    ]
    again = demo_zones_create(organization=organization)
    assert [zone.id for zone in again] == [zone.id for zone in zones]
    assert Zone.objects.filter(organization=organization).count() == 3
    assert Place.objects.filter(organization=organization).count() == 5


@pytest.mark.parametrize(
    ("address", "zone", "confidence"),
    [
        ("Alexanderplatz 1, 10178 Berlin", "Berlin Mitte", "high"),
        ("Oranienstraße 25, 10999 Berlin", "Kreuzberg", "high"),
        ("Kollwitzstraße 50, 10405 Berlin", "Prenzlauer Berg", "high"),
        ("Some other street 3, 10999 Berlin", "Kreuzberg", "medium"),
    ],
)
def test_demo_places_resolve_inside_the_demo_zones(organization, address, zone, confidence):
    demo_zones_create(organization=organization)
    client = builders.key_client(builders.api_key(organization, "standard"))
    body = client.post("/api/promises/resolve-zone", {"address": address}, format="json").json()
    assert (body["zone"]["name"], body["confidence"]) == (zone, confidence)
