"""The integrations app's hand-written SQL, one named statement each (the rest is the ORM)."""

from integrations.models import IdempotencyKey

# The claim of an Idempotency-Key (`services/idempotency.py`): the new row's id, or no row when
# the key is taken.
IDEMPOTENCY_CLAIM = f"""
INSERT INTO {IdempotencyKey._meta.db_table}
    (api_key_id, key, request_hash, status, claim_token, locked_at, created_at)
VALUES (%s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (api_key_id, key) DO NOTHING
RETURNING id
"""  # noqa: S608 - the table name comes from the model, every value is a parameter
