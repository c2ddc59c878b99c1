"""Examples of committing a plan and of the management transition served by dispatch, in the
OpenAPI document (contract "Dispatch")."""

from delivery.schema import answer_example
from dispatch import openapi_examples as plan_examples
from integrations import openapi_examples as order_examples

SKIPPED_ORDER_ID = "2c4e6a8b-0d1f-4b3c-9e5a-7c9e1b3d5f70"

PLAN_COMMITTED = {
    **plan_examples.PLAN_READY,
    "status": "committed",
}
COMMIT = [
    answer_example(
        200,
        {
            "plan": PLAN_COMMITTED,
            "assigned": 2,
            "skipped": [{"orderId": SKIPPED_ORDER_ID, "reason": "cancelled"}],
        },
    )
]
ORDER_TRANSITION = order_examples.ORDER_TRANSITION
