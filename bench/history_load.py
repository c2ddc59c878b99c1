# ruff: noqa: E501 - SQL reads better on long lines
"""A year of a busy organization, loaded next to the benchmark's own data (bench/history.py).

Set-based SQL only (`INSERT ... SELECT ... FROM generate_series`, one statement per chunk of a
month or so), never the ORM: at full scale (`scale=1`)

- 5,000,000 orders over the past 365 days: half partner family (`bench-partner`, partner_a key,
  delivery windows on delivery days with their counters), half ERP family (`bench-slots`, booked
  on the zone's slot templates, bookings and counters as the service leaves them); terminal
  statuses (delivered, failed, cancelled) except the last day's, which are in every status;
  each with its status history (creation, then every transition the status machine allows);
- 5,000,000 webhook events (order events of the three keys and `erp.slot.booked`) with one
  delivery each and their attempts: delivered at once, delivered after retries, failed after
  the whole retry schedule;
- 1,000,000 expired Idempotency-Keys (older than 24 hours) with their stored answers;
- 200,000 expired slot holds (most used by a booking), 100,000 expired management tokens of
  the organization's staff, 2,000 invites (accepted or expired) with their memberships, and a
  fleet of drivers with their access tokens;
- dispatch: per organization and day with assigned orders one committed plan (and its
  `DispatchDay`), one route per driver of the day and one stop per order that reached
  `assigned` (about 4,600,000, on its own driver's route, numbered in creation order), 1 % of the
  orders (cancelled ones) left out with a reason;
- couriers: one courier event per courier-made transition (`picked_up`, `in_transit`,
  `delivered`, `failed`: about 13,800,000), one proof per delivered or failed order (files
  removed by retention after 180 days), the drivers' Idempotency-Keys of the last 24 hours, a
  trail of the last 24 hours (a point every 30 s over a 10-hour shift) and each driver's position.

Rows are what the service writes: same organizations, keys, zones and templates as the
benchmark's tenants (their hot paths read the same tables and indexes), external refs unique
per organization, every foreign key pointing at a real row, counters equal to their bookings.
Table names come from the models; a fraction (`scale`) loads the same shapes, smaller.

Import after Django is set up (bench/run.py's `prepare` hook calls `load`).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection

from bench import harness
from couriers.models import (
    CourierEvent,
    CourierIdempotencyKey,
    DriverAccessToken,
    DriverPosition,
    LocationPoint,
    StopProof,
)
from dispatch.models import DispatchDay, Plan, PlanLeftOut, PlanRoute, PlanStop
from integrations.models import (
    DeliveryWindowLoad,
    IdempotencyKey,
    Order,
    OrderStatusEvent,
)
from provisioning.models import Invite
from slots.models import SlotBooking, SlotDay, SlotHold, SlotTemplate
from tenants.models import ApiKey, AuthToken, Driver, Membership, Organization, User
from webhooks.models import Delivery, DeliveryAttempt, Event
from zones.models import Zone

FULL_YEAR = {
    "orders": 5_000_000,
    "webhook events": 5_000_000,
    "idempotency keys": 1_000_000,
    "slot holds": 200_000,
    "management tokens": 100_000,
    "invites": 2_000,
}
DRIVERS = 60  # per organization
STAFF = 40  # users who sign in to the management API
TRAIL_POINTS = 1200  # per driver at full scale: one every 30 s over a 10-hour shift
CHUNKS_PER_YEAR = 24  # orders and events go in this many statements each (about 2 weeks each)

T = {
    "order": Order._meta.db_table,
    "event": OrderStatusEvent._meta.db_table,
    "window": DeliveryWindowLoad._meta.db_table,
    "idem": IdempotencyKey._meta.db_table,
    "booking": SlotBooking._meta.db_table,
    "slotday": SlotDay._meta.db_table,
    "hold": SlotHold._meta.db_table,
    "template": SlotTemplate._meta.db_table,
    "hook_event": Event._meta.db_table,
    "delivery": Delivery._meta.db_table,
    "attempt": DeliveryAttempt._meta.db_table,
    "driver": Driver._meta.db_table,
    "driver_token": DriverAccessToken._meta.db_table,
    "user": User._meta.db_table,
    "membership": Membership._meta.db_table,
    "token": AuthToken._meta.db_table,
    "invite": Invite._meta.db_table,
    "key": ApiKey._meta.db_table,
    "org": Organization._meta.db_table,
    "zone": Zone._meta.db_table,
    "plan": Plan._meta.db_table,
    "route": PlanRoute._meta.db_table,
    "stop": PlanStop._meta.db_table,
    "left_out": PlanLeftOut._meta.db_table,
    "dispatch_day": DispatchDay._meta.db_table,
    "courier_event": CourierEvent._meta.db_table,
    "proof": StopProof._meta.db_table,
    "courier_key": CourierIdempotencyKey._meta.db_table,
    "trail": LocationPoint._meta.db_table,
    "position": DriverPosition._meta.db_table,
}


@dataclass
class Loaded:
    """What was loaded: rows per table, seconds per step, and the ERP orders added to the slot
    organization (its invariant counts them as existing)."""

    rows: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    erp_orders: int = 0

    @property
    def total_seconds(self) -> float:
        return sum(self.seconds.values())


def _placeholders_only(sql: str) -> str:
    """SQL with its modulo operators and LIKE wildcards doubled: only `%(name)s` is a
    placeholder (the statements here use `%` as SQL's modulo throughout)."""
    return re.sub(r"%(?!\()", "%%", sql)


def _execute(sql: str, params: dict | None = None) -> int:
    with connection.cursor() as cursor:
        cursor.execute(harness.literal_sql(_placeholders_only(sql), params) if params else sql)
        return cursor.rowcount


def _scalar(sql: str, params: dict | None = None):
    return _row(sql, params)[0]


def _row(sql: str, params: dict | None = None) -> tuple:
    with connection.cursor() as cursor:
        cursor.execute(harness.literal_sql(_placeholders_only(sql), params) if params else sql)
        return cursor.fetchone()


# Every status an order can be in, with the transitions that led there (integrations/services/
# orders.py ALLOWED_TRANSITIONS): step, from, to, minutes after the order's creation.
PATHS = {
    "pending": [],
    "dispatching": [("pending", "dispatching", 30)],
    "assigned": [("pending", "assigned", 60)],
    "picked_up": [("pending", "assigned", 60), ("assigned", "picked_up", 180)],
    "in_transit": [
        ("pending", "assigned", 60),
        ("assigned", "picked_up", 180),
        ("picked_up", "in_transit", 200),
    ],
    "delivered": [
        ("pending", "assigned", 60),
        ("assigned", "picked_up", 180),
        ("picked_up", "in_transit", 200),
        ("in_transit", "delivered", 260),
    ],
    "failed": [
        ("pending", "assigned", 60),
        ("assigned", "picked_up", 180),
        ("picked_up", "in_transit", 200),
        ("in_transit", "failed", 260),
    ],
    "cancelled": [("pending", "cancelled", 20)],
}


def _path_rows() -> str:
    rows = []
    for status, steps in PATHS.items():
        rows.append(f"('{status}', 1, '', 'pending', 0)")
        for number, (source, target, minutes) in enumerate(steps, start=2):
            rows.append(f"('{status}', {number}, '{source}', '{target}', {minutes})")
    return ", ".join(rows)


# An order's status from its age and a hash of its number: older than a day, it has ended
# (88 % delivered, 4 % failed, 8 % cancelled); the last day's are in every status.
STATUS_OF = """
CASE WHEN {created} < %(now)s - interval '1 day' THEN
    CASE WHEN {h} < 880 THEN 'delivered' WHEN {h} < 920 THEN 'failed' ELSE 'cancelled' END
ELSE
    CASE WHEN {h} < 150 THEN 'pending' WHEN {h} < 250 THEN 'dispatching'
         WHEN {h} < 400 THEN 'assigned' WHEN {h} < 500 THEN 'picked_up'
         WHEN {h} < 600 THEN 'in_transit' WHEN {h} < 850 THEN 'delivered'
         WHEN {h} < 900 THEN 'failed' ELSE 'cancelled' END
END
"""


def _counts(scale: float) -> dict[str, int]:
    return {name: max(10, round(n * scale)) for name, n in FULL_YEAR.items()}


def _prepare_helpers(tenants: dict) -> None:
    """Temporary tables of the load: the status paths, each organization's drivers and the slot
    organization's templates by weekday."""
    _execute("DROP TABLE IF EXISTS h_path, h_last, h_driver, h_template")
    _execute(
        "CREATE TEMP TABLE h_path (status text, step int, from_status text, to_status text, "
        "minutes int)"
    )
    _execute(f"INSERT INTO h_path VALUES {_path_rows()}")  # noqa: S608 - constants above
    _execute(
        "CREATE TEMP TABLE h_last AS SELECT status, max(minutes) * interval '1 minute' AS took "
        "FROM h_path GROUP BY status"
    )
    _execute(
        f"""CREATE TEMP TABLE h_driver AS
        WITH made AS (
            INSERT INTO {T["driver"]} (id, organization_id, name, phone, vehicle_type, is_active,
                                   capacity, shift_start, shift_end, created_at)
            SELECT gen_random_uuid(), o.id, 'History driver ' || k, '+4917000' || lpad(k::text, 5, '0'),
                   'van', true, NULL, '08:00', '20:00', %(now)s - interval '400 days'
            FROM (VALUES (%(partner)s::uuid), (%(slots)s::uuid)) o(id), generate_series(0, %(n)s - 1) k
            RETURNING id, organization_id
        )
        SELECT organization_id, (row_number() OVER (PARTITION BY organization_id ORDER BY id)) - 1
               AS k, id FROM made""",  # noqa: S608
        {**tenants, "n": DRIVERS},
    )
    _execute(
        f"""INSERT INTO {T["driver_token"]} (driver_id, digest, prefix, created_at)
        SELECT id, encode(sha256(('driver-token-' || id)::bytea), 'hex'), 'drv_' || left(id::text, 8),
               %(now)s - interval '30 days'
        FROM h_driver""",  # noqa: S608
        tenants,
    )
    _execute(
        f"""CREATE TEMP TABLE h_template AS
        SELECT day_of_week AS dow,
               (row_number() OVER (PARTITION BY day_of_week ORDER BY start_time)) - 1 AS k,
               id, start_time, duration_minutes
        FROM {T["template"]}
        WHERE organization_id = %(slots)s AND zone_id = %(slot_zone)s AND deleted_at IS NULL
          AND start_time < '17:00'""",  # noqa: S608 - the benchmark's 5 templates a day
        tenants,
    )


def _windows(tenants: dict) -> int:
    """The partner zone's delivery window counters of the past year (three a delivery day), to
    be counted up once the orders are in."""
    return _execute(
        f"""INSERT INTO {T["window"]} (zone_id, window_start, window_end, booked, capacity)
        SELECT %(partner_zone)s, (d + w.s) AT TIME ZONE 'Europe/Berlin',
               (d + w.s + interval '4 hours') AT TIME ZONE 'Europe/Berlin', 0, 1000000
        FROM generate_series((%(now)s AT TIME ZONE 'Europe/Berlin')::date - 366,
                             (%(now)s AT TIME ZONE 'Europe/Berlin')::date, interval '1 day') d,
             (VALUES (time '08:00'), (time '12:00'), (time '16:00')) w(s)
        WHERE extract(isodow FROM d) NOT IN (5, 6)
        ON CONFLICT (zone_id, window_start) DO NOTHING""",  # noqa: S608
        tenants,
    )


def _partner_orders(tenants: dict, first: int, last: int, total: int) -> tuple[int, int]:
    """Partner orders number first..last of `total` (spread over the year in number order),
    with their status history; (orders, status events)."""
    created = "(%(now)s - interval '365 days' + ((n + 0.5)::float8 / %(total)s) * (interval '365 days' - interval '2 hours'))"
    h = "(abs(hashint4(n)) % 1000)"
    sql = f"""
    WITH src AS (
        SELECT n, {created} AS created_at, {h} AS h, abs(hashint4(n + 7)) % 100 AS h2
        FROM generate_series(%(first)s::int, %(last)s::int) n
    ), shaped AS (
        SELECT src.*, {STATUS_OF.format(created="src.created_at", h="src.h")} AS status,
               ((created_at AT TIME ZONE 'Europe/Berlin')::date
                + (ARRAY[time '08:00', time '12:00', time '16:00'])[1 + n % 3])
                AT TIME ZONE 'Europe/Berlin' AS window_start
        FROM src
    ), made AS (
        INSERT INTO {T["order"]} (
            id, organization_id, family, platform, external_ref, status,
            pickup_address, pickup_lat, pickup_lng, dropoff_address, dropoff_lat, dropoff_lng,
            recipient_name, recipient_phone, package_size, weight_kg, temperature_class,
            delivery_method, service_type, cod_amount, expected_barcode, notes, failure_reason,
            attempt, zone_id, delivery_window_start, delivery_window_end, window_load_id,
            held_until, driver_id, eta, api_key_id, tracking_token, released_at, created_at,
            updated_at)
        SELECT gen_random_uuid(), %(partner)s, 'partner', 'partner_a', 'H-' || lpad(n::text, 8, '0'),
               s.status, 'Warehouse, Storkower Str. 1, Berlin', 52.53, 13.45,
               'Customer street ' || (n % 5000) || ', 10' || lpad((n % 999)::text, 3, '0') || ' Berlin',
               52.50 + (n % 400) * 0.0001, 13.37 + (n % 600) * 0.0001,
               'Recipient ' || (n % 100000), '+49170' || lpad((n % 10000000)::text, 7, '0'),
               (ARRAY['small', 'medium', 'large'])[1 + s.h2 % 3], 0.5 + (s.h2 % 40) * 0.25, '',
               '', 'standard', NULL, '', CASE WHEN s.h2 < 10 THEN 'Ring twice' ELSE '' END,
               CASE WHEN s.status = 'failed' THEN 'recipient_absent' ELSE '' END, 1,
               %(partner_zone)s,
               w.window_start, w.window_end, w.id, NULL,
               d.id, NULL, %(partner_key)s,
               'h' || md5('partner-tracking-' || n) || left(md5(n::text), 8),
               CASE WHEN s.status IN ('failed', 'cancelled') THEN s.created_at + l.took END,
               s.created_at, s.created_at + l.took
        FROM shaped s
        JOIN h_last l ON l.status = s.status
        LEFT JOIN h_driver d
               ON d.organization_id = %(partner)s AND d.k = s.n % {DRIVERS}
              AND s.status NOT IN ('pending', 'dispatching', 'cancelled')
        LEFT JOIN {T["window"]} w
               ON w.zone_id = %(partner_zone)s AND w.window_start = s.window_start AND s.h2 < 70
        RETURNING id, status, created_at
    )
    INSERT INTO {T["event"]} (order_id, from_status, to_status, at, actor, reason)
    SELECT m.id, p.from_status, p.to_status, m.created_at + p.minutes * interval '1 minute',
           CASE WHEN p.step = 1 THEN 'bench-partner partner_a' WHEN p.to_status = 'assigned'
                THEN 'dispatch' ELSE 'courier' END,
           CASE WHEN p.to_status = 'cancelled' THEN 'Customer cancelled' ELSE '' END
    FROM made m JOIN h_path p ON p.status = m.status
    """  # noqa: S608 - table names from the models, values are parameters
    events = _execute(sql, {**tenants, "first": first, "last": last, "total": total})
    return last - first + 1, events


def _erp_orders(tenants: dict, first: int, last: int, total: int) -> tuple[int, int]:
    """ERP orders number first..last of `total`, each booked on one of the zone's slots of its
    day (released once cancelled or failed), with their status history; (orders, events)."""
    created = "(%(now)s - interval '365 days' + ((n + 0.5)::float8 / %(total)s) * (interval '365 days' - interval '2 hours'))"
    h = "(abs(hashint4(n + 3)) % 1000)"
    sql = f"""
    WITH src AS (
        SELECT n, {created} AS created_at, {h} AS h
        FROM generate_series(%(first)s::int, %(last)s::int) n
    ), shaped AS (
        SELECT src.*, {STATUS_OF.format(created="src.created_at", h="src.h")} AS status,
               (src.created_at AT TIME ZONE 'Europe/Berlin')::date AS slot_date
        FROM src
    ), slotted AS (
        SELECT s.*, t.id AS template_id,
               (s.slot_date + t.start_time) AT TIME ZONE 'Europe/Berlin' AS window_start,
               (s.slot_date + t.start_time + t.duration_minutes * interval '1 minute')
                   AT TIME ZONE 'Europe/Berlin' AS window_end,
               s.created_at + l.took AS updated_at
        FROM shaped s
        JOIN h_last l ON l.status = s.status
        JOIN h_template t ON t.dow = extract(dow FROM s.slot_date) AND t.k = s.n % 5
    ), made AS (
        INSERT INTO {T["order"]} (
            id, organization_id, family, platform, external_ref, status,
            pickup_address, pickup_lat, pickup_lng, dropoff_address, dropoff_lat, dropoff_lng,
            recipient_name, recipient_phone, package_size, weight_kg, temperature_class,
            delivery_method, service_type, cod_amount, expected_barcode, notes, failure_reason,
            attempt, zone_id, delivery_window_start, delivery_window_end, window_load_id,
            held_until, driver_id, eta, api_key_id, tracking_token, released_at, created_at,
            updated_at)
        SELECT gen_random_uuid(), %(slots)s, 'erp', 'erp', 'HE-' || lpad(n::text, 8, '0'),
               s.status, 'Bench depot', NULL, NULL,
               'Kundenweg ' || (n % 5000) || ', Berlin', 52.50 + (n % 400) * 0.0001,
               13.37 + (n % 600) * 0.0001, 'ERP recipient ' || (n % 100000),
               '+49171' || lpad((n % 10000000)::text, 7, '0'), '', 2.5 + (n % 30),
               (ARRAY['Ambient', 'Chilled', 'Frozen'])[1 + n % 3],
               (ARRAY['car', 'motorcycle', 'refrigerated'])[1 + n % 3], 'standard',
               CASE WHEN n % 10 = 0 THEN 19.99 END, 'BC' || n, '',
               CASE WHEN s.status = 'failed' THEN 'address_not_found' ELSE '' END, 1,
               %(slot_zone)s, s.window_start, s.window_end, NULL, NULL,
               d.id, NULL, %(erp_key)s, 'h' || md5('erp-tracking-' || n) || left(md5(n::text), 8),
               CASE WHEN s.status IN ('failed', 'cancelled') THEN s.updated_at END,
               s.created_at, s.updated_at
        FROM slotted s
        LEFT JOIN h_driver d
               ON d.organization_id = %(slots)s AND d.k = s.n % {DRIVERS}
              AND s.status NOT IN ('pending', 'dispatching', 'cancelled')
        RETURNING id, status, created_at, updated_at
    ), booked AS (
        INSERT INTO {T["booking"]} (organization_id, order_id, template_id, date, booked_at,
                                    released_at)
        SELECT %(slots)s, m.id, s.template_id, s.slot_date, m.created_at,
               CASE WHEN m.status IN ('failed', 'cancelled') THEN m.updated_at END
        FROM made m JOIN slotted s ON s.created_at = m.created_at
    )
    INSERT INTO {T["event"]} (order_id, from_status, to_status, at, actor, reason)
    SELECT m.id, p.from_status, p.to_status, m.created_at + p.minutes * interval '1 minute',
           CASE WHEN p.step = 1 THEN 'bench-slots erp' WHEN p.to_status = 'assigned'
                THEN 'dispatch' ELSE 'courier' END,
           CASE WHEN p.to_status = 'cancelled' THEN 'Cancelled by the ERP' ELSE '' END
    FROM made m JOIN h_path p ON p.status = m.status
    """  # noqa: S608 - table names from the models, values are parameters
    events = _execute(sql, {**tenants, "first": first, "last": last, "total": total})
    orders = _scalar(
        f"SELECT count(*) FROM {T['order']} WHERE organization_id = %(slots)s "  # noqa: S608
        "AND external_ref BETWEEN %(lo)s AND %(hi)s",
        {**tenants, "lo": f"HE-{first:08d}", "hi": f"HE-{last:08d}"},
    )
    return orders, events


def _counters(tenants: dict) -> None:
    """Window and slot counters equal to their live bookings, as the service keeps them."""
    _execute(
        f"""UPDATE {T["window"]} w SET booked = c.n
        FROM (SELECT window_load_id, count(*) AS n FROM {T["order"]}
              WHERE organization_id = %(partner)s AND window_load_id IS NOT NULL
                AND status NOT IN ('cancelled', 'failed')
              GROUP BY window_load_id) c
        WHERE w.id = c.window_load_id""",  # noqa: S608
        tenants,
    )
    _execute(
        f"""INSERT INTO {T["slotday"]} (template_id, date, booked, capacity)
        SELECT b.template_id, b.date, count(*) FILTER (WHERE b.released_at IS NULL), 1000000
        FROM {T["booking"]} b JOIN {T["order"]} o ON o.id = b.order_id
        WHERE b.organization_id = %(slots)s AND o.external_ref LIKE 'HE-%'
        GROUP BY b.template_id, b.date
        ON CONFLICT (template_id, date) DO UPDATE SET booked = {T["slotday"]}.booked + excluded.booked""",  # noqa: S608
        tenants,
    )


# Webhook events: 40 % the webhook benchmark's key (order events), 30 % the partner key (order
# events), 30 % the ERP key (`erp.slot.booked`); one delivery each: 90 % delivered at the first
# attempt, 7 % after two or three, 3 % failed after the whole schedule (5 attempts).
def _webhooks(tenants: dict, first: int, last: int, total: int) -> tuple[int, int]:
    created = "(%(now)s - interval '365 days' + ((n + 0.5)::float8 / %(total)s) * (interval '365 days' - interval '3 hours'))"
    sql = f"""
    WITH src AS (
        SELECT n, {created} AS created_at, abs(hashint4(n + 11)) % 100 AS h,
               CASE WHEN n % 10 < 4 THEN 0 WHEN n % 10 < 7 THEN 1 ELSE 2 END AS who
        FROM generate_series(%(first)s::int, %(last)s::int) n
    ), shaped AS (
        SELECT src.*, (ARRAY[%(hooks)s, %(partner)s, %(slots)s]::uuid[])[1 + who] AS organization_id,
               (ARRAY[%(hooks_key)s, %(partner_key)s, %(erp_key)s]::uuid[])[1 + who] AS api_key_id,
               CASE WHEN who = 2 THEN 'erp' ELSE 'partner' END AS family,
               CASE WHEN who = 2 THEN 'erp.slot.booked'
                    ELSE (ARRAY['order.created', 'order.assigned', 'order.picked_up',
                                'order.in_transit', 'order.delivered'])[1 + n % 5] END AS name,
               md5('hook-' || n)::uuid AS subject,
               CASE WHEN h < 90 THEN 1 WHEN h < 97 THEN 2 + h % 2 ELSE 5 END AS attempts,
               h >= 97 AS failed
        FROM src
    ), events AS (
        INSERT INTO {T["hook_event"]} (id, organization_id, family, name, event_id, payload,
                                       coalescible, is_open, created_at, updated_at)
        SELECT gen_random_uuid(), organization_id, family, name,
               CASE WHEN who = 2 THEN 'erp.slot.booked:' || subject ELSE 'evt_' || md5('evt-' || n) END,
               CASE WHEN who = 2 THEN jsonb_build_object(
                        'polygon_id', %(slot_zone)s::text, 'polygon_name', 'Bench zone',
                        'order_id', subject::text, 'template_id', md5('t' || n % 35)::uuid::text,
                        'date', to_char(created_at, 'YYYY-MM-DD'), 'booked', n % 200,
                        'capacity', 1000000, 'available', 1000000 - n % 200,
                        'updatedAt', to_char(created_at, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
                    ELSE jsonb_build_object('id', subject::text,
                        'status', replace(name, 'order.', ''),
                        'externalRef', 'H-' || lpad((n % 2500000)::text, 8, '0')) END,
               false, false, created_at, created_at
        FROM shaped
        RETURNING id, organization_id, created_at
    ), deliveries AS (
        INSERT INTO {T["delivery"]} (id, organization_id, event_id, api_key_id, url, status,
            attempts, round_start_attempts, schedule_start, next_attempt_at, queued_at,
            claim_token, claimed_until, last_status_code, last_error, delivered_at, created_at)
        SELECT gen_random_uuid(), e.organization_id, e.id, s.api_key_id,
               'https://hooks.example.com/' || s.family || '/' || s.who,
               CASE WHEN s.failed THEN 'failed' ELSE 'delivered' END, s.attempts, 0,
               e.created_at, NULL, e.created_at,
               NULL, NULL, CASE WHEN s.failed THEN 503 ELSE 200 END,
               CASE WHEN s.failed THEN 'HTTP 503' ELSE '' END,
               CASE WHEN s.failed THEN NULL
                    ELSE e.created_at + (ARRAY[0, 60, 300, 1800, 7200])[s.attempts] * interval '1 second'
                         + interval '120 milliseconds' END,
               e.created_at
        FROM events e JOIN shaped s ON s.created_at = e.created_at AND s.organization_id = e.organization_id
        RETURNING id, status, attempts, schedule_start
    )
    INSERT INTO {T["attempt"]} (delivery_id, number, started_at, status_code, latency_ms, error,
                                succeeded)
    SELECT d.id, k, d.schedule_start + (ARRAY[0, 60, 300, 1800, 7200])[k] * interval '1 second',
           CASE WHEN k = d.attempts AND d.status = 'delivered' THEN 200
                WHEN k % 2 = 0 THEN NULL ELSE 503 END,
           CASE WHEN k % 2 = 0 AND NOT (k = d.attempts AND d.status = 'delivered') THEN 10000
                ELSE 40 + (hashint4(k) & 127) END,
           CASE WHEN k = d.attempts AND d.status = 'delivered' THEN ''
                WHEN k % 2 = 0 THEN 'Timed out after 10 s' ELSE 'HTTP 503' END,
           k = d.attempts AND d.status = 'delivered'
    FROM deliveries d, generate_series(1, d.attempts) k
    """  # noqa: S608 - table names from the models, values are parameters
    attempts = _execute(sql, {**tenants, "first": first, "last": last, "total": total})
    return last - first + 1, attempts


def _idempotency_keys(tenants: dict, count: int) -> int:
    """Expired Idempotency-Keys (25 hours to a year old) with their stored answers: 80 % of the
    partner key, 20 % of the ERP key."""
    return _execute(
        f"""INSERT INTO {T["idem"]} (api_key_id, key, request_hash, status, claim_token,
            locked_at, response_status, response_body, created_at, completed_at)
        SELECT CASE WHEN n % 5 = 0 THEN %(erp_key)s ELSE %(partner_key)s END::uuid,
               'HK-' || lpad(n::text, 8, '0'), md5('request-' || n) || md5('body-' || n),
               'completed', gen_random_uuid(), c, 201,
               jsonb_build_object('id', md5('idem-' || n)::uuid::text,
                   'externalRef', 'H-' || lpad(n::text, 8, '0'), 'status', 'pending',
                   'trackingUrl', 'https://track.example.com/t/' || md5('trk' || n),
                   'dropoffAddress', 'Customer street ' || (n % 5000) || ', Berlin',
                   'recipientName', 'Recipient ' || (n % 100000), 'packageSize', 'small',
                   'createdAt', to_char(c, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
               c, c + interval '80 milliseconds'
        FROM (SELECT n, %(now)s - interval '365 days'
                        + ((n + 0.5)::float8 / %(count)s) * (interval '364 days' - interval '1 hour') AS c
              FROM generate_series(0, %(count)s::int - 1) n) s""",  # noqa: S608
        {**tenants, "count": count},
    )


def _holds(tenants: dict, count: int) -> int:
    """Expired slot holds of the past year, 60 % of them used by a booking."""
    return _execute(
        f"""INSERT INTO {T["hold"]} (id, organization_id, api_key_id, template_id, date,
            created_at, expires_at, used_at)
        SELECT gen_random_uuid(), %(slots)s, %(erp_key)s, t.id, (c AT TIME ZONE 'Europe/Berlin')::date,
               c, c + interval '15 minutes',
               CASE WHEN n % 5 < 3 THEN c + interval '4 minutes' END
        FROM (SELECT n, %(now)s - interval '365 days'
                        + ((n + 0.5)::float8 / %(count)s) * (interval '365 days' - interval '1 hour') AS c
              FROM generate_series(0, %(count)s::int - 1) n) s
        JOIN h_template t ON t.dow = extract(dow FROM (c AT TIME ZONE 'Europe/Berlin')::date)
                         AND t.k = s.n % 5""",  # noqa: S608
        {**tenants, "count": count},
    )


def _people(tenants: dict, tokens: int, invites: int) -> tuple[int, int]:
    """The partner organization's staff (members who sign in) with a year of expired management
    tokens, and the invites of a year (80 % accepted, the rest expired) with their memberships."""
    _execute(
        f"""INSERT INTO {T["user"]} (id, password, last_login, is_superuser, email, name,
            is_active, is_staff, date_joined)
        SELECT md5('user-' || n)::uuid, '!', NULL, false, 'history-' || n || '@bench.example',
               'History person ' || n, true, false, %(now)s - interval '400 days'
        FROM generate_series(0, %(people)s - 1) n""",  # noqa: S608
        {**tenants, "people": STAFF + invites},
    )
    _execute(
        f"""INSERT INTO {T["membership"]} (id, organization_id, user_id, org_role, is_active,
            created_at)
        SELECT gen_random_uuid(), %(partner)s, md5('user-' || n)::uuid,
               CASE WHEN n < 5 THEN 'admin' ELSE 'member' END,
               n < %(staff)s OR (n - %(staff)s) % 5 <> 0, %(now)s - interval '380 days' + n * interval '1 hour'
        FROM generate_series(0, %(people)s - 1) n""",  # noqa: S608
        {**tenants, "people": STAFF + invites, "staff": STAFF},
    )
    invited = _execute(
        f"""INSERT INTO {T["invite"]} (id, organization_id, user_id, token_digest, expires_at,
            accepted_at, created_at)
        SELECT gen_random_uuid(), %(partner)s, md5('user-' || n)::uuid,
               encode(sha256(('invite-' || n)::bytea), 'hex'), c + interval '7 days',
               CASE WHEN (n - %(staff)s) % 5 <> 0 THEN c + interval '3 hours' END, c
        FROM (SELECT n, %(now)s - interval '365 days' + ((n - %(staff)s)::float8 * 358 / %(invites)s) * interval '1 day' AS c
              FROM generate_series(%(staff)s, %(staff)s + %(invites)s - 1) n) s""",  # noqa: S608
        {**tenants, "staff": STAFF, "invites": invites},
    )
    signed_in = _execute(
        f"""INSERT INTO {T["token"]} (id, user_id, digest, created_at, expires_at)
        SELECT gen_random_uuid(), md5('user-' || (n % %(staff)s))::uuid,
               encode(sha256(('auth-token-' || n)::bytea), 'hex'), c, c + interval '12 hours'
        FROM (SELECT n, %(now)s - interval '365 days'
                        + ((n + 0.5)::float8 / %(tokens)s) * interval '364 days' AS c
              FROM generate_series(0, %(tokens)s - 1) n) s""",  # noqa: S608
        {**tenants, "staff": STAFF, "tokens": tokens},
    )
    return signed_in, invited


# ----- dispatch and couriers: the plans that routed the orders, what the couriers sent -----

# The loaded orders of the chunk's days (Berlin dates `lo` to `hi` - 1 counted from today): the
# two organizations' history orders only (the benchmark's own are left alone).
CHUNK_ORDERS = """
    o.organization_id IN (%(partner)s, %(slots)s)
    AND o.created_at >= ((%(now)s AT TIME ZONE 'Europe/Berlin')::date + %(lo)s::int)::timestamp AT TIME ZONE 'Europe/Berlin'
    AND o.created_at < ((%(now)s AT TIME ZONE 'Europe/Berlin')::date + %(hi)s::int)::timestamp AT TIME ZONE 'Europe/Berlin'
    AND (o.external_ref LIKE 'H-%' OR o.external_ref LIKE 'HE-%')
"""
DAY_DRIVE = "interval '11 hours'"  # a route's stops spread from 08:00 over this, in sequence
SERVICE_SECONDS = 240  # the dispatch policy's default service minutes, as plans keep them


def _utc_iso(column: str) -> str:
    """SQL of `column` as Python's `isoformat()` of the UTC datetime Django reads."""
    return f"""to_char({column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"+00:00"')"""


def _order_version(driver: str) -> str:
    """SQL of the order's version as planning stores it (dispatch/services/order_versions.py):
    `<driver>|<zone>|<template>@<date>|<window start>/<window end>`, `-` for each it has not."""
    window = f"{_utc_iso('o.delivery_window_start')} || '/' || coalesce({_utc_iso('o.delivery_window_end')}, '-')"
    return (
        f"coalesce({driver}::text, '-') || '|' || coalesce(o.zone_id::text, '-') || '|' "
        f"|| coalesce(o.template_id::text || '@' || to_char(o.slot_date, 'YYYY-MM-DD'), '-') || '|' "
        f"|| coalesce({window}, '-')"
    )


def _dispatch(tenants: dict, lo: int, hi: int) -> tuple[int, int, int, int]:
    """The committed plans of days `lo`..`hi` - 1 (counted from today): per organization and day
    with orders that reached `assigned`, one plan (and its `DispatchDay`), one route per driver
    of the day (the order's driver, as the loaded order carries it), one stop per such order in
    the order it was created, and about 1 % of the orders left out (the cancelled ones the plan
    did not route, with a reason); (plans, routes, stops, left out)."""
    sql = f"""
    WITH o AS MATERIALIZED (
        SELECT o.id, o.organization_id, o.zone_id, o.driver_id, o.created_at,
               (o.created_at AT TIME ZONE 'Europe/Berlin')::date AS day,
               o.delivery_window_start, o.delivery_window_end, o.dropoff_lat, o.dropoff_lng,
               o.pickup_lat, o.pickup_lng, b.template_id, b.date AS slot_date,
               get_byte(uuid_send(o.id), 15) AS h
        FROM {T["order"]} o LEFT JOIN {T["booking"]} b ON b.order_id = o.id
        WHERE {CHUNK_ORDERS}
          AND (o.driver_id IS NOT NULL OR o.status = 'cancelled' AND get_byte(uuid_send(o.id), 15) % 8 = 0)
    ), days AS (
        SELECT DISTINCT organization_id, zone_id, day FROM o WHERE driver_id IS NOT NULL
    ), plans AS (
        INSERT INTO {T["plan"]} (id, organization_id, date, zone_ids, requested_driver_ids,
            zones_requested, request_key, status, routing, origin, service_seconds,
            travel_speed_kmh, detour_factor, solver_ms, timings, error, created_at, solved_at,
            committed_at)
        SELECT gen_random_uuid(), d.organization_id, d.day, ARRAY[d.zone_id], ARRAY[]::uuid[], false,
               encode(sha256('*|*'::bytea), 'hex'), 'committed', 'haversine',
               d.day::timestamp AT TIME ZONE 'Europe/Berlin', {SERVICE_SECONDS}, 25.0, 1.3,
               400 + abs(hashint4(d.day - date '2000-01-01')) % 800,
               jsonb_build_object('read', 40, 'matrix', 120, 'solve', 300, 'write', 90), '',
               least(%(now)s, (d.day + time '06:00') AT TIME ZONE 'Europe/Berlin'),
               least(%(now)s, (d.day + time '06:00:02') AT TIME ZONE 'Europe/Berlin'),
               least(%(now)s, (d.day + time '06:05') AT TIME ZONE 'Europe/Berlin')
        FROM days d
        RETURNING id, organization_id, date, zone_ids[1] AS zone_id
    ), locked_days AS (
        INSERT INTO {T["dispatch_day"]} (organization_id, date)
        SELECT organization_id, date FROM plans
        ON CONFLICT (organization_id, date) DO NOTHING
        RETURNING 1
    ), s AS (
        SELECT o.*, row_number() OVER (PARTITION BY driver_id, day ORDER BY created_at, id) AS sequence,
               count(*) OVER (PARTITION BY driver_id, day) AS stops
        FROM o WHERE driver_id IS NOT NULL
    ), routes AS (
        INSERT INTO {T["route"]} (id, plan_id, driver_id, date, zone_id, vehicle_type, capacity,
            shift_start, shift_end, depot_lat, depot_lng, start_at, end_at, travel_seconds,
            distance_meters)
        SELECT gen_random_uuid(), p.id, r.driver_id, r.day, p.zone_id, 'van', greatest(200, r.stops),
               (r.day + time '08:00') AT TIME ZONE 'Europe/Berlin',
               (r.day + time '20:00') AT TIME ZONE 'Europe/Berlin',
               coalesce(r.depot_lat, 52.52), coalesce(r.depot_lng, 13.40),
               (r.day + time '08:00') AT TIME ZONE 'Europe/Berlin',
               (r.day + time '08:00') AT TIME ZONE 'Europe/Berlin' + {DAY_DRIVE} + interval '30 minutes',
               r.stops * 150, r.stops * 1100
        FROM (SELECT organization_id, driver_id, day, count(*) AS stops, min(pickup_lat) AS depot_lat,
                     min(pickup_lng) AS depot_lng
              FROM s GROUP BY organization_id, driver_id, day) r
        JOIN plans p ON p.organization_id = r.organization_id AND p.date = r.day
        RETURNING id, plan_id, driver_id, date
    ), stops AS (
        INSERT INTO {T["stop"]} (plan_id, route_id, order_id, sequence, kind, eta, window_start,
            window_end, lat, lng, service_seconds, order_version)
        SELECT r.plan_id, r.id, o.id, o.sequence, 'delivery',
               (o.day + time '08:00') AT TIME ZONE 'Europe/Berlin'
                   + (o.sequence - 0.5)::float8 / o.stops * {DAY_DRIVE},
               coalesce(o.delivery_window_start, (o.day + time '08:00') AT TIME ZONE 'Europe/Berlin'),
               coalesce(o.delivery_window_end, (o.day + time '20:00') AT TIME ZONE 'Europe/Berlin'),
               o.dropoff_lat, o.dropoff_lng, {SERVICE_SECONDS}, {_order_version("o.driver_id")}
        FROM s o JOIN routes r ON r.driver_id = o.driver_id AND r.date = o.day
        RETURNING 1
    ), left_out AS (
        INSERT INTO {T["left_out"]} (plan_id, order_id, excluded, reason, window_start,
            window_end, order_version)
        SELECT p.id, o.id, false, (ARRAY['capacity', 'time_window', 'shift'])[1 + o.h % 3],
               o.delivery_window_start, o.delivery_window_end, {_order_version("NULL")}
        FROM o JOIN plans p ON p.organization_id = o.organization_id AND p.date = o.day
        WHERE o.driver_id IS NULL
        RETURNING 1
    )
    SELECT (SELECT count(*) FROM plans), (SELECT count(*) FROM locked_days),
           (SELECT count(*) FROM routes), (SELECT count(*) FROM stops),
           (SELECT count(*) FROM left_out)
    """  # noqa: S608 - table names from the models, values are parameters
    plans, _days, routes, stops, left_out = _row(sql, {**tenants, "lo": lo, "hi": hi})
    return plans, routes, stops, left_out


def _courier_records(tenants: dict, lo: int, hi: int) -> tuple[int, int]:
    """What the couriers sent for the orders of days `lo`..`hi` - 1: one `CourierEvent` per
    courier-made transition (the status events the loader marks with actor `courier`, at the
    same instant) and one `StopProof` per delivered or failed order; proofs older than
    PROOF_FILE_RETENTION_DAYS have lost their files (no signature name, `files_removed_at`) as
    retention leaves them; (events, proofs)."""
    sql = f"""
    WITH o AS MATERIALIZED (
        SELECT o.id, o.organization_id, o.driver_id, o.status, o.created_at, o.recipient_name,
               o.dropoff_lat, o.dropoff_lng, o.pickup_lat, o.pickup_lng, o.expected_barcode,
               o.cod_amount, o.failure_reason, get_byte(uuid_send(o.id), 15) AS h
        FROM {T["order"]} o
        WHERE {CHUNK_ORDERS}
          AND o.driver_id IS NOT NULL AND o.status IN ('picked_up', 'in_transit', 'delivered', 'failed')
    ), steps AS (
        SELECT o.*, p.to_status, o.created_at + p.minutes * interval '1 minute' AS at,
               o.h % 25 = 0 AS offline
        FROM o JOIN h_path p ON p.status = o.status
        WHERE p.to_status IN ('picked_up', 'in_transit', 'delivered', 'failed')
    ), events AS (
        INSERT INTO {T["courier_event"]} (order_id, driver_id, type, at, received_at, lat, lng,
                                          accuracy_m)
        SELECT id, driver_id, to_status, at,
               at + CASE WHEN offline THEN interval '12 minutes' ELSE (1 + h % 5) * interval '1 second' END,
               CASE WHEN to_status = 'picked_up' THEN coalesce(pickup_lat, 52.52)
                    ELSE dropoff_lat + (h % 7 - 3) * 0.00002 END,
               CASE WHEN to_status = 'picked_up' THEN coalesce(pickup_lng, 13.40)
                    ELSE dropoff_lng + (h % 5 - 2) * 0.00002 END,
               4 + h % 17
        FROM steps
        RETURNING 1
    ), proofs AS (
        INSERT INTO {T["proof"]} (id, organization_id, order_id, driver_id, status, at, lat, lng,
            accuracy_m, recipient_name, barcode, cash_collected, failure_reason, note,
            signature_name, created_at, files_removed_at)
        SELECT p.proof_id, p.organization_id, p.id, p.driver_id, p.to_status, p.at,
               p.dropoff_lat + (p.h % 7 - 3) * 0.00002, p.dropoff_lng + (p.h % 5 - 2) * 0.00002,
               4 + p.h % 17,
               CASE WHEN p.to_status <> 'delivered' THEN ''
                    WHEN p.h % 5 = 0 THEN 'Neighbour' ELSE p.recipient_name END,
               CASE WHEN p.to_status = 'delivered' THEN p.expected_barcode ELSE '' END,
               CASE WHEN p.to_status = 'delivered' THEN p.cod_amount END,
               CASE WHEN p.to_status = 'failed' THEN p.failure_reason ELSE '' END,
               CASE WHEN p.to_status = 'failed' THEN 'Nobody answered' ELSE '' END,
               CASE WHEN p.expired OR p.to_status <> 'delivered' OR p.h % 2 = 1 THEN ''
                    ELSE 'signatures/' || p.organization_id || '/' || p.proof_id || '.png' END,
               p.at + interval '1 second',
               CASE WHEN p.expired THEN least(%(now)s, p.at + %(keep_files)s * interval '1 day'
                                                       + (p.h % 60) * interval '1 minute') END
        FROM (SELECT steps.*, md5('proof-' || id)::uuid AS proof_id,
                     at < %(now)s - %(keep_files)s * interval '1 day' AS expired
              FROM steps WHERE to_status IN ('delivered', 'failed')) p
        RETURNING 1
    )
    SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM proofs)
    """  # noqa: S608 - table names from the models, values are parameters
    params = {**tenants, "lo": lo, "hi": hi, "keep_files": settings.PROOF_FILE_RETENTION_DAYS}
    return _row(sql, params)


def _courier_keys(tenants: dict) -> int:
    """The drivers' Idempotency-Keys still kept (retention removes them after 24 hours): one
    per courier event received in the last 24 hours, completed with the stop as answered."""
    return _execute(
        f"""INSERT INTO {T["courier_key"]} (driver_id, key, request_hash, status, claim_token,
            locked_at, response_status, response_body, created_at, completed_at)
        SELECT e.driver_id, md5('courier-key-' || e.id)::uuid::text,
               encode(sha256(('courier-request-' || e.id)::bytea), 'hex'), 'completed',
               gen_random_uuid(), e.received_at, 200,
               jsonb_build_object('orderId', o.id::text, 'externalRef', o.external_ref,
                   'status', e.type, 'recipientName', o.recipient_name,
                   'dropoffAddress', o.dropoff_address,
                   'updatedAt', to_char(e.received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
               e.received_at, e.received_at + interval '90 milliseconds'
        FROM {T["order"]} o JOIN {T["courier_event"]} e ON e.order_id = o.id
        WHERE o.organization_id IN (%(partner)s, %(slots)s)
          AND o.created_at >= %(now)s - interval '2 days'
          AND (o.external_ref LIKE 'H-%' OR o.external_ref LIKE 'HE-%')
          AND e.received_at >= %(now)s - interval '24 hours'""",  # noqa: S608
        tenants,
    )


def _trails(tenants: dict, points: int) -> tuple[int, int]:
    """Every history driver's trail of the last 24 hours (trails are kept that long): `points`
    points over a 10-hour shift that ended an hour ago, and the newest as its position;
    (points, positions)."""
    trail = _execute(
        f"""INSERT INTO {T["trail"]} (driver_id, at, lat, lng, accuracy_m, speed_mps, heading)
        SELECT d.id, %(now)s - interval '11 hours' + i * (interval '10 hours' / %(points)s),
               52.52 + 0.05 * sin(d.k + i / 40.0), 13.40 + 0.08 * cos(d.k * 0.7 + i / 55.0),
               4 + (i + d.k) % 12, (i * 3 + d.k) % 14, (i * 7 + d.k * 13) % 360
        FROM h_driver d, generate_series(0, %(points)s::int - 1) i""",  # noqa: S608
        {**tenants, "points": points},
    )
    positions = _execute(
        f"""INSERT INTO {T["position"]} (driver_id, lat, lng, accuracy_m, speed_mps, heading, at,
            received_at)
        SELECT DISTINCT ON (t.driver_id) t.driver_id, t.lat, t.lng, t.accuracy_m, t.speed_mps,
               t.heading, t.at, t.at + interval '2 seconds'
        FROM {T["trail"]} t JOIN h_driver d ON d.id = t.driver_id
        ORDER BY t.driver_id, t.at DESC""",  # noqa: S608
    )
    return trail, positions


def tenants_of_the_benchmark() -> dict:
    """The ids the load refers to: the benchmark's organizations, keys and zones."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT now()")
        (now,) = cursor.fetchone()

        def one(sql: str, *params) -> str:
            cursor.execute(sql, params)
            return cursor.fetchone()[0]

        org = f"SELECT id FROM {T['org']} WHERE slug = %s"  # noqa: S608
        key = (
            f"SELECT id FROM {T['key']} WHERE organization_id = %s AND platform = %s AND is_active"  # noqa: S608
        )
        zone = f"SELECT id FROM {T['zone']} WHERE organization_id = %s ORDER BY created_at LIMIT 1"  # noqa: S608
        partner, slots, hooks = (
            one(org, slug) for slug in ("bench-partner", "bench-slots", "bench-webhooks")
        )
        return {
            "now": now,
            "partner": partner,
            "slots": slots,
            "hooks": hooks,
            "partner_key": one(key, partner, "partner_a"),
            "erp_key": one(key, slots, "erp"),
            "hooks_key": one(key, hooks, "partner_a"),
            "partner_zone": one(zone, partner),
            "slot_zone": one(zone, slots),
        }


def load(scale: float = 1.0, *, log=print) -> Loaded:
    """Loads `scale` of a year into the database Django is connected to (the benchmark's data
    already there); returns what it loaded and how long each part took."""
    counts = _counts(scale)
    loaded = Loaded()
    tenants = tenants_of_the_benchmark()

    def step(name: str, work) -> None:
        started = time.monotonic()
        work()
        loaded.seconds[name] = loaded.seconds.get(name, 0.0) + time.monotonic() - started

    # As a restore does: the rows go in without a per-row foreign-key trigger (they point at
    # real rows by construction), and every foreign key of the loaded tables is checked after.
    _execute("SET session_replication_role = replica")
    try:
        _load(counts, loaded, tenants, step=step, scale=scale, log=log)
    finally:
        _execute("SET session_replication_role = DEFAULT")
    step("foreign keys checked", lambda: _foreign_keys_checked(loaded))
    return loaded


def _foreign_keys_checked(loaded: Loaded) -> None:
    """Every foreign key of the tables the load wrote, checked: rows pointing at no row."""
    tables = sorted({T[name] for name in T})
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT c.conrelid::regclass::text, a.attname, c.confrelid::regclass::text, fa.attname
            FROM pg_constraint c
            JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
            JOIN pg_attribute fa ON fa.attrelid = c.confrelid AND fa.attnum = c.confkey[1]
            WHERE c.contype = 'f' AND c.conrelid::regclass::text = ANY(%s)""",
            [tables],
        )
        keys = cursor.fetchall()
        for table, column, parent, parent_column in keys:
            cursor.execute(
                f'SELECT count(*) FROM "{table}" c WHERE c."{column}" IS NOT NULL AND NOT EXISTS '  # noqa: S608
                f'(SELECT 1 FROM "{parent}" p WHERE p."{parent_column}" = c."{column}")'
            )
            found = cursor.fetchone()[0]
            if found:
                raise RuntimeError(f"{found} rows of {table}.{column} point at no {parent} row")
    loaded.rows["foreign keys checked"] = len(keys)


def _load(counts: dict, loaded: Loaded, tenants: dict, *, step, scale: float, log) -> None:
    step("helpers and windows", lambda: (_prepare_helpers(tenants), _windows(tenants)))
    half = counts["orders"] // 2
    chunks = max(1, round(CHUNKS_PER_YEAR * min(1.0, scale * 10)))
    for kind, loader, total in (
        ("partner orders", _partner_orders, half),
        ("ERP orders", _erp_orders, counts["orders"] - half),
    ):
        orders = events = 0
        for chunk in range(chunks):
            first, last = total * chunk // chunks, total * (chunk + 1) // chunks - 1

            def work(first=first, last=last, loader=loader, total=total):
                nonlocal orders, events
                made, history = loader(tenants, first, last, total)
                orders += made
                events += history

            step(kind, work)
            log(f"    {kind}: {orders:,} orders, {events:,} status events "
                f"({loaded.seconds[kind]:.0f} s)", flush=True)  # fmt: skip
        loaded.rows[kind] = orders
        loaded.rows[f"{kind}' status events"] = events
        if kind == "ERP orders":
            loaded.erp_orders = orders
    step("counters", lambda: _counters(tenants))
    hooks = counts["webhook events"]
    made = attempts = 0
    for chunk in range(chunks):
        first, last = hooks * chunk // chunks, hooks * (chunk + 1) // chunks - 1

        def work(first=first, last=last):
            nonlocal made, attempts
            events, tries = _webhooks(tenants, first, last, hooks)
            made += events
            attempts += tries

        step("webhook events, deliveries, attempts", work)
        log(f"    webhooks: {made:,} events and deliveries, {attempts:,} attempts "
            f"({loaded.seconds['webhook events, deliveries, attempts']:.0f} s)", flush=True)  # fmt: skip
    loaded.rows["webhook events"] = loaded.rows["webhook deliveries"] = made
    loaded.rows["webhook attempts"] = attempts

    def rest():
        loaded.rows["idempotency keys"] = _idempotency_keys(tenants, counts["idempotency keys"])
        loaded.rows["slot holds"] = _holds(tenants, counts["slot holds"])
        tokens, invites = _people(tenants, counts["management tokens"], counts["invites"])
        loaded.rows["management tokens"] = tokens
        loaded.rows["invites"] = invites

    step("keys, holds, tokens, invites", rest)
    loaded.rows["drivers"] = 2 * DRIVERS
    # What follows reads the orders just loaded: with their statistics, the chunks' statements
    # are planned as on a real table (index scans of the chunk's days); without JIT, whose
    # compiling of these long statements took longer than their work (0.2-0.5 s a chunk).
    step("orders analyzed", lambda: _execute(f"ANALYZE {T['order']}, {T['booking']}"))
    _execute("SET jit = off")
    try:
        _load_dispatch_and_couriers(loaded, tenants, step=step, chunks=chunks, scale=scale, log=log)
    finally:
        _execute("RESET jit")


def _load_dispatch_and_couriers(
    loaded: Loaded, tenants: dict, *, step, chunks: int, scale: float, log
) -> None:
    """The plans of the year's days and what the couriers sent, chunked by days like the orders
    (a chunk's days whole: a route's stops are numbered within its day)."""
    days = 367  # the orders' Berlin dates: today and the 366 before
    spans = [(-366 + days * c // chunks, -366 + days * (c + 1) // chunks) for c in range(chunks)]
    plans = routes = stops = left_out = 0
    for lo, hi in spans:

        def work(lo=lo, hi=hi):
            nonlocal plans, routes, stops, left_out
            made_plans, made_routes, made_stops, made_left_out = _dispatch(tenants, lo, hi)
            plans += made_plans
            routes += made_routes
            stops += made_stops
            left_out += made_left_out

        step("dispatch plans, routes, stops", work)
        log(f"    dispatch: {plans:,} plans, {routes:,} routes, {stops:,} stops, {left_out:,} left out "
            f"({loaded.seconds['dispatch plans, routes, stops']:.0f} s)", flush=True)  # fmt: skip
    loaded.rows.update(
        {"plans": plans, "plan routes": routes, "plan stops": stops, "plans' left out": left_out}
    )
    events = proofs = 0
    for lo, hi in spans:

        def work(lo=lo, hi=hi):
            nonlocal events, proofs
            sent, proved = _courier_records(tenants, lo, hi)
            events += sent
            proofs += proved

        step("courier events and proofs", work)
        log(f"    couriers: {events:,} events, {proofs:,} proofs "
            f"({loaded.seconds['courier events and proofs']:.0f} s)", flush=True)  # fmt: skip
    loaded.rows["courier events"] = events
    loaded.rows["stop proofs"] = proofs

    def recent():
        loaded.rows["courier idempotency keys"] = _courier_keys(tenants)
        points = max(10, round(TRAIL_POINTS * scale))
        loaded.rows["trail points"], loaded.rows["driver positions"] = _trails(tenants, points)

    step("courier keys, trails, positions", recent)
