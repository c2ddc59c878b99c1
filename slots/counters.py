"""Booking counters: one row per (thing, day) that counts the places taken and refuses to count
past its capacity (contract "Orders", "Slots and windows").

Two tables are such counters, the slots' `SlotDay` (template, date) and the partner windows'
`DeliveryWindowLoad` (zone, window start). Both take a place with the one statement built here,
and give it back with `place_give_back`. The module lives on the slots floor, the lowest that
both the slots and the integrations app can import (docs/architecture.md).

What stays with each caller, because it really differs: a slot also counts its live holds as
taken places (the caller adds them to the WHERE and to what the statement returns); a window
row records the window's end with its first booking and is read back whole to stand in for the
model; a slot hold takes its place by adding an expiry instead of a booking, so it has its own
statement (`slots/services.py`) and only runs through `place_take`.
"""

from collections.abc import Mapping
from typing import Any

from django.db import connection
from django.db.models import F, Model

from delivery import metrics
from delivery.queries import column, table

# One statement takes a place: the counter row is created with its first booking, or the
# existing row is locked and counts one more while its taken places stay below `capacity`.
# Concurrent bookings queue on the row lock, and PostgreSQL re-evaluates the DO UPDATE's WHERE
# on the row version the one before committed, so a counter is never overbooked (the CHECK
# constraint backs booked <= capacity). `capacity` follows the caller's current setting. No row
# returned: the counter is full. (A locking SELECT and an UPDATE, or three ORM statements, did
# this before.)
_TAKE_PLACE = """
INSERT INTO {table} AS existing ({columns}, {booked}, {capacity})
VALUES ({values}, 1, %(capacity)s)
ON CONFLICT ({key}) DO UPDATE
    SET {booked} = existing.{booked} + 1, {capacity} = EXCLUDED.{capacity}
    WHERE existing.{booked}{others_taken} < EXCLUDED.{capacity}
RETURNING {returning}
"""


def place_take_statement(
    *,
    model: type[Model],
    key: Mapping[str, str],
    first_row: Mapping[str, str] | None = None,
    others_taken: str = "",
    returning: str,
) -> str:
    """The statement taking one place on `model`'s counter (fields `booked` and `capacity`).

    `key` maps the fields of the counter's unique key to their SQL values (placeholders);
    `first_row` the other fields written only when the row is created; `others_taken` is SQL
    added to `existing.booked` for places taken besides bookings (`" + <count>"`); `returning`
    the SQL list the statement returns. Its parameters: those of the values, and `capacity`.
    """
    values = {**key, **(first_row or {})}
    return _TAKE_PLACE.format(
        table=table(model),
        columns=", ".join(column(model, name) for name in values),
        values=", ".join(values.values()),
        key=", ".join(column(model, name) for name in key),
        booked=column(model, "booked"),
        capacity=column(model, "capacity"),
        others_taken=others_taken,
        returning=returning,
    )


def place_take(
    *, statement: str, params: Mapping[str, Any], capacity: int, kind: str | None
) -> tuple | None:
    """Runs a place-taking `statement` in the caller's transaction: the row it returns, or None
    when the counter is full. A capacity of 0 takes nothing, so it is full without asking.
    `kind` is the booking kind the metrics count (`slot`, `window`); None counts nothing (a
    hold is not a booking)."""
    row = None
    if capacity > 0:
        with connection.cursor() as cursor:
            cursor.execute(statement, params)
            row = cursor.fetchone()
    if kind is not None:
        if row is None:
            metrics.booking_refused(kind)
        else:
            metrics.booking_made(kind)
    return row


def place_give_back(*, model: type[Model], counter_id: int) -> None:
    """One place less on the counter row `counter_id` (its booking was cancelled, failed or
    moved), in the caller's transaction; a counter never goes below 0."""
    model.objects.filter(pk=counter_id, booked__gt=0).update(booked=F("booked") - 1)
