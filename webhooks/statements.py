"""The webhook outbox's one hand-written statement: the claim (docs/performance.md).

A delivery attempt runs for every webhook, and its claim is most of its database work: as ORM
queries (read the delivery with its event and key, count the destination's claims, update) it
cost the worker about 2 ms of CPU per delivery more than this one UPDATE ... RETURNING, which
also takes a batch of the destination's due deliveries at once (docs/webhooks.md "For
operators"). Table names come from the models; columns are read by name.
"""

from tenants.models import ApiKey
from webhooks.models import Delivery, Event

_DELIVERY = Delivery._meta.db_table
_EVENT = Event._meta.db_table
_API_KEY = ApiKey._meta.db_table

#: Takes the due attempt of delivery `id` (pending, due, unclaimed) under `token`, and with it
#: its share of its destination's (the key's) due backlog, oldest first: the due deliveries
#: divided among the destination's slots, `batch` at most. Nothing if the destination already
#: has `in_flight_limit` senders (distinct live tokens: a task sends its batch one after the
#: other). Returns a row per claimed delivery, its own first, with the fields of the delivery,
#: its event and its key (`delivery.<field>`, `event.<field>`, `key.<field>`), and whether
#: others of the destination wait for a slot. Run after locking the key's row (sending._claim):
#: the count then sees every claim made before this one.
CLAIM = f"""
WITH own AS (
    SELECT d.api_key_id FROM {_DELIVERY} d
    WHERE d.id = %(id)s AND d.status = 'pending' AND d.next_attempt_at <= %(now)s
      AND (d.claimed_until IS NULL OR d.claimed_until < %(now)s)
      AND (SELECT count(DISTINCT o.claim_token) FROM {_DELIVERY} o
           WHERE o.api_key_id = d.api_key_id AND o.status = 'pending'
             AND o.claimed_until > %(in_flight_after)s) < %(in_flight_limit)s
),
due AS (
    SELECT d.id, d.next_attempt_at FROM {_DELIVERY} d
    WHERE d.api_key_id = (SELECT api_key_id FROM own) AND d.status = 'pending'
      AND d.next_attempt_at <= %(now)s
      AND (d.claimed_until IS NULL OR d.claimed_until < %(now)s)
    ORDER BY d.id = %(id)s DESC, d.next_attempt_at, d.id
    LIMIT %(batch)s * %(in_flight_limit)s
),
batch AS (
    -- A share of the due backlog: the destination's other slots can take the rest at once.
    SELECT id FROM due
    ORDER BY id = %(id)s DESC, next_attempt_at, id
    LIMIT ceil((SELECT count(*) FROM due)::numeric / %(in_flight_limit)s)
),
claimed AS (
    UPDATE {_DELIVERY} d SET claim_token = %(token)s, claimed_until = %(until)s
    WHERE d.id IN (SELECT id FROM batch)
    RETURNING d.id, d.organization_id, d.event_id, d.api_key_id, d.url, d.attempts,
              d.round_start_attempts, d.schedule_start, d.next_attempt_at
)
SELECT c.id AS "delivery.id", c.organization_id AS "delivery.organization_id",
       c.url AS "delivery.url", c.attempts AS "delivery.attempts",
       c.round_start_attempts AS "delivery.round_start_attempts",
       c.schedule_start AS "delivery.schedule_start",
       e.id AS "event.id", e.organization_id AS "event.organization_id",
       e.family AS "event.family", e.name AS "event.name", e.event_id AS "event.event_id",
       e.payload AS "event.payload", e.created_at AS "event.created_at",
       e.is_open AS "event.is_open", k.id AS "key.id", k.is_active AS "key.is_active",
       k.encrypted_value AS "key.encrypted_value",
       k.encrypted_webhook_secret AS "key.encrypted_webhook_secret",
       k.encrypted_previous_webhook_secret AS "key.encrypted_previous_webhook_secret",
       k.previous_webhook_secret_expires_at AS "key.previous_webhook_secret_expires_at",
       EXISTS (SELECT 1 FROM {_DELIVERY} w
               WHERE w.api_key_id = c.api_key_id AND w.status = 'pending'
                 AND w.queued_at IS NULL AND w.next_attempt_at <= %(now)s
                 AND w.id NOT IN (SELECT id FROM claimed))
       AS waiting
FROM claimed c JOIN {_EVENT} e ON e.id = c.event_id JOIN {_API_KEY} k ON k.id = c.api_key_id
ORDER BY c.id = %(id)s DESC, c.next_attempt_at, c.id
"""  # noqa: S608 - table names come from the models, values are parameters


def claimed_rows(cursor) -> list[dict]:
    """CLAIM's rows as {column name: value}, its own delivery first (none if nothing was
    claimed)."""
    names = [c[0] for c in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def fields_of(row: dict, prefix: str) -> dict:
    """The columns `<prefix>.<field>` of a row as {field: value}."""
    return {name.removeprefix(prefix): v for name, v in row.items() if name.startswith(prefix)}
