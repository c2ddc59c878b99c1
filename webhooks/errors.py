from delivery.errors import ValidationFailed


class WebhookUrlRefused(ValidationFailed):
    def __init__(self, reason: str):
        super().__init__([f"webhookUrl {reason}"])
