"""Examples of the zone operations' requests and answers in the OpenAPI document (contract "Slots
and windows", "Geocoding and resolve-zone", "Management API"), built on the demo's Berlin Mitte
zone (zones/demo.py) so that every app's examples speak of the same organization and zone."""

from drf_spectacular.utils import OpenApiExample

from zones.demo import DEMO_PLACES, DEMO_TIMEZONE, DEMO_ZONES
from zones.models import ZonePurpose

ORGANIZATION_ID = "5ea838e2-d172-4a9b-b2c6-274053c2a605"
ZONE_ID = "709ee264-e725-4ad2-8683-893074a56ff1"
CREATED_AT = "2026-11-26T06:55:42.301233Z"
UPDATED_AT = "2026-11-26T09:12:05.118204Z"

_MITTE = DEMO_ZONES[0]
_NEIGHBOUR = DEMO_ZONES[2]
ZONE_NAME = _MITTE["name"]
ADDRESS = DEMO_PLACES[0]["address"]
ADDRESS_LAT = DEMO_PLACES[0]["lat"]
ADDRESS_LNG = DEMO_PLACES[0]["lng"]


# The two shapes of example every app's examples module builds (zones is the lowest app that
# has any; slots and integrations import them from here).
def request(value, name: str = "Request") -> OpenApiExample:
    """The example of an operation's request body."""
    return OpenApiExample(name, value=value, request_only=True)


def answer(value, status: int = 200, name: str = "Answer", **options) -> OpenApiExample:
    """The example of an operation's success answer with `status`. A list answer's example is
    its one item: drf-spectacular shows it in the list."""
    return OpenApiExample(name, value=value, response_only=True, status_codes=[status], **options)


ZONE_INPUT = {
    "name": ZONE_NAME,
    "slug": _MITTE["slug"],
    "purpose": ZonePurpose.BOTH.value,
    "timezone": DEMO_TIMEZONE,
    "geodata": {"type": "Polygon", "coordinates": [_MITTE["ring"]]},
    "metadata": _MITTE["metadata"],
    "windowCapacity": 20,
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

ZONE_LIST = [answer(ZONE)]
ZONE_CREATE = [request(ZONE_INPUT), answer(ZONE, 201)]
ZONE_READ = [answer(ZONE)]
ZONE_UPDATE = [request(ZONE_PATCH), answer(ZONE_PATCHED)]

BLACKOUT_INPUT = {"date": "2026-12-24", "reason": "Christmas Eve: the hub is closed"}
BLACKOUT = {"id": "00c177ac-5809-4d13-a659-6ea719e0c758", **BLACKOUT_INPUT}
BLACKOUT_LIST = [answer(BLACKOUT)]
BLACKOUT_CREATE = [request(BLACKOUT_INPUT), answer(BLACKOUT, 201)]

ZONES_EXPORT = [
    answer(
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
    answer(
        "name,slug,isActive,polygon,metadata\r\n"
        'Berlin Mitte,berlin-mitte,true,"[[52.53,13.3655],[52.537,13.385],[52.5345,13.4105],'
        "[52.5255,13.429],[52.5115,13.4215],[52.5065,13.402],[52.508,13.378],[52.517,13.364],"
        '[52.53,13.3655]]","{""hub"":""Alexanderplatz"",""district"":""Mitte""}"\r\n',
        name="CSV",
        media_type="text/csv",
    ),
]

RESOLVE_ZONE = [
    request({"address": ADDRESS}),
    answer(
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
        }
    ),
]
