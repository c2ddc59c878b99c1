"""The example of the public tracking answer in the OpenAPI document (docs/contract.md
"Tracking"): an order on its way, with the driver's first name only."""

from delivery.schema import answer_example

TRACKING = [
    answer_example(
        200,
        {
            "trackingToken": "e_hxT1h2xxl_cvri2-fyLwGkrmTsceL3",
            "status": "in_transit",
            "deliveryWindowStart": "2026-03-03T08:00:00Z",
            "deliveryWindowEnd": "2026-03-03T10:00:00Z",
            "driver": {"name": "Marta"},
            "events": [
                {"status": "pending", "at": "2026-03-02T11:02:13Z"},
                {"status": "assigned", "at": "2026-03-03T06:40:02Z"},
                {"status": "picked_up", "at": "2026-03-03T07:15:48Z"},
                {"status": "in_transit", "at": "2026-03-03T07:16:05Z"},
            ],
            "updatedAt": "2026-03-03T07:16:05Z",
            "eta": "2026-03-03T08:25:00Z",
            "etaWindow": {"from": "2026-03-03T08:15:00Z", "to": "2026-03-03T08:35:00Z"},
            "stopsBefore": 2,
            "deliveredAt": None,
        },
    )
]
