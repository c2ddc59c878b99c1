"""The webhook outbox's one hand-written statement, the claim (as ORM queries: 2 ms more each)."""

from tenants.models import ApiKey
from webhooks.models import Delivery, Event

_DELIVERY = Delivery._meta.db_table
_EVENT = Event._meta.db_table
_API_KEY = ApiKey._meta.db_table

#: KEY_LOCK, the key's row lock (FOR NO KEY UPDATE: referencing rows still insert), then CLAIM in
#: the same transaction (a statement of its own: it sees every claim made before the lock): unless
#: it has `in_flight_limit` live tokens, it takes under `token` its share (`batch` at most) of the
#: key's due, unclaimed deliveries, led by `id` (none if not due) or the oldest waiting (queued_at
#: NULL). Pending is `next_attempt_at` set (a constraint), not `status`, so no plan reads other
#: keys' due rows (`webhook_delivery_due`). Rows: `delivery.*`, `event.*`, `key.*`, `payload`,
#: `waiting` (others wait); none claimed: one of NULLs but `own_due_at` (`id`'s, if it waits).
KEY_LOCK = f"SELECT FROM {_API_KEY} WHERE id = %(key)s FOR NO KEY UPDATE"
CLAIM = f"""
WITH waiting AS (
    SELECT w.id, w.next_attempt_at FROM {_DELIVERY} w
    WHERE w.api_key_id = %(key)s AND w.queued_at IS NULL AND w.next_attempt_at <= %(now)s
      AND (w.claimed_until IS NULL OR w.claimed_until < %(now)s)
    ORDER BY w.next_attempt_at, w.id LIMIT %(batch)s + 1
),
own AS (
    SELECT coalesce(%(id)s::uuid, (SELECT id FROM waiting ORDER BY next_attempt_at, id LIMIT 1))
    AS id
),
due AS (
    SELECT d.id, d.next_attempt_at, d.id = own.id AS own FROM {_DELIVERY} d, own
    WHERE d.api_key_id = %(key)s AND d.next_attempt_at <= %(now)s
      AND (d.claimed_until IS NULL OR d.claimed_until < %(now)s)
      AND (SELECT count(DISTINCT o.claim_token) FROM {_DELIVERY} o
           WHERE o.api_key_id = %(key)s AND o.next_attempt_at IS NOT NULL
             AND o.claimed_until > %(in_flight_after)s) < %(in_flight_limit)s
    ORDER BY d.id = own.id DESC, d.next_attempt_at, d.id
    LIMIT %(batch)s * %(in_flight_limit)s
),
batch AS (
    SELECT id FROM due WHERE EXISTS (SELECT FROM due WHERE own)
    ORDER BY own DESC, next_attempt_at, id
    LIMIT ceil((SELECT count(*) FROM due)::numeric / %(in_flight_limit)s)
),
claimed AS (
    UPDATE {_DELIVERY} d SET claim_token = %(token)s, claimed_until = %(until)s
    WHERE d.id IN (SELECT id FROM batch)
    RETURNING d.id, d.event_id, d.url, d.attempts, d.round_start_attempts, d.schedule_start,
              d.next_attempt_at
)
SELECT c.id AS "delivery.id", c.url AS "delivery.url", c.attempts AS "delivery.attempts",
       c.round_start_attempts AS "delivery.round_start_attempts",
       c.schedule_start AS "delivery.schedule_start",
       e.id AS "event.id", e.family AS "event.family", e.name AS "event.name",
       e.event_id AS "event.event_id", e.payload::text AS payload,
       e.created_at AS "event.created_at", e.is_open AS "event.is_open",
       k.id AS "key.id", k.is_active AS "key.is_active", k.encrypted_value AS "key.encrypted_value",
       k.encrypted_webhook_secret AS "key.encrypted_webhook_secret",
       k.encrypted_previous_webhook_secret AS "key.encrypted_previous_webhook_secret",
       k.previous_webhook_secret_expires_at AS "key.previous_webhook_secret_expires_at",
       EXISTS (SELECT FROM waiting WHERE id NOT IN (SELECT id FROM claimed)) AS waiting,
       o.next_attempt_at AS own_due_at
FROM own LEFT JOIN {_DELIVERY} o ON o.id = own.id AND o.status = 'pending'
         AND (o.claimed_until IS NULL OR o.claimed_until < %(now)s) LEFT JOIN claimed c ON true
LEFT JOIN {_EVENT} e ON e.id = c.event_id LEFT JOIN {_API_KEY} k ON k.id = %(key)s
ORDER BY c.id = own.id DESC, c.next_attempt_at, c.id
"""  # noqa: S608 - table names come from the models, values are parameters


def claim(cursor, **params) -> tuple[list[dict], object]:
    """KEY_LOCK, CLAIM (caller's transaction): its rows (own first) as {column: v}, own_due_at."""
    cursor.execute(KEY_LOCK, {"key": params["key"]})
    cursor.execute(CLAIM, params)
    names = [column.name for column in cursor.description]
    rows = [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]
    return [row for row in rows if row["delivery.id"]], rows[0]["own_due_at"]
