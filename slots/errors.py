"""The contract's slot errors (contract "Errors"; contract "Errors", "Orders", "Slots and windows",
"Management API")."""

from delivery.errors import BadRequest, Conflict, NotFound, ValidationFailed


class SlotNotFound(NotFound):
    code = "slot_not_found"
    default_message = "Slot not found"


class NoSlotZoneForPoint(NotFound):
    """Availability by (lat, lng) where no enabled slot zone covers the point."""

    code = "no_zone_for_point"
    default_message = "No active zones found for the given coordinates"


class SlotDayMismatch(BadRequest):
    code = "slot_day_mismatch"
    default_message = "Delivery slot date does not match the slot's day of week"


class SlotCutoffPassed(BadRequest):
    code = "cutoff_passed"
    default_message = "Booking cutoff has passed for this slot"


class DropoffOutsideZone(BadRequest):
    code = "dropoff_outside_zone"
    default_message = "Dropoff location is outside the delivery zone"


class SlotZoneDisabled(BadRequest):
    """contract "Slots and windows": a slot of a disabled zone is not bookable."""

    code = "zone_disabled"
    default_message = "Delivery zone is disabled"


class SlotFull(BadRequest):
    code = "slot_full"
    default_message = "Delivery slot is full"


class ZoneNotForSlots(ValidationFailed):
    code = "zone_not_for_slots"

    def __init__(self):
        super().__init__(
            ["zoneId: slot templates can only be assigned to zones of purpose slot or both"]
        )


class SlotTemplateTaken(Conflict):
    code = "slot_template_taken"

    def __init__(self, *, day_of_week: int, start_time: str):
        super().__init__(
            f"A slot template of this zone already starts at {start_time} on day {day_of_week}"
        )


class SlotHoldNotFound(NotFound):
    """Unknown, malformed, released, swept, or taken by another API key."""

    code = "slot_hold_not_found"
    default_message = "Slot hold not found"


class SlotHoldMismatch(BadRequest):
    code = "slot_hold_mismatch"
    default_message = "Slot hold is for another delivery slot or date"


class SlotHoldExpired(Conflict):
    code = "slot_hold_expired"
    default_message = "Slot hold has expired"


class SlotHoldUsed(Conflict):
    code = "slot_hold_used"
    default_message = "Slot hold has already been used"
