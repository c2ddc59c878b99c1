"""Examples of the zone operations' requests and answers in the OpenAPI document (contract "Slots
and windows", "Geocoding and resolve-zone", "Management API"), built on the demo's Berlin Mitte
zone (zones/demo.py): the slot and order examples (slots/, integrations/) build on these values, so
the whole document speaks of one organization, one zone and one day."""

from drf_spectacular.utils import OpenApiExample

from delivery.schema import answer_example, request_example
from zones.demo import DEMO_PLACES, DEMO_TIMEZONE, DEMO_ZONES
from zones.models import ZonePurpose

ORGANIZATION_ID = "f265ebf7-dcdf-4319-a286-a097890150d6"
ZONE_ID = "709ee264-e725-4ad2-8683-893074a56ff1"
CREATED_AT = "2026-11-26T06:55:42.301233Z"
UPDATED_AT = "2026-11-26T09:12:05.118204Z"

_MITTE = DEMO_ZONES[0]
_NEIGHBOUR = DEMO_ZONES[2]
ZONE_NAME = _MITTE["name"]
ADDRESS = DEMO_PLACES[0]["address"]
ADDRESS_LAT = DEMO_PLACES[0]["lat"]
ADDRESS_LNG = DEMO_PLACES[0]["lng"]


ZONE_INPUT = {
    "name": ZONE_NAME,
    "slug": _MITTE["slug"],
    "purpose": ZonePurpose.BOTH.value,
    "timezone": DEMO_TIMEZONE,
    "geodata": {"type": "Polygon", "coordinates": [_MITTE["ring"]]},
    "metadata": _MITTE["metadata"],
    "windowCapacity": 20,
    "depot": {"address": ADDRESS, "lat": ADDRESS_LAT, "lng": ADDRESS_LNG},
}
ZONE = {
    "id": ZONE_ID,
    **ZONE_INPUT,
    "enabled": True,
    "createdAt": CREATED_AT,
    "updatedAt": CREATED_AT,
}
ZONE_PATCH = {"windowCapacity": 30}
ZONE_PATCHED = {**ZONE, **ZONE_PATCH, "updatedAt": UPDATED_AT}

ZONE_LIST = [answer_example(200, ZONE)]
ZONE_CREATE = [request_example(ZONE_INPUT), answer_example(201, ZONE)]
ZONE_READ = [answer_example(200, ZONE)]
ZONE_UPDATE = [request_example(ZONE_PATCH), answer_example(200, ZONE_PATCHED)]

BLACKOUT_INPUT = {"date": "2026-12-24", "reason": "Christmas Eve: the hub is closed"}
BLACKOUT = {"id": "00c177ac-5809-4d13-a659-6ea719e0c758", **BLACKOUT_INPUT}
BLACKOUT_LIST = [answer_example(200, BLACKOUT)]
BLACKOUT_CREATE = [request_example(BLACKOUT_INPUT), answer_example(201, BLACKOUT)]

ZONES_EXPORT = [
    answer_example(
        200,
        {
            "format": "json",
            "organizationId": ORGANIZATION_ID,
            "generatedAt": UPDATED_AT,
            "zones": [
                {
                    "name": ZONE_NAME,
                    "slug": _MITTE["slug"],
                    "isActive": True,
                    "polygon": [{"lat": lat, "lng": lng} for lng, lat in _MITTE["ring"]],
                    "metadata": _MITTE["metadata"],
                }
            ],
        },
        name="JSON",
    ),
    OpenApiExample(
        "CSV",
        response_only=True,
        status_codes=["200"],
        media_type="text/csv",
        value="name,slug,isActive,polygon,metadata\r\n"
        'Berlin Mitte,berlin-mitte,true,"[[52.53,13.3655],[52.537,13.385],[52.5345,13.4105],'
        "[52.5255,13.429],[52.5115,13.4215],[52.5065,13.402],[52.508,13.378],[52.517,13.364],"
        '[52.53,13.3655]]","{""hub"":""Alexanderplatz"",""district"":""Mitte""}"\r\n',
    ),
]

RESOLVE_ZONE = [
    request_example({"address": ADDRESS}),
    answer_example(
        200,
        {
            "zone": {
                "id": ZONE_ID,
                "name": ZONE_NAME,
                "slug": _MITTE["slug"],
                "organizationId": ORGANIZATION_ID,
            },
            "coordinates": {"lat": ADDRESS_LAT, "lng": ADDRESS_LNG},
            "confidence": "high",
            "evidence": {
                "distanceMeters": 0.0,
                "boundaryDistanceMeters": 895.0,
                "geocoderPrecision": "precise",
                "nextBestZone": {
                    "id": "04e61fa3-34a7-4616-9d15-2415c179d0cf",
                    "name": _NEIGHBOUR["name"],
                    "slug": _NEIGHBOUR["slug"],
                    "distanceMeters": 898.4,
                },
            },
        },
    ),
]
