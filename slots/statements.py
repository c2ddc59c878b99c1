"""The slots app's hand-written SQL, each statement named: the booking counter's one statement
(the no-overbooking rule, also used by the partner windows of `integrations/`) and the
availability calendar. Everything else is the ORM. Table and column names come from the models.
"""

from collections.abc import Iterable
from functools import cache

from django.db.models import Model

from slots.models import SlotDay, SlotHold, SlotTemplate
from zones.models import Zone, ZoneBlackout

# A place taken in one statement: the counter row is created with its first place, or the
# existing row is locked and counts `bookings` more (1 for a booking, 0 for a slot hold, whose
# place is its own row) while its bookings stay below `capacity`. Concurrent takers queue on the
# row lock, and PostgreSQL re-evaluates the DO UPDATE's WHERE on the row version the one before
# committed, so bookings never pass the capacity (the CHECK constraint backs booked <=
# capacity). `capacity` follows the caller's current setting. No row returned: full.
_COUNTER_TAKE = """
INSERT INTO {table} AS existing ({key_columns}{first_row_columns}, booked, capacity)
VALUES ({key_values}{first_row_values}, %(bookings)s, %(capacity)s)
ON CONFLICT ({key_columns}) DO UPDATE
    SET booked = existing.booked + EXCLUDED.booked, capacity = EXCLUDED.capacity
    WHERE existing.booked < EXCLUDED.capacity
RETURNING *
"""


@cache
def counter_take(model: type[Model], key: Iterable[str], first_row: Iterable[str] = ()) -> str:
    """`_COUNTER_TAKE` for `model`'s counter (fields `booked` and `capacity`): `key` names the
    fields of its unique key, `first_row` the fields written only when the row is created. Its
    parameters are named after those fields, with `bookings` and `capacity`."""

    def columns(names: Iterable[str]) -> str:
        return "".join(f", {model._meta.get_field(name).column}" for name in names)

    def values(names: Iterable[str]) -> str:
        return "".join(f", %({name})s" for name in names)

    return _COUNTER_TAKE.format(
        table=model._meta.db_table,
        key_columns=columns(key)[2:],
        key_values=values(key)[2:],
        first_row_columns=columns(first_row),
        first_row_values=values(first_row),
    )


def _live_holds(template: str, day: str, now: str) -> str:
    """SQL counting the live holds of the slot (`template`, `day`) at `now` (SQL expressions):
    unused and not expired (docs/slot-holds.md). Each takes a place of the slot."""
    return (
        f"(SELECT count(*) FROM {SlotHold._meta.db_table} h"  # noqa: S608 - names from the model
        f" WHERE h.template_id = {template} AND h.date = {day}"
        f" AND h.used_at IS NULL AND h.expires_at > {now})"
    )


# The live holds of one slot, read by the capacity rule right after the counter statement.
# Parameters: template, date, now.
LIVE_HOLD_COUNT = "SELECT " + _live_holds("%(template)s", "%(date)s", "%(now)s")

# The zone, its live templates and their taken places of the range in one statement, the
# hottest read of the service (the ORM's query building cost as much as the query itself): a
# correlated aggregate over the (template, date) counter rows, so its cost follows templates x
# days, never the number of orders. Taken places are the bookings plus the live holds. The
# zone's blackout dates of the range ride along.
# Parameters: first, last, now, first, last, organization id, zone id.
CALENDAR = f"""
SELECT z.id, z.name, z.purpose, z.enabled, z.timezone,
       t.id, t.day_of_week, t.start_time, t.duration_minutes, t.cutoff_minutes,
       t.vehicle_capacity, b.dates, b.counts,
       t.cutoff_day_before_at,
       (SELECT array_agg(o.date) FROM {ZoneBlackout._meta.db_table} o
         WHERE o.zone_id = z.id AND o.date BETWEEN %s AND %s) AS blackouts
  FROM {Zone._meta.db_table} z
  LEFT JOIN {SlotTemplate._meta.db_table} t ON t.zone_id = z.id AND t.deleted_at IS NULL
  LEFT JOIN LATERAL (
        SELECT array_agg(d.date) AS dates,
               array_agg(d.booked + {_live_holds("d.template_id", "d.date", "%s")}::int) AS counts
          FROM {SlotDay._meta.db_table} d
         WHERE d.template_id = t.id AND d.date BETWEEN %s AND %s
       ) b ON true
 WHERE z.organization_id = %s AND z.id = %s
 ORDER BY t.start_time, t.duration_minutes, t.id
"""  # noqa: S608 - table names come from the models, values are parameters
