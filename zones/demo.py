"""Demo zones for `manage.py demo`: three zones in central Berlin and a small gazetteer."""

from django.db import transaction

from tenants.models import Organization
from zones import services
from zones.models import Place, Zone, ZonePurpose

DEMO_TIMEZONE = "Europe/Berlin"

# Rings of [lng, lat], closed. Mitte and Kreuzberg serve dispatch and slots; Prenzlauer Berg,
# which overlaps Mitte's north-east corner, takes slot bookings only.
DEMO_ZONES = (
    {
        "name": "Berlin Mitte",
        "slug": "berlin-mitte",
        "purpose": ZonePurpose.BOTH,
        "metadata": {"district": "Mitte", "hub": "Alexanderplatz"},
        "ring": [
            [13.3655, 52.5300],
            [13.3850, 52.5370],
            [13.4105, 52.5345],
            [13.4290, 52.5255],
            [13.4215, 52.5115],
            [13.4020, 52.5065],
            [13.3780, 52.5080],
            [13.3640, 52.5170],
            [13.3655, 52.5300],
        ],
    },
    {
        "name": "Kreuzberg",
        "slug": "kreuzberg",
        "purpose": ZonePurpose.BOTH,
        "metadata": {"district": "Friedrichshain-Kreuzberg"},
        "ring": [
            [13.3680, 52.5040],
            [13.3990, 52.5050],
            [13.4300, 52.5030],
            [13.4560, 52.4970],
            [13.4470, 52.4870],
            [13.4150, 52.4860],
            [13.3850, 52.4880],
            [13.3690, 52.4950],
            [13.3680, 52.5040],
        ],
    },
    {
        "name": "Prenzlauer Berg",
        "slug": "prenzlauer-berg",
        "purpose": ZonePurpose.SLOT,
        "metadata": {"district": "Pankow"},
        "ring": [
            [13.3980, 52.5380],
            [13.4130, 52.5520],
            [13.4330, 52.5530],
            [13.4490, 52.5430],
            [13.4400, 52.5300],
            [13.4200, 52.5290],
            [13.4060, 52.5320],
            [13.3980, 52.5380],
        ],
    },
)

DEMO_PLACES = (
    {
        "address": "Alexanderplatz 1, 10178 Berlin",
        "postal_code": "10178",
        "lat": 52.5219,
        "lng": 13.4132,
    },
    {
        "address": "Unter den Linden 40, 10117 Berlin",
        "postal_code": "10117",
        "lat": 52.5170,
        "lng": 13.3888,
    },
    {
        "address": "Oranienstraße 25, 10999 Berlin",
        "postal_code": "10999",
        "lat": 52.5010,
        "lng": 13.4190,
    },
    {
        "address": "Bergmannstraße 10, 10961 Berlin",
        "postal_code": "10961",
        "lat": 52.4905,
        "lng": 13.3930,
    },
    {
        "address": "Kollwitzstraße 50, 10405 Berlin",
        "postal_code": "10405",
        "lat": 52.5400,
        "lng": 13.4190,
    },
)


@transaction.atomic
def demo_zones_create(*, organization: Organization) -> list[Zone]:
    """The demo zones and gazetteer of `organization`, created when missing (idempotent)."""
    zones = []
    for spec in DEMO_ZONES:
        zone = Zone.objects.filter(organization=organization, slug=spec["slug"]).first()
        if zone is None:
            zone = services.zone_create(
                organization_id=organization.id,
                name=spec["name"],
                slug=spec["slug"],
                purpose=spec["purpose"],
                timezone_name=DEMO_TIMEZONE,
                metadata=spec["metadata"],
                geodata={"type": "Polygon", "coordinates": [spec["ring"]]},
            )
        zones.append(zone)
    for place in DEMO_PLACES:
        if not Place.objects.filter(organization=organization, address=place["address"]).exists():
            services.place_save(place=Place(organization=organization, locality="Berlin", **place))
    return zones
