from delivery.errors import BadRequest, NotFound


class DeliveryNotFound(NotFound):
    code = "webhook_delivery_not_found"
    default_message = "Delivery not found"


class WebhookUrlMissing(BadRequest):
    code = "webhook_url_missing"
    default_message = "API key has no webhook URL"
