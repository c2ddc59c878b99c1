from delivery.errors import BadRequest, NotFound, ValidationFailed


class WebhookUrlRefused(ValidationFailed):
    def __init__(self, reason: str):
        super().__init__([f"webhookUrl {reason}"])


class DeliveryNotFound(NotFound):
    default_message = "Delivery not found"


class WebhookUrlMissing(BadRequest):
    default_message = "API key has no webhook URL"
