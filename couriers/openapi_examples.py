"""Examples of the courier API and the proof operations in the OpenAPI document
(docs/contract.md "Couriers"), on the management examples' organization and driver
(tenants/openapi_examples.py) and the partner order of integrations/openapi_examples.py."""

from delivery.schema import answer_example, request_example
from integrations.openapi_examples import PARTNER_ORDER_ID
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
PHOTO_UPLOAD = [
    request_example({"photo": "(the JPEG or PNG file, at most 5 MB)"}),
    answer_example(201, {"photoId": PHOTO_ID}),
]
