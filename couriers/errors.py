"""The couriers' errors (contract "Couriers"); docs/contract.md "Errors" lists every code."""

from delivery.errors import Conflict, Forbidden, NotFound, ValidationFailed


class PhotoInvalid(ValidationFailed):
    """Anything but a JPEG or PNG image of at most 5 MB that decodes whole."""

    code = "photo_invalid"


class PhotoNotFound(ValidationFailed):
    """A `photoIds` entry that names no photo of this driver."""

    code = "photo_not_found"

    def __init__(self, photo_id: str):
        super().__init__([f"photoIds has an unknown photo: {photo_id}"])


class SignatureInvalid(ValidationFailed):
    code = "signature_invalid"

    def __init__(self):
        super().__init__(["proof.signature must be a PNG data URL of at most 200 KB"])


class SignatureRequired(ValidationFailed):
    code = "signature_required"

    def __init__(self):
        super().__init__(["Signature is required"])


class PhotoRequired(ValidationFailed):
    code = "photo_required"

    def __init__(self):
        super().__init__(["Photo is required"])


class BarcodeMismatch(ValidationFailed):
    code = "barcode_mismatch"

    def __init__(self):
        super().__init__(["Barcode does not match"])


class CashCollectedRequired(ValidationFailed):
    code = "cash_collected_required"

    def __init__(self):
        super().__init__(["Cash collected is required"])


class EventTimeOutOfRange(ValidationFailed):
    """`at` more than 24 hours late or more than 2 minutes ahead of the service's clock."""

    code = "event_time_out_of_range"


class ProofNotFound(NotFound):
    """The order has no outcome yet (neither delivered nor failed)."""

    code = "proof_not_found"
    default_message = "Proof not found"


class ProofUrlExpired(Forbidden):
    """A proof file's signed URL older than 10 minutes: read the proof again for fresh URLs."""

    code = "proof_url_expired"
    default_message = "Proof URL has expired"


class NoAttemptsLeft(Conflict):
    """A re-attempt of an order already at the dispatch policy's `maxAttempts`."""

    code = "no_attempts_left"
    default_message = "Order has no attempts left"


class ReattemptBookingMismatch(ValidationFailed):
    """A re-attempt naming the other family's booking: an ERP order is booked on a slot, a
    partner order on a window."""

    code = "reattempt_booking_mismatch"
