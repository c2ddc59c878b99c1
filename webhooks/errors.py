from delivery.errors import NotFound, ValidationFailed


class WebhookUrlRefused(ValidationFailed):
    def __init__(self, reason: str):
        super().__init__([f"webhookUrl {reason}"])


class DeliveryNotFound(NotFound):
    default_message = "Delivery not found"
