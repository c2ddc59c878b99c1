"""The outbox's hot statements, one SQL round trip each.

`event_emit` runs inside other apps' transactions (an order create, a slot booking under its
row lock) and a delivery attempt runs for every webhook: there, the ORM's SELECT-then-INSERT,
savepoints and UPDATE-then-SELECT cost two or three times the round trips (docs/performance.md).
Each statement here does one step in one round trip; tests/webhooks exercise every one of them.
"""

import json
import uuid
from datetime import datetime

from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection

from tenants.models import ApiKey
from webhooks import catalog
from webhooks.models import Delivery, DeliveryAttempt, DeliveryStatus, Event

_payload_field = Event._meta.get_field("payload")

# Table names as the models declare them.
_EVENT = Event._meta.db_table
_DELIVERY = Delivery._meta.db_table
_ATTEMPT = DeliveryAttempt._meta.db_table
_API_KEY = ApiKey._meta.db_table


def _one(sql: str, params: dict) -> tuple | None:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


def payload_json(payload: dict) -> str:
    """JSON text of a payload; UUIDs, dates and decimals become strings as in API responses."""
    return json.dumps(payload, cls=DjangoJSONEncoder)


def payload_from_db(value) -> dict:
    return _payload_field.from_db_value(value, None, connection)


#: The event and, when its destination has a webhook URL that takes this event, its delivery:
#: one round trip. The delivery goes to the URL of the organization's active key of `platform`,
#: due now and counted as queued; there is none when the key has no URL or its
#: `webhook_events` does not list the event (contract "Webhooks"), and for an opt-in event
#: (`order.eta_updated`) unless it lists it by name: NULL (every event) does not take those.
_EVENT_INSERT = f"""
WITH event AS (
    INSERT INTO {_EVENT}
        (id, organization_id, family, name, event_id, payload, coalescible, is_open,
         created_at, updated_at)
    VALUES (%(id)s, %(organization_id)s, %(family)s, %(name)s, %(event_id)s, %(payload)s::jsonb,
            %(coalescible)s, %(coalescible)s, %(now)s, %(now)s)
    ON CONFLICT (organization_id, event_id) WHERE {{arbiter}} DO NOTHING
    RETURNING id
),
delivery AS (
    INSERT INTO {_DELIVERY}
        (id, organization_id, event_id, api_key_id, url, status, attempts, round_start_attempts,
         schedule_start, next_attempt_at, queued_at, last_error, created_at)
    SELECT %(delivery_id)s, k.organization_id, e.id, k.id, k.webhook_url, %(pending)s, 0, 0,
           %(now)s, %(now)s, %(now)s, '', %(now)s
    FROM event e
    JOIN {_API_KEY} k ON k.organization_id = %(organization_id)s AND k.platform = %(platform)s
    WHERE k.is_active AND k.webhook_url <> ''
      AND ((k.webhook_events IS NULL AND NOT %(opt_in)s) OR %(name)s = ANY(k.webhook_events))
    LIMIT 1
    RETURNING id
)
SELECT e.id, (SELECT id FROM delivery) FROM event e
"""  # noqa: S608 - table names come from the models, values are parameters
_EVENT_INSERT_ONCE = _EVENT_INSERT.format(arbiter="coalescible = false")
_EVENT_INSERT_OPEN = _EVENT_INSERT.format(arbiter="is_open")


def event_insert(
    *,
    event_uuid: uuid.UUID,
    organization_id,
    family: str,
    name: str,
    event_id: str,
    payload: str,
    coalescible: bool,
    now: datetime,
    platform: str | None,
) -> tuple[bool, uuid.UUID | None]:
    """INSERT unless the id is taken (for ever, or while open when coalescible), with the
    delivery to the webhook URL of the organization's active key of `platform` (none when
    `platform` is None); (whether the event is new, the new delivery's id or None)."""
    row = _one(
        _EVENT_INSERT_OPEN if coalescible else _EVENT_INSERT_ONCE,
        {
            "id": event_uuid,
            "organization_id": organization_id,
            "family": family,
            "name": name,
            "event_id": event_id,
            "payload": payload,
            "coalescible": coalescible,
            "now": now,
            "delivery_id": uuid.uuid4(),
            "pending": DeliveryStatus.PENDING,
            "platform": platform,
            "opt_in": name in catalog.OPT_IN_EVENTS,
        },
    )
    if row is None:
        return False, None
    return True, row[1]


_OPEN_EVENT_REPLACE = f"""
UPDATE {_EVENT} SET payload = %(payload)s::jsonb, updated_at = %(now)s
WHERE organization_id = %(organization_id)s AND event_id = %(event_id)s AND is_open
RETURNING id, family, name, created_at
"""  # noqa: S608 - table names come from the models, values are parameters


def open_event_replace(
    *, organization_id, event_id: str, payload: str, now: datetime
) -> Event | None:
    """The unsent event with this id takes `payload`; None when there is none (contract "Webhooks").

    The row lock this takes is what a sender's claim waits for (sending._close), so the sender
    sends this payload, or closed the event first and this finds nothing.
    """
    row = _one(
        _OPEN_EVENT_REPLACE,
        {"organization_id": organization_id, "event_id": event_id, "payload": payload, "now": now},
    )
    if row is None:
        return None
    pk, family, name, created_at = row
    return Event(
        id=pk,
        organization_id=organization_id,
        family=family,
        name=name,
        event_id=event_id,
        payload=json.loads(payload),
        coalescible=True,
        is_open=True,
        created_at=created_at,
        updated_at=now,
    )


def named_rows(cursor) -> list[dict]:
    """The cursor's rows as {column name: value}."""
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


#: Serializes claims per destination until the claiming transaction ends, so that CLAIM's count
#: sees every claim made before it: without it, simultaneous claims each see the destination
#: under its limit and all go through (a burst to a hanging receiver takes every thread). The
#: destinations of a batch are locked in one order, so two batches never wait for each other.
LOCK_DESTINATIONS = f"""
SELECT pg_advisory_xact_lock(h.key)
FROM (
    SELECT DISTINCT hashtextextended('webhook-destination:' || api_key_id::text, 0) AS key
    FROM {_DELIVERY} WHERE id = ANY(%(ids)s::uuid[])
    ORDER BY 1
) h
"""  # noqa: S608 - table names come from the models, values are parameters

#: The deliveries a wake-up sends (`webhooks.deliver_due`): pending, due, unclaimed, and not
#: parked (a parked one waits for a slot of its destination to be handed to it, RECORD), oldest
#: first, with their destination. CLAIM then applies the in-flight limit and the batch size.
DUE = f"""
SELECT id, api_key_id, next_attempt_at FROM {_DELIVERY}
WHERE status = 'pending' AND next_attempt_at <= %(now)s AND queued_at IS NOT NULL
  AND (claimed_until IS NULL OR claimed_until < %(now)s)
  AND (%(after_at)s::timestamptz IS NULL
       OR (next_attempt_at, id) > (%(after_at)s::timestamptz, %(after_id)s::uuid))
ORDER BY next_attempt_at, id
LIMIT %(limit)s
"""  # noqa: S608 - table names come from the models, values are parameters

#: Claims the due attempts of the given deliveries (at most `batch_size` per destination, in the
#: order of `ids`) under one token, unless their destination (the key's webhook URL) already
#: has `in_flight_limit` claims on the wire: a claim sends its attempts one after the other over
#: one connection, so it puts one attempt on the wire at a time and holds one slot, and a
#: receiver that hangs holds only that many worker threads, never all of them. Its columns are
#: read by name (`named_rows`).
CLAIM = f"""
WITH wanted AS (
    SELECT d.id, d.api_key_id, w.n
    FROM unnest(%(ids)s::uuid[]) WITH ORDINALITY AS w(id, n)
    JOIN {_DELIVERY} d ON d.id = w.id
    WHERE d.status = 'pending' AND d.next_attempt_at <= %(now)s
      AND (d.claimed_until IS NULL OR d.claimed_until < %(now)s)
),
ranked AS (
    SELECT wanted.id, wanted.n,
           row_number() OVER (PARTITION BY wanted.api_key_id ORDER BY wanted.n) AS place
    FROM wanted
    WHERE (
        SELECT count(DISTINCT o.claim_token) FROM {_DELIVERY} o
        WHERE o.api_key_id = wanted.api_key_id AND o.claimed_until > %(in_flight_after)s
          AND o.status = 'pending'
    ) < %(in_flight_limit)s
),
claimed AS (
    UPDATE {_DELIVERY} d
    SET claim_token = %(token)s, claimed_until = %(until)s
    FROM ranked r
    WHERE d.id = r.id AND r.place <= %(batch_size)s
      AND d.status = 'pending' AND d.next_attempt_at <= %(now)s
      AND (d.claimed_until IS NULL OR d.claimed_until < %(now)s)
    RETURNING d.id, d.organization_id, d.event_id, d.api_key_id, d.url, d.attempts,
              d.round_start_attempts, d.schedule_start, r.n
)
SELECT c.id, c.organization_id, c.url, c.attempts, c.round_start_attempts, c.schedule_start,
       e.id AS event_pk, e.family, e.name, e.event_id, e.payload,
       e.created_at AS event_created_at, e.is_open,
       k.id AS api_key_id, k.is_active AS api_key_is_active, k.encrypted_value,
       k.encrypted_webhook_secret, k.encrypted_previous_webhook_secret,
       k.previous_webhook_secret_expires_at
FROM claimed c
JOIN {_EVENT} e ON e.id = c.event_id
JOIN {_API_KEY} k ON k.id = c.api_key_id
ORDER BY c.n
"""  # noqa: S608 - table names come from the models, values are parameters

#: The given deliveries that CLAIM did not take. A due one found its destination at the
#: in-flight limit: it gives up its message (queued_at NULL) and waits to be handed a slot
#: (RECORD) or for the sweep; its row comes back with no `due_at`. A message that came before
#: its attempt is due (a countdown that fired a moment early, or a message of an earlier
#: attempt) gets the due time back when it is near, so the caller queues it again for then
#: instead of leaving the attempt to a later sweep.
UNCLAIMED = f"""
WITH parked AS (
    UPDATE {_DELIVERY} SET queued_at = NULL
    WHERE id = ANY(%(ids)s::uuid[]) AND status = 'pending' AND next_attempt_at <= %(now)s
      AND (claimed_until IS NULL OR claimed_until < %(now)s)
    RETURNING id
)
SELECT id, NULL::timestamptz AS due_at FROM parked
UNION ALL
SELECT id, next_attempt_at FROM {_DELIVERY}
WHERE id = ANY(%(ids)s::uuid[]) AND status = 'pending' AND next_attempt_at > %(now)s
  AND next_attempt_at <= %(horizon)s AND (claimed_until IS NULL OR claimed_until < %(now)s)
"""  # noqa: S608 - table names come from the models, values are parameters

#: Records a claim's attempts (one row of each array per attempt) and moves their deliveries
#: on (only while our claim stands: a redelivery may have cleared it), gives back the claimed
#: deliveries it did not send (`unsent`, queued again by the caller), and hands each freed slot
#: (one per destination of the claim) to up to `handover` of that destination's oldest parked
#: deliveries (queued again by the caller). `queued_at` is set when the caller queues the next
#: attempt with a countdown.
RECORD = f"""
WITH outcome AS (
    SELECT * FROM unnest(
        %(ids)s::uuid[], %(numbers)s::integer[], %(started_at)s::timestamptz[],
        %(status_codes)s::integer[], %(latencies_ms)s::integer[], %(errors)s::text[],
        %(succeeded)s::boolean[], %(statuses)s::text[], %(next_attempt_at)s::timestamptz[],
        %(delivered_at)s::timestamptz[], %(queued_at)s::timestamptz[]
    ) AS o(id, number, started_at, status_code, latency_ms, error, succeeded, status,
           next_attempt_at, delivered_at, queued_at)
),
attempt AS (
    INSERT INTO {_ATTEMPT}
        (delivery_id, number, started_at, status_code, latency_ms, error, succeeded)
    SELECT id, number, started_at, status_code, latency_ms, error, succeeded FROM outcome
),
recorded AS (
    UPDATE {_DELIVERY} d
    SET status = o.status, attempts = o.number, last_status_code = o.status_code,
        last_error = o.error, next_attempt_at = o.next_attempt_at,
        delivered_at = o.delivered_at, queued_at = o.queued_at, claim_token = NULL,
        claimed_until = NULL
    FROM outcome o
    WHERE d.id = o.id AND d.claim_token = %(token)s
    RETURNING d.id
),
released AS (
    UPDATE {_DELIVERY} SET claim_token = NULL, claimed_until = NULL, queued_at = %(now)s
    WHERE id = ANY(%(unsent)s::uuid[]) AND claim_token = %(token)s
    RETURNING id
),
handed_over AS (
    UPDATE {_DELIVERY} SET queued_at = %(now)s
    WHERE id IN (
        SELECT p.id
        FROM unnest(%(api_key_ids)s::uuid[]) AS k(id)
        CROSS JOIN LATERAL (
            SELECT p.id FROM {_DELIVERY} p
            WHERE p.api_key_id = k.id AND p.status = 'pending' AND p.queued_at IS NULL
              AND p.next_attempt_at <= %(now)s AND p.claim_token IS DISTINCT FROM %(token)s
              AND (p.claimed_until IS NULL OR p.claimed_until < %(now)s)
            ORDER BY p.next_attempt_at
            LIMIT %(handover)s
            FOR UPDATE SKIP LOCKED
        ) p
    )
    RETURNING id, next_attempt_at
)
SELECT ARRAY(SELECT id FROM recorded), ARRAY(SELECT id FROM released),
       ARRAY(SELECT id FROM handed_over ORDER BY next_attempt_at, id)
"""  # noqa: S608 - table names come from the models, values are parameters


#: Recovery: the given failed deliveries start a new round, in the order of `ids`. Their due
#: times are spaced a microsecond apart in that order, which is the order the sweep queues them
#: and the order a destination's freed slots are handed to its parked deliveries (RECORD); only
#: the `first` of each destination gets a message now, the others wait parked for their turn.
#: `status = 'failed'` makes a delivery recovered once, whatever runs at the same time.
RECOVER = f"""
UPDATE {_DELIVERY} d
SET status = 'pending', round_start_attempts = d.attempts,
    schedule_start = %(now)s + o.n * interval '1 microsecond',
    next_attempt_at = %(now)s + o.n * interval '1 microsecond',
    queued_at = CASE WHEN d.id = ANY(%(first)s::uuid[]) THEN %(now)s END,
    claim_token = NULL, claimed_until = NULL, delivered_at = NULL,
    url = COALESCE(
        (SELECT k.webhook_url FROM {_API_KEY} k
         WHERE k.id = d.api_key_id AND k.is_active AND k.webhook_url <> ''),
        d.url
    )
FROM unnest(%(ids)s::uuid[]) WITH ORDINALITY AS o(id, n)
WHERE d.id = o.id AND d.status = 'failed'
RETURNING d.id
"""  # noqa: S608 - table names come from the models, values are parameters
