"""Booking counters: one row per (thing, day) that counts the places taken and refuses to count
past its capacity (contract "Orders", "Slots and windows").

Two tables are such counters, the slots' `SlotDay` (template, date) and the partner windows'
`DeliveryWindowLoad` (zone, window start). Both take a place with the one statement of
`slots/statements.py` and give it back with `place_give_back`. The module lives on the slots
floor, the lowest that both the slots and the integrations app can import
(docs/architecture.md). What a slot adds (its live holds count as taken places) is in
`slots.services.bookings.slot_place_take`.
"""

from collections.abc import Mapping
from typing import Any, TypeVar

from django.db.models import F, Model

from slots import statements

M = TypeVar("M", bound=Model)


def place_take(
    *,
    model: type[M],
    key: Mapping[str, Any],
    first_row: Mapping[str, Any] | None = None,
    capacity: int,
    bookings: int = 1,
) -> M | None:
    """Takes a place on `model`'s counter row `key` (field names and values), created with
    `first_row`'s values when it is the first, in the caller's transaction: the row, as
    stored with this place counted and locked until the transaction ends, or None when its
    bookings fill `capacity` (0 takes nothing, so it is full without asking). `bookings` is
    what the place adds to the row's `booked` (1; 0 for a place that is counted elsewhere)."""
    if capacity <= 0:
        return None
    first_row = first_row or {}
    statement = statements.counter_take(model, tuple(key), tuple(first_row))
    params = {**key, **first_row, "bookings": bookings, "capacity": capacity}
    return next(iter(model.objects.raw(statement, params)), None)


def place_give_back(*, model: type[Model], **key: Any) -> None:
    """One place less on `model`'s counter row `key` (its booking was cancelled, failed or
    moved), in the caller's transaction; a counter never goes below 0."""
    model.objects.filter(booked__gt=0, **key).update(booked=F("booked") - 1)
