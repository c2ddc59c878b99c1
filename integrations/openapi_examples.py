"""Examples of the order operations' requests and answers in the OpenAPI document (contract
"Orders", "Slots and windows", "Management API"): a partner order and an ERP order delivered in
the demo's Berlin Mitte zone, and the same partner order as the management API shows it.

Each answer is built from the request it answers, so that the examples agree with each other."""

from delivery.schema import answer_example, request_example
from slots.openapi_examples import OTHER_TEMPLATE_ID, SLOT_DATE, TEMPLATE_ID
from zones.openapi_examples import (
    ADDRESS,
    ZONE_ID,
    ZONE_NAME,
)

PARTNER_ORDER_ID = "27e017a1-4ef7-4e9d-8967-2e25d91ac27c"
ERP_ORDER_ID = "e62d8fb4-76e4-4769-a925-ddf9ec3bef13"
TRACKING_TOKEN = "1I5tdULURBjL9AETRJrKqAW-jSFWUFQl"
TRACKING_URL = f"https://delivery.example.com/track/{TRACKING_TOKEN}"
CREATED_AT = "2026-11-26T06:55:55.368457Z"
CHANGED_AT = "2026-11-26T07:40:12.504113Z"
_MORNING = {
    "deliveryWindowStart": f"{SLOT_DATE}T08:00:00+01:00",
    "deliveryWindowEnd": f"{SLOT_DATE}T12:00:00+01:00",
}
_AFTERNOON = {
    "deliveryWindowStart": f"{SLOT_DATE}T12:00:00+01:00",
    "deliveryWindowEnd": f"{SLOT_DATE}T16:00:00+01:00",
}
_TRACKING = {"trackingToken": TRACKING_TOKEN, "trackingUrl": TRACKING_URL}
_RECIPIENT = {
    "dropoffAddress": "Unter den Linden 77, 10117 Berlin",
    "dropoffLat": 52.5163,
    "dropoffLng": 13.3807,
    "recipientName": "Erika Mustermann",
    "recipientPhone": "+4915112345678",
}
_CANCEL = {"reason": "Customer cancelled the purchase"}
#: the organization's driver and admin, and the name of its partner_a key, as the management API's
#: driver, login and API key examples show them
DRIVER = {
    "id": "1fe1c9c4-f693-484c-a8c9-473a2cc2204d",
    "name": "Marta Nowak",
    "phone": "+48601234567",
}

# ----- partner family -----

_PARTNER_REF = {"externalRef": "SO-1001"}
PARTNER_ORDER_INPUT = {
    **_PARTNER_REF,
    "pickupAddress": ADDRESS,
    "pickupLat": 52.5219,
    "pickupLng": 13.4132,
    **_RECIPIENT,
    "packageSize": "small",
    "weightKg": 2.5,
    "temperatureClass": "Chilled",
    "deliveryZone": ZONE_NAME,
    "deliveryWindowStart": _AFTERNOON["deliveryWindowStart"],
    "notes": "Leave at the door",
}
_PARTNER_PLACES = {
    key: PARTNER_ORDER_INPUT[key]
    for key in ("pickupAddress", "pickupLat", "pickupLng", *_RECIPIENT, "packageSize")
}
_PARTNER_NOTES = "Temperature: Chilled; Weight: 2.5 kg; Zone: Berlin Mitte; Leave at the door"
PARTNER_ORDER_CREATED = {
    "id": PARTNER_ORDER_ID,
    "status": "pending",
    **_PARTNER_PLACES,
    **_PARTNER_REF,
    "notes": _PARTNER_NOTES,
    **_AFTERNOON,
    **_TRACKING,
    "createdAt": CREATED_AT,
    "updatedAt": CREATED_AT,
}
_PARTNER_IDS = {**_PARTNER_REF, "serviceOrderId": PARTNER_ORDER_ID}
PARTNER_ORDER = {
    **_PARTNER_IDS,
    "status": "pending",
    "driver": None,
    "eta": None,
    "attempt": 1,
    **_AFTERNOON,
    **_TRACKING,
    "currentMappingStatus": "created",
}

PARTNER_ORDER_CREATE = [
    request_example(PARTNER_ORDER_INPUT),
    answer_example(201, PARTNER_ORDER_CREATED),
]
PARTNER_ORDER_READ = [answer_example(200, PARTNER_ORDER)]
PARTNER_ORDER_RELEASE = [
    answer_example(
        200,
        {
            **_PARTNER_IDS,
            "status": "dispatching",
            "currentMappingStatus": "released",
            "releasedAt": CHANGED_AT,
        },
    )
]
PARTNER_ORDER_CANCEL = [
    request_example(_CANCEL),
    answer_example(
        200, {**PARTNER_ORDER, "status": "cancelled", "currentMappingStatus": "cancelled"}
    ),
]


def _window(start: str, end: str, scheduled: int) -> dict:
    return {
        "start": f"{SLOT_DATE}T{start}:00+01:00",
        "end": f"{SLOT_DATE}T{end}:00+01:00",
        "available": scheduled < 20,
        "scheduledCount": scheduled,
        "capacityLimit": 20,
    }


_ZONE_WINDOWS = {
    "zone": ZONE_NAME,
    "date": SLOT_DATE,
    "timezone": "Europe/Berlin",
    "windows": [
        _window("08:00", "12:00", 20),
        _window("12:00", "16:00", 1),
        _window("16:00", "20:00", 0),
    ],
}
DELIVERY_WINDOWS = [answer_example(200, _ZONE_WINDOWS, name="By zone")]

# ----- ERP family -----

_ERP_SLOT = {"deliverySlotTemplateId": TEMPLATE_ID, "deliverySlotDate": SLOT_DATE}
_ERP_REF = {"externalRef": "SO-2001"}
ERP_ORDER_INPUT = {**_ERP_REF, **_RECIPIENT, "packageSize": "medium", **_ERP_SLOT}
ERP_ORDER = {
    "id": ERP_ORDER_ID,
    "status": "pending",
    **_ERP_REF,
    **_ERP_SLOT,
    **_MORNING,
    "assignmentZoneId": ZONE_ID,
    "eta": None,
    "attempt": 1,
    **_TRACKING,
    "createdAt": CREATED_AT,
}
_ERP_MOVE = {**_ERP_SLOT, "deliverySlotTemplateId": OTHER_TEMPLATE_ID}
HOLD_ID = "f1c38903-bdeb-4210-94a6-8688df8a8f8e"

ERP_ORDER_CREATE = [
    request_example(ERP_ORDER_INPUT),
    request_example({**ERP_ORDER_INPUT, "holdId": HOLD_ID}, name="Booking a slot hold"),
    answer_example(201, ERP_ORDER),
]
ERP_ORDER_READ = [answer_example(200, ERP_ORDER)]
ERP_ORDER_SLOT = [
    request_example(_ERP_MOVE),
    answer_example(200, {"id": ERP_ORDER_ID, **_ERP_MOVE, **_AFTERNOON}),
]
ERP_ORDER_CANCEL = [
    request_example(_CANCEL),
    answer_example(200, {**ERP_ORDER, "status": "cancelled"}),
]
SLOT_HOLD = [
    request_example({**_ERP_SLOT, "dropoffLat": 52.5163, "dropoffLng": 13.3807, "ttlSeconds": 600}),
    answer_example(
        201, {"holdId": HOLD_ID, "expiresAt": "2026-11-26T07:06:08.101012Z", **_MORNING}
    ),
]

# ----- management API -----

_MANAGED_ORDER = {
    "id": PARTNER_ORDER_ID,
    **_PARTNER_REF,
    "family": "partner",
    "platform": "partner_a",
    "status": "pending",
    "currentMappingStatus": "created",
    **_PARTNER_PLACES,
    "weightKg": 2.5,
    "temperatureClass": "Chilled",
    "deliveryMethod": None,
    "serviceType": "standard",
    "codAmount": None,
    "expectedBarcode": None,
    "notes": _PARTNER_NOTES,
    "zoneId": ZONE_ID,
    "zoneName": ZONE_NAME,
    **_AFTERNOON,
    "driver": None,
    "trackingToken": TRACKING_TOKEN,
    "releasedAt": None,
    "createdAt": CREATED_AT,
    "updatedAt": CREATED_AT,
}
_CREATED_EVENT = {
    "fromStatus": None,
    "toStatus": "pending",
    "at": CREATED_AT,
    "actor": "api-key Partner A production (partner_a)",
    "reason": "",
}
#: the management order read, as other apps' examples build on it (couriers: a re-attempt)
MANAGED_ORDER = _MANAGED_ORDER
CREATED_EVENT = _CREATED_EVENT
_TRANSITION = {"status": "assigned", "driverId": DRIVER["id"], "reason": "Morning tour"}

ORDER_LIST = [
    answer_example(200, {"items": [_MANAGED_ORDER], "page": 1, "pageSize": 50, "total": 1})
]
ORDER_READ = [
    answer_example(
        200,
        {**_MANAGED_ORDER, "failureReason": None, "attempt": 1, "statusHistory": [_CREATED_EVENT]},
    )
]
ORDER_TRANSITION = [
    request_example(_TRANSITION),
    answer_example(
        200,
        {
            **_MANAGED_ORDER,
            "status": "assigned",
            "currentMappingStatus": "assigned",
            "driver": DRIVER,
            "updatedAt": CHANGED_AT,
            "failureReason": None,
            "attempt": 1,
            "statusHistory": [
                _CREATED_EVENT,
                {
                    "fromStatus": "pending",
                    "toStatus": "assigned",
                    "at": CHANGED_AT,
                    "actor": "dana@acme.example",
                    "reason": _TRANSITION["reason"],
                },
            ],
        },
    ),
]
ORDER_SIMULATION = [
    request_example({"outcome": "delivered", "stepSeconds": 5}),
    answer_example(
        202,
        {
            "orderId": PARTNER_ORDER_ID,
            **_PARTNER_REF,
            "status": "pending",
            "outcome": "delivered",
            "stepSeconds": 5,
            "steps": ["assigned", "picked_up", "in_transit", "delivered"],
            "driverId": DRIVER["id"],
        },
    ),
]
