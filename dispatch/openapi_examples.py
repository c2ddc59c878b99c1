"""Examples of the dispatch operations in the OpenAPI document (contract "Dispatch"), on the demo's
Berlin Mitte zone and the orders of the integrations examples."""

from delivery.schema import answer_example, request_example
from integrations import openapi_examples as order_examples
from tenants import openapi_examples as tenant_examples
from zones import openapi_examples as zone_examples

PLAN_ID = "5b0f3c52-8d2e-4c47-9a64-2f6f1c4e7d10"
ROUTE_ID = "c3a1e9f0-7b5d-4e2a-8f61-0d9b2a7c4e35"
SECOND_DRIVER_ID = "8d4c6b2a-1e3f-4a5b-9c7d-6e8f0a1b2c3d"
UNASSIGNED_ORDER_ID = "9a2b4c6d-8e0f-4a1b-8c3d-5e7f9a1b3c5d"
PLAN_DATE = "2026-11-27"

POLICY = {
    "serviceMinutes": 4,
    "travelSpeedKmh": 25.0,
    "detourFactor": 1.3,
    "autoDispatch": "off",
    "autoDispatchLeadMinutes": 60,
    "requireSignature": False,
    "requirePhoto": False,
    "maxAttempts": 3,
}
_POLICY_CHANGE = {"serviceMinutes": 6, "autoDispatch": "at_cutoff", "requireSignature": True}
POLICY_READ = [answer_example(200, POLICY)]
POLICY_UPDATE = [request_example(_POLICY_CHANGE), answer_example(200, {**POLICY, **_POLICY_CHANGE})]

_DRIVER_FIELDS = {
    "name": "Marta Nowak",
    "phone": "+48601234567",
    "vehicleType": "van",
    "capacity": None,
    "shiftStart": "07:00",
    "shiftEnd": "15:30",
    "zoneIds": [zone_examples.ZONE_ID],
}
DRIVER = {
    "id": tenant_examples.DRIVER_ID,
    **_DRIVER_FIELDS,
    "isActive": True,
    "effectiveCapacity": 10,
}
DRIVER_CREATE = [request_example(_DRIVER_FIELDS), answer_example(201, DRIVER)]
#: the list (one item shown) and the read
DRIVER_SHOWN = [answer_example(200, DRIVER)]
_DRIVER_CHANGE = {"capacity": 14, "shiftEnd": "18:00", "isActive": True}
DRIVER_UPDATE = [
    request_example(_DRIVER_CHANGE),
    answer_example(200, {**DRIVER, **_DRIVER_CHANGE, "effectiveCapacity": 14}),
]

_STOP = {
    "sequence": 1,
    "orderId": order_examples.ERP_ORDER_ID,
    "externalRef": "ERP-2026-0042",
    "eta": "2026-11-27T08:14:30Z",
    "windowStart": "2026-11-27T08:00:00Z",
    "windowEnd": "2026-11-27T11:00:00Z",
    "lat": zone_examples.ADDRESS_LAT,
    "lng": zone_examples.ADDRESS_LNG,
    "serviceSeconds": 240,
    "kind": "delivery",
}
_SECOND_STOP = {
    **_STOP,
    "sequence": 2,
    "orderId": order_examples.PARTNER_ORDER_ID,
    "externalRef": "SO-1001",
    "eta": "2026-11-27T08:31:05Z",
    "lat": 52.5219,
    "lng": 13.4132,
}
ROUTE = {
    "id": ROUTE_ID,
    "driver": {"id": tenant_examples.DRIVER_ID, "name": "Marta Nowak"},
    "vehicleType": "van",
    "startAt": "2026-11-27T08:02:11Z",
    "endAt": "2026-11-27T08:52:40Z",
    "travelSeconds": 2549,
    "distanceMeters": 17703,
    "stops": [_STOP, _SECOND_STOP],
}
PLAN_INPUT = {"date": PLAN_DATE, "zoneIds": [zone_examples.ZONE_ID]}
PLAN_PLANNING = {
    "id": PLAN_ID,
    "date": PLAN_DATE,
    "zoneIds": [zone_examples.ZONE_ID],
    "status": "planning",
    "routing": "haversine",
    "createdAt": "2026-11-26T16:02:09.412035Z",
    "solvedAt": None,
    "solverMs": None,
    "summary": {
        "routes": 0,
        "assigned": 0,
        "unassigned": 0,
        "travelSeconds": 0,
        "distanceMeters": 0,
    },
    "routes": [],
    "unassigned": [],
    "excluded": [],
    "error": None,
}
PLAN_READY = {
    **PLAN_PLANNING,
    "status": "ready",
    "solvedAt": "2026-11-26T16:02:14.530117Z",
    "solverMs": 5004,
    "summary": {
        "routes": 1,
        "assigned": 2,
        "unassigned": 1,
        "travelSeconds": 2549,
        "distanceMeters": 17703,
    },
    "routes": [ROUTE],
    "unassigned": [
        {"orderId": UNASSIGNED_ORDER_ID, "externalRef": "SO-1002", "reason": "time_window"}
    ],
    "excluded": [],
}
PLAN_CREATE = [
    request_example(PLAN_INPUT),
    answer_example(202, PLAN_PLANNING),
    answer_example(200, PLAN_PLANNING, name="The same request, still planning"),
]
PLAN_LIST = [answer_example(200, {"items": [PLAN_READY], "page": 1, "pageSize": 20, "total": 1})]
PLAN_READ = [answer_example(200, PLAN_READY)]

MOVE_INPUT = {"orderId": UNASSIGNED_ORDER_ID, "routeId": ROUTE_ID, "position": 2}
_MOVED_STOP = {
    **_SECOND_STOP,
    "orderId": UNASSIGNED_ORDER_ID,
    "externalRef": "SO-1002",
    "eta": "2026-11-27T08:29:40Z",
    "windowEnd": "2026-11-27T08:20:00Z",
}
MOVE = [
    request_example(MOVE_INPUT),
    answer_example(
        200,
        {
            **ROUTE,
            "endAt": "2026-11-27T09:10:02Z",
            "travelSeconds": 3091,
            "distanceMeters": 21466,
            "stops": [
                _STOP,
                _MOVED_STOP,
                {**_SECOND_STOP, "sequence": 3, "eta": "2026-11-27T08:47:55Z"},
            ],
            "warnings": [
                {
                    "reason": "time_window",
                    "orderId": UNASSIGNED_ORDER_ID,
                    "externalRef": "SO-1002",
                    "message": "Order SO-1002 is reached 10 minutes after its window closes",
                }
            ],
        },
    ),
]
