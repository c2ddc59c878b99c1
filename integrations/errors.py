"""The contract's order, window and idempotency errors (contract "Errors", contract "Errors",
"Orders")."""

from delivery.errors import BadRequest, Conflict, NotFound, UnprocessableEntity, ValidationFailed


class OrderNotFound(NotFound):
    default_message = "Order not found"


class DuplicateExternalRef(Conflict):
    def __init__(self, external_ref: str):
        super().__init__(f"Order with externalRef {external_ref} already exists")


class TransitionNotAllowed(Conflict):
    """contract "Errors": `Order <ref> cannot be <verb> in status <status>`."""

    def __init__(self, *, external_ref: str, verb: str, status: str):
        super().__init__(f"Order {external_ref} cannot be {verb} in status {status}")


class DriverRequired(ValidationFailed):
    def __init__(self):
        super().__init__(["driverId is required for status assigned"])


class DriverInactive(ValidationFailed):
    def __init__(self):
        super().__init__(["driverId must name an active driver"])


class NoZoneCoversDropoff(BadRequest):
    default_message = "No delivery zone covers the dropoff location"


class NoDeliveryWindow(BadRequest):
    def __init__(self, start: str):
        super().__init__(f"No delivery window at {start}")


class DeliveryWindowFull(BadRequest):
    default_message = "Delivery window is full"


class GeocodeFailed(ValidationFailed):
    def __init__(self, fields: list[str]):
        super().__init__([f"Could not geocode {field}" for field in fields])


class IdempotencyKeyReused(UnprocessableEntity):
    default_message = "Idempotency-Key was already used with a different request body"


class IdempotencyKeyInProgress(Conflict):
    default_message = "A request with this Idempotency-Key is in progress"


class IdempotencyKeyInvalid(ValidationFailed):
    def __init__(self):
        super().__init__(["Idempotency-Key must be 1 to 255 printable ASCII characters"])


class OrderNotFromTestKey(Conflict):
    """Only orders created with a test key may be simulated (docs/webhooks.md "Sandbox")."""

    def __init__(self, external_ref: str):
        super().__init__(f"Order {external_ref} was not created with a test key")


class SimulationInProgress(Conflict):
    """One simulation per order at a time (docs/webhooks.md "Sandbox")."""

    code = "simulation_in_progress"

    def __init__(self, external_ref: str):
        super().__init__(f"Order {external_ref} is already being simulated")
