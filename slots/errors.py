"""The contract's slot errors (contract "Errors"; contract "Errors", "Orders", "Slots and windows",
"Management API")."""

from delivery.errors import BadRequest, Conflict, NotFound, ValidationFailed


class SlotNotFound(NotFound):
    default_message = "Slot not found"


class NoSlotZoneForPoint(NotFound):
    """Availability by (lat, lng) where no enabled slot zone covers the point."""

    default_message = "No active zones found for the given coordinates"


class SlotDayMismatch(BadRequest):
    default_message = "Delivery slot date does not match the slot's day of week"


class SlotCutoffPassed(BadRequest):
    default_message = "Booking cutoff has passed for this slot"


class DropoffOutsideZone(BadRequest):
    default_message = "Dropoff location is outside the delivery zone"


class SlotFull(BadRequest):
    default_message = "Delivery slot is full"


class ZoneNotForSlots(ValidationFailed):
    def __init__(self):
        super().__init__(
            ["zoneId: slot templates can only be assigned to zones of purpose slot or both"]
        )


class SlotTemplateTaken(Conflict):
    def __init__(self, *, day_of_week: int, start_time: str):
        super().__init__(
            f"A slot template of this zone already starts at {start_time} on day {day_of_week}"
        )


class SlotHoldNotFound(NotFound):
    """Unknown, malformed, released, swept, or taken by another API key."""

    default_message = "Slot hold not found"


class SlotHoldMismatch(BadRequest):
    default_message = "Slot hold is for another delivery slot or date"


class SlotHoldExpired(Conflict):
    default_message = "Slot hold has expired"


class SlotHoldUsed(Conflict):
    default_message = "Slot hold has already been used"
