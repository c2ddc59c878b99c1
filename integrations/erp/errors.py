"""The ERP family's own errors (contract "Orders")."""

from delivery.errors import ValidationFailed


class DropoffRequired(ValidationFailed):
    code = "dropoff_required"

    def __init__(self):
        super().__init__(["dropoffLat and dropoffLng required: the order has no dropoff location"])
