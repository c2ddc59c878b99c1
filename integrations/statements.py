"""The integrations app's hand-written SQL, one named statement each (the rest is the ORM)."""

import functools

from integrations.models import Order

_ORDER = Order._meta.db_table


@functools.cache
def idempotency_claim(table: str, owner_column: str) -> str:
    """The claim of an Idempotency-Key (`services/idempotency.py`) in a table of keys (API keys'
    or drivers'): the new row's id, or no row when the key is taken."""
    return f"""
INSERT INTO {table}
    ({owner_column}, key, request_hash, status, claim_token, locked_at, created_at)
VALUES (%s, %s, %s, %s, %s, %s, %s)
ON CONFLICT ({owner_column}, key) DO NOTHING
RETURNING id
"""  # noqa: S608 - table and column names come from the models, every value is a parameter


@functools.cache
def orders_move(table: str) -> str:
    """Writes many orders' moves at once (`services/orders.orders_transition`): for each id, the
    columns a move sets (`TRANSITION_FIELDS`), given as one array per column, in one UPDATE (the
    ORM's `bulk_update` builds a CASE of every row for each column: seconds of CPU for a plan's
    thousand orders)."""
    return f"""
UPDATE {table} AS o
SET status = m.status, driver_id = m.driver_id, eta = m.eta, released_at = m.released_at,
    held_until = m.held_until, failure_reason = m.failure_reason, updated_at = m.updated_at
FROM unnest(
    %(ids)s::uuid[], %(statuses)s::text[], %(drivers)s::uuid[], %(etas)s::timestamptz[],
    %(released)s::timestamptz[], %(held)s::timestamptz[], %(failure_reasons)s::text[],
    %(updated)s::timestamptz[]
) AS m(id, status, driver_id, eta, released_at, held_until, failure_reason, updated_at)
WHERE o.id = m.id
"""  # noqa: S608 - the table name comes from the model, every value is a parameter


#: Orders' new ETAs without a status change (`services/orders.py` orders_eta_set): `ids` and
#: `etas` (arrays, one item per order), each order's `updated_at` set to `now`.
ORDERS_ETA_SET = f"""
UPDATE {_ORDER} AS o SET eta = moved.eta, updated_at = %(now)s
FROM unnest(%(ids)s::uuid[], %(etas)s::timestamptz[]) AS moved (id, eta)
WHERE o.id = moved.id
"""  # noqa: S608 - the table name comes from the model, values are parameters
