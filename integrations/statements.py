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


#: Orders' new ETAs without a status change (`services/orders.py` orders_eta_set): `ids` and
#: `etas` (arrays, one item per order), each order's `updated_at` set to `now`.
ORDERS_ETA_SET = f"""
UPDATE {_ORDER} AS o SET eta = moved.eta, updated_at = %(now)s
FROM unnest(%(ids)s::uuid[], %(etas)s::timestamptz[]) AS moved (id, eta)
WHERE o.id = moved.id
"""  # noqa: S608 - the table name comes from the model, values are parameters
