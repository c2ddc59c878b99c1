"""The contract's order, window and idempotency errors (contract "Errors", contract "Errors",
"Orders")."""

from delivery.errors import BadRequest, Conflict, NotFound, UnprocessableEntity, ValidationFailed


class OrderNotFound(NotFound):
    code = "order_not_found"
    default_message = "Order not found"


class DuplicateExternalRef(Conflict):
    code = "duplicate_external_ref"

    def __init__(self, external_ref: str):
        super().__init__(f"Order with externalRef {external_ref} already exists")


class TransitionNotAllowed(Conflict):
    """contract "Errors": `Order <ref> cannot be <verb> in status <status>`."""

    code = "transition_not_allowed"

    def __init__(self, *, external_ref: str, verb: str, status: str):
        super().__init__(f"Order {external_ref} cannot be {verb} in status {status}")


class DriverRequired(ValidationFailed):
    code = "driver_required"

    def __init__(self):
        super().__init__(["driverId is required for status assigned"])


class FailureReasonRequired(ValidationFailed):
    """contract "Couriers": every `failed`, a courier's or an admin's, names why."""

    code = "failure_reason_required"

    def __init__(self):
        super().__init__(["failureReason is required for status failed"])


class DriverInactive(ValidationFailed):
    code = "driver_inactive"

    def __init__(self):
        super().__init__(["driverId must name an active driver"])


class NoZoneCoversDropoff(BadRequest):
    code = "no_zone_for_dropoff"
    default_message = "No delivery zone covers the dropoff location"


class NoDeliveryWindow(BadRequest):
    code = "no_delivery_window"

    def __init__(self, start: str):
        super().__init__(f"No delivery window at {start}")


class DeliveryWindowFull(BadRequest):
    code = "window_full"
    default_message = "Delivery window is full"


class GeocodeFailed(ValidationFailed):
    code = "geocode_failed"

    def __init__(self, fields: list[str]):
        super().__init__([f"Could not geocode {field}" for field in fields])


class IdempotencyKeyReused(UnprocessableEntity):
    code = "idempotency_key_reused"
    default_message = "Idempotency-Key was already used with a different request body"


class IdempotencyKeyInProgress(Conflict):
    code = "idempotency_key_in_progress"
    default_message = "A request with this Idempotency-Key is in progress"


class IdempotencyKeyInvalid(ValidationFailed):
    code = "idempotency_key_invalid"

    def __init__(self):
        super().__init__(["Idempotency-Key must be 1 to 255 printable ASCII characters"])


class OrderNotFromTestKey(Conflict):
    """Only orders created with a test key may be simulated (docs/webhooks.md "Sandbox")."""

    code = "order_not_from_test_key"

    def __init__(self, external_ref: str):
        super().__init__(f"Order {external_ref} was not created with a test key")


class SimulationInProgress(Conflict):
    """One simulation per order at a time (docs/webhooks.md "Sandbox")."""

    code = "simulation_in_progress"

    def __init__(self, external_ref: str):
        super().__init__(f"Order {external_ref} is already being simulated")
