"""The integrations app's hand-written SQL, one named statement each (the rest is the ORM)."""

import functools


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
