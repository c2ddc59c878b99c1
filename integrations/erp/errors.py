"""The ERP family's own errors (decisions §5)."""

from delivery.errors import ValidationFailed


class DropoffRequired(ValidationFailed):
    def __init__(self):
        super().__init__(["dropoffLat and dropoffLng required: the order has no dropoff location"])
