"""Examples of the slot operations' requests and answers in the OpenAPI document (contract "Slots
and windows", "Management API"): the demo's Berlin Mitte zone with the policy's default templates
(four-hour slots, a van for ten orders, booking closing two hours before the start)."""

from delivery.schema import answer_example, request_example
from zones.openapi_examples import (
    CREATED_AT,
    UPDATED_AT,
    ZONE_ID,
    ZONE_NAME,
)

VEHICLE_CAPACITY = [{"vehicleType": "van", "count": 1, "maxOrdersPerVehicle": 10}]
#: the Monday 08:00-12:00 and 12:00-16:00 templates of Berlin Mitte
TEMPLATE_ID = "bac7d68c-9f16-4065-80f2-038bbb664a88"
OTHER_TEMPLATE_ID = "cf9a6da9-7e1b-455d-9774-f6953ead2044"
SLOT_DATE = "2026-11-30"  # a Monday, in Central European Time (+01:00)
_WEEKDAYS = {"2026-11-30": ("Mon", 1), "2026-12-01": ("Tue", 2)}

POLICY = {
    "timezone": "Europe/Berlin",
    "defaultDurationMinutes": 240,
    "defaultCutoffMinutes": 120,
    "defaultVehicleCapacity": VEHICLE_CAPACITY,
    "defaultPickupAddress": "Alexanderplatz 1, 10178 Berlin",
}
POLICY_READ = [answer_example(200, POLICY)]
POLICY_UPDATE = [request_example(POLICY), answer_example(200, POLICY)]

TEMPLATE_INPUT = {
    "zoneId": ZONE_ID,
    "dayOfWeek": 1,
    "startTime": "08:00",
    "endTime": "12:00",
    "cutoffMinutes": 120,
    "vehicleCapacity": VEHICLE_CAPACITY,
}
TEMPLATE = {
    "id": TEMPLATE_ID,
    **TEMPLATE_INPUT,
    "durationMinutes": 240,
    "cutoffDayBeforeAt": None,
    "cutoffRule": "minutes_before_start",
    "capacity": 10,
    "createdAt": CREATED_AT,
    "updatedAt": CREATED_AT,
}
TEMPLATE_PATCH = {"cutoffDayBeforeAt": "18:00"}
TEMPLATE_PATCHED = {
    **TEMPLATE,
    **TEMPLATE_PATCH,
    "cutoffMinutes": None,
    "cutoffRule": "day_before_at",
    "updatedAt": UPDATED_AT,
}
_AFTERNOON = {**TEMPLATE, "id": OTHER_TEMPLATE_ID, "startTime": "12:00", "endTime": "16:00"}
_TUESDAY = {**TEMPLATE, "id": "3f0e9a51-6c2d-4b7e-9a80-1d5c2e7b4f63", "dayOfWeek": 2}

TEMPLATE_LIST = [answer_example(200, TEMPLATE)]
TEMPLATE_CREATE = [request_example(TEMPLATE_INPUT), answer_example(201, TEMPLATE)]
TEMPLATE_READ = [answer_example(200, TEMPLATE)]
TEMPLATE_UPDATE = [request_example(TEMPLATE_PATCH), answer_example(200, TEMPLATE_PATCHED)]
TEMPLATE_SEED = [
    request_example(
        {"zoneIds": [ZONE_ID], "daysOfWeek": [1], "firstStart": "08:00", "lastEnd": "16:00"}
    ),
    answer_example(201, TEMPLATE),
]


def _slot(template: dict, date: str, *, booked: int, cutoff_at: str) -> dict:
    """An availability entry of `template` on `date` (the zone is at +01:00)."""
    label, weekday = _WEEKDAYS[date]
    start, end = template["startTime"], template["endTime"]
    available = template["capacity"] - booked
    return {
        "templateId": template["id"],
        "label": f"{label} {start}-{end}",
        "date": date,
        "dayOfWeek": weekday,
        "startTime": start,
        "endTime": end,
        "durationMinutes": template["durationMinutes"],
        "deliveryWindowStart": f"{date}T{start}:00+01:00",
        "deliveryWindowEnd": f"{date}T{end}:00+01:00",
        "cutoffAt": f"{date}T{cutoff_at}:00Z",
        "capacity": template["capacity"],
        "booked": booked,
        "available": available,
        "bookable": available > 0,
        "unbookableReason": None if available else "full",
        "vehicleCapacity": template["vehicleCapacity"],
    }


_MONDAY = [
    _slot(TEMPLATE, SLOT_DATE, booked=3, cutoff_at="05:00"),
    _slot(_AFTERNOON, SLOT_DATE, booked=10, cutoff_at="09:00"),
]
_ZONE = {"polygonId": ZONE_ID, "polygonName": ZONE_NAME}

DAY_AVAILABILITY = [answer_example(200, {**_ZONE, "date": SLOT_DATE, "slots": _MONDAY})]
BULK_AVAILABILITY = [
    answer_example(
        200,
        {
            **_ZONE,
            "dates": [
                {"date": SLOT_DATE, "slots": _MONDAY},
                {
                    "date": "2026-12-01",
                    "slots": [_slot(_TUESDAY, "2026-12-01", booked=0, cutoff_at="05:00")],
                },
            ],
        },
    )
]
