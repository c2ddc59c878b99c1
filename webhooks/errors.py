from delivery.errors import NotFound


class DeliveryNotFound(NotFound):
    default_message = "Delivery not found"
