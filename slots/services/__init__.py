"""Writes on slots, by sub-domain: `templates` (the slot policy, templates and seeding),
`bookings` (the capacity rule, and booking, moving and releasing an order's slot), `holds`
(slot holds at checkout). Callers use them from here, as `slots.services.<name>`."""

from slots.services.bookings import (
    Place,
    SlotBooked,
    slot_book,
    slot_booking_check,
    slot_booking_move,
    slot_booking_release,
    slot_place_take,
)
from slots.services.holds import (
    HOLD_TTL_DEFAULT_SECONDS,
    HOLD_TTL_MAX_SECONDS,
    slot_hold_book,
    slot_hold_claim,
    slot_hold_create,
    slot_hold_release,
    slot_holds_expired_delete,
)
from slots.services.templates import (
    SEED_DAYS_OF_WEEK,
    SEED_FIRST_START,
    SEED_LAST_END_MINUTES,
    slot_duration_derive,
    slot_policy_get_or_create,
    slot_policy_update,
    slot_template_create,
    slot_template_delete,
    slot_template_update,
    slot_templates_seed,
    slot_zone_changed,
)

__all__ = [
    "HOLD_TTL_DEFAULT_SECONDS",
    "HOLD_TTL_MAX_SECONDS",
    "SEED_DAYS_OF_WEEK",
    "SEED_FIRST_START",
    "SEED_LAST_END_MINUTES",
    "Place",
    "SlotBooked",
    "slot_book",
    "slot_booking_check",
    "slot_booking_move",
    "slot_booking_release",
    "slot_duration_derive",
    "slot_hold_book",
    "slot_hold_claim",
    "slot_hold_create",
    "slot_hold_release",
    "slot_holds_expired_delete",
    "slot_place_take",
    "slot_policy_get_or_create",
    "slot_policy_update",
    "slot_template_create",
    "slot_template_delete",
    "slot_template_update",
    "slot_templates_seed",
    "slot_zone_changed",
]
