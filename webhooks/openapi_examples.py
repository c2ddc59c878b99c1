"""Examples of the webhook-delivery management operations in the OpenAPI document
(docs/contract.md "Webhooks", "Management API"), for the API key of the management examples."""

from delivery.schema import answer_example, request_example
from tenants import openapi_examples as tenant_examples

DELIVERY_ID = "e03f066b-be89-4b83-a966-bc5da456496a"

#: a delivery whose five attempts failed: what a list filtered on `failed` shows
FAILED_DELIVERY = {
    "id": DELIVERY_ID,
    "eventId": "evt_56a5d8ad8a514714894dde70c2b52251",
    "event": "order.delivered",
    "url": tenant_examples.WEBHOOK_URL,
    "status": "failed",
    "attempts": 5,
    "lastStatusCode": 503,
    "lastError": "HTTP 503",
    "nextAttemptAt": None,
    "deliveredAt": None,
    "createdAt": "2026-03-02T11:00:00Z",
}

DELIVERY_LIST = [
    answer_example(200, {"items": [FAILED_DELIVERY], "page": 1, "pageSize": 50, "total": 1})
]
DELIVERY_REDELIVER = [
    answer_example(
        202,
        {**FAILED_DELIVERY, "status": "pending", "nextAttemptAt": "2026-03-02T14:05:00Z"},
    )
]
DELIVERIES_RECOVER = [
    request_example(
        {
            "since": "2026-03-02T00:00:00Z",
            "until": "2026-03-03T00:00:00Z",
            "keyId": tenant_examples.API_KEY_ID,
        }
    ),
    answer_example(202, {"queued": 12}),
]
TEST_WEBHOOK = [
    answer_example(
        200,
        {"delivered": True, "statusCode": 200, "latencyMs": 184, "error": None},
        name="The endpoint answered 2xx",
    ),
    answer_example(
        200,
        {"delivered": False, "statusCode": 401, "latencyMs": 97, "error": "HTTP 401"},
        name="The endpoint refused the signature",
    ),
    answer_example(
        200,
        {
            "delivered": False,
            "statusCode": None,
            "latencyMs": 2003,
            "error": (
                "Timed out after 2 s waiting for the receiver; the attempt goes on and is "
                "recorded in the deliveries"
            ),
        },
        name="The endpoint did not answer within 2 s",
    ),
]
