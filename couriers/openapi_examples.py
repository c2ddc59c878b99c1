"""Examples of the courier API and the proof operations in the OpenAPI document
(docs/contract.md "Couriers"), on the management examples' organization and driver
(tenants/openapi_examples.py) and the partner order of integrations/openapi_examples.py."""

from delivery.schema import answer_example, request_example
from integrations.openapi_examples import (
    CHANGED_AT,
    CREATED_EVENT,
    MANAGED_ORDER,
    PARTNER_ORDER_ID,
)
from tenants.openapi_examples import DRIVER_ID

ISSUED_AT = "2026-11-26T06:30:00Z"
DRIVER_TOKEN = "drv_Vx3kP0q9YbT2mA7sLwE4rN8cJ1hGfD6uZyQoXiKp5tM"

ACCESS_TOKEN_ISSUE = [answer_example(201, {"token": DRIVER_TOKEN, "createdAt": ISSUED_AT})]

ROUTE_ID = "6d8b1f8e-3c0f-4b8e-9d55-0f2a7c1e9b42"
ROUTE_DATE = "2026-11-26"
ROUTE_STOP = {
    "sequence": 1,
    "orderId": PARTNER_ORDER_ID,
    "externalRef": "SO-1001",
    "status": "assigned",
    "eta": "2026-11-26T10:12:00+01:00",
    "windowStart": "2026-11-26T10:00:00+01:00",
    "windowEnd": "2026-11-26T12:00:00+01:00",
    "kind": "delivery",
    "address": "Alexanderplatz 1, 10178 Berlin",
    "lat": 52.5219,
    "lng": 13.4132,
    "recipientName": "Ada Lovelace",
    "recipientPhone": "+491701234567",
    "notes": "Temperature: Chilled; Weight: 2.5 kg; Zone: Berlin Mitte; Leave at the door",
    "packageSize": "small",
    "codAmount": 24.9,
    "expectedBarcode": "4006381333931",
    "serviceType": "standard",
}
ROUTE = [
    answer_example(
        200,
        {
            "date": ROUTE_DATE,
            "driver": {"id": DRIVER_ID, "name": "Marta Nowak"},
            "routeId": ROUTE_ID,
            "stops": [ROUTE_STOP],
        },
    )
]

PHOTO_ID = "b0a4c2de-5f8e-4d71-9a3b-2e6c1f0d7a95"
PHOTO_UPLOAD_REQUEST = [request_example({"photo": "(the JPEG or PNG file, at most 5 MB)"})]
PHOTO_UPLOAD = [answer_example(201, {"photoId": PHOTO_ID})]

#: a 1x1 PNG; a real signature pad sends a few kilobytes
SIGNATURE_DATA_URL = (
    "data:image/png;base64,"
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="
)
_DOOR = {"lat": 52.52191, "lng": 13.41318, "accuracyM": 6.5}
EVENT_DELIVERED_INPUT = {
    "type": "delivered",
    "at": "2026-11-26T09:14:05Z",
    "location": _DOOR,
    "proof": {
        "recipientName": "Ada Lovelace",
        "barcode": "4006381333931",
        "signature": SIGNATURE_DATA_URL,
        "photoIds": [PHOTO_ID],
    },
    "cashCollected": 24.9,
    "note": "Handed to the recipient",
}
EVENT_FAILED_INPUT = {
    "type": "failed",
    "at": "2026-11-26T09:14:05Z",
    "location": _DOOR,
    "failureReason": "recipient_absent",
    "note": "Nobody at home, neighbours away too",
}
STOP_EVENT = [
    request_example(EVENT_DELIVERED_INPUT, name="Delivered with proof"),
    request_example(EVENT_FAILED_INPUT, name="Failed"),
    request_example({"type": "picked_up"}, name="Picked up now"),
    answer_example(200, {**ROUTE_STOP, "status": "delivered"}),
]

SIGNED = "https://delivery.example.com/api/proof-files/eyJ...:1tQ2xY:kX3b"
PROOF_DELIVERED = {
    "status": "delivered",
    "at": "2026-11-26T09:14:05Z",
    "location": _DOOR,
    "recipientName": "Ada Lovelace",
    "barcode": "4006381333931",
    "cashCollected": 24.9,
    "failureReason": None,
    "note": "Handed to the recipient",
    "signatureUrl": f"{SIGNED}1",
    "photoUrls": [f"{SIGNED}2"],
}
PROOF_READ = [answer_example(200, PROOF_DELIVERED)]

LOCATIONS = [
    request_example(
        {
            "points": [
                {"lat": 52.5232, "lng": 13.4114, "at": "2026-11-26T09:05:00Z", "accuracyM": 8},
                {
                    "lat": 52.5226,
                    "lng": 13.4121,
                    "at": "2026-11-26T09:05:10Z",
                    "accuracyM": 6,
                    "speedMps": 4.2,
                    "heading": 135,
                },
            ]
        }
    ),
    answer_example(202, {"accepted": 2, "etasUpdated": 3}),
]

_NEXT_WINDOW = "2026-11-30T12:00:00+01:00"
_FAILED_AT = "2026-11-26T07:12:40.118200Z"
ORDER_REATTEMPT = [
    request_example({"deliveryWindowStart": _NEXT_WINDOW}, name="A partner order: a window"),
    request_example(
        {"deliverySlotTemplateId": "st_9f2c41d07e", "deliverySlotDate": "2026-11-30"},
        name="An ERP order: a slot",
    ),
    answer_example(
        200,
        {
            **MANAGED_ORDER,
            "deliveryWindowStart": _NEXT_WINDOW,
            "deliveryWindowEnd": "2026-11-30T16:00:00+01:00",
            "updatedAt": CHANGED_AT,
            "failureReason": None,
            "attempt": 2,
            "statusHistory": [
                CREATED_EVENT,
                {
                    "fromStatus": "in_transit",
                    "toStatus": "failed",
                    "at": _FAILED_AT,
                    "actor": "driver Sam Carter",
                    "reason": "recipient_absent",
                },
                {
                    "fromStatus": "failed",
                    "toStatus": "pending",
                    "at": CHANGED_AT,
                    "actor": "dana@acme.example",
                    "reason": "Re-attempt 2",
                },
            ],
        },
    ),
]
