from delivery.errors import BadRequest, NotFound


class DeliveryNotFound(NotFound):
    default_message = "Delivery not found"


class WebhookUrlMissing(BadRequest):
    default_message = "API key has no webhook URL"
