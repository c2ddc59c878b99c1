from delivery.errors import BadRequest, NotFound, ValidationFailed


class DeliveryNotFound(NotFound):
    code = "webhook_delivery_not_found"
    default_message = "Delivery not found"


class WebhookUrlMissing(BadRequest):
    code = "webhook_url_missing"
    default_message = "API key has no webhook URL"


class RecoverSinceBeyondRetention(ValidationFailed):
    """`recover` with a `since` older than the failed deliveries' retention: those before it
    were deleted (docs/operations.md "Retention"), so the interval cannot be recovered whole."""

    code = "recover_since_beyond_retention"

    def __init__(self, days: int):
        super().__init__(
            [f"since must not be more than {days} days ago: failed deliveries are kept {days} days"]
        )
