"""The couriers app's hand-written SQL, one named statement each (the rest is the ORM).

They serve the courier app's requests that come all day long: a location batch
(`services/locations.py`), sent every few seconds by every driver on the road, the stop events
(`services/events.py`), and the token lookup each of them starts with. As ORM calls (a
bulk_create, a delete through the collector, an UPDATE then a get_or_create, subqueries, reads
of the stops with their route, plan, order and zones, a bulk_update's CASE of one branch per
stop) they cost the web process several times the work PostgreSQL does for them. Table names
come from the models; every value is a parameter.
"""

from couriers.models import DriverAccessToken, DriverPosition, LocationPoint
from dispatch.models import DispatchPolicy, DriverZone, Plan, PlanRoute, PlanStop
from integrations.models import Order
from slots.models import SlotPolicy
from tenants.models import Driver, Organization
from zones.models import Zone

_TOKEN = DriverAccessToken._meta.db_table
_DRIVER = Driver._meta.db_table
_ORGANIZATION = Organization._meta.db_table
_POINT = LocationPoint._meta.db_table
_POSITION = DriverPosition._meta.db_table
_STOP = PlanStop._meta.db_table
_ROUTE = PlanRoute._meta.db_table
_PLAN = Plan._meta.db_table
_ORDER = Order._meta.db_table
_DRIVER_ZONE = DriverZone._meta.db_table
_ZONE = Zone._meta.db_table
_SLOT_POLICY = SlotPolicy._meta.db_table
_DISPATCH_POLICY = DispatchPolicy._meta.db_table

#: The active driver of an active organization whose access token has the digest `digest`:
#: every column of the driver, and `token_digest`. For Driver.objects.raw.
DRIVER_BY_TOKEN = f"""
SELECT d.*, t.digest AS token_digest
FROM {_TOKEN} t
JOIN {_DRIVER} d ON d.id = t.driver_id
JOIN {_ORGANIZATION} o ON o.id = d.organization_id
WHERE t.digest = %(digest)s AND d.is_active AND o.is_active
"""  # noqa: S608 - table names come from the models, values are parameters

#: The name of the driver's zone time (contract "Couriers"): the time zone of the first zone
#: (by name) the driver serves, else the organization's slot policy's, else UTC. An SQL
#: expression of `%(driver)s` and `%(organization)s` (the driver's organization).
_DRIVER_TIMEZONE = f"""COALESCE(
    NULLIF((SELECT z.timezone FROM {_DRIVER_ZONE} dz JOIN {_ZONE} z ON z.id = dz.zone_id
            WHERE dz.driver_id = %(driver)s ORDER BY z.name, z.id LIMIT 1), ''),
    NULLIF((SELECT p.timezone FROM {_SLOT_POLICY} p
            WHERE p.organization_id = %(organization)s LIMIT 1), ''),
    'UTC'
)"""  # noqa: S608 - table names come from the models, values are parameters

#: The name of the driver's zone time (`selectors.driver_timezone`).
DRIVER_TIMEZONE = f"SELECT {_DRIVER_TIMEZONE}"

#: A batch of the driver's points in one round trip: the points (`points`, a JSON array of
#: objects with `at`, `lat`, `lng`, `accuracy_m`, `speed_mps`, `heading`: one text whose numbers
#: PostgreSQL reads exactly as Python wrote them, where six arrays cost the web process a Python
#: adaptation per value) join the trail, the driver's
#: points older than `cutoff` leave it, and the `newest_*` point becomes the driver's position
#: unless the known one is as new (of two batches racing, the newer point stays). One row:
#: whether the position moved, and the name of the driver's zone time (which tells the day of
#: the route the new position re-times).
TRAIL_RECORD = f"""
WITH added AS (
    INSERT INTO {_POINT} (driver_id, at, lat, lng, accuracy_m, speed_mps, heading)
    SELECT %(driver)s, point.*
    FROM json_to_recordset(%(points)s::json) AS point (
        at timestamptz, lat double precision, lng double precision,
        accuracy_m double precision, speed_mps double precision, heading double precision
    )
),
pruned AS (
    DELETE FROM {_POINT} WHERE driver_id = %(driver)s AND at < %(cutoff)s
),
moved AS (
    INSERT INTO {_POSITION} AS known
        (driver_id, lat, lng, accuracy_m, speed_mps, heading, at, received_at)
    VALUES (
        %(driver)s, %(newest_lat)s, %(newest_lng)s, %(newest_accuracy_m)s,
        %(newest_speed_mps)s, %(newest_heading)s, %(newest_at)s, %(received_at)s
    )
    ON CONFLICT (driver_id) DO UPDATE SET
        lat = EXCLUDED.lat, lng = EXCLUDED.lng, accuracy_m = EXCLUDED.accuracy_m,
        speed_mps = EXCLUDED.speed_mps, heading = EXCLUDED.heading, at = EXCLUDED.at,
        received_at = EXCLUDED.received_at
    WHERE known.at < EXCLUDED.at
    RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM moved), {_DRIVER_TIMEZONE}
"""  # noqa: S608 - table names come from the models, values are parameters

#: The stops still ahead on the driver's route of `day` in a plan of status `committed` (the
#: one committed last, as `selectors.committed_route` chooses): those whose order is in one of
#: `statuses`, in sequence, locked. Each row: the stop (`id`, `order_id`, `eta`, `window_start`,
#: `window_end`, `service_seconds`, `kind`, `lat`, `lng`), its route's and plan's travel figures
#: (`depot_lat`, `depot_lng`, `shift_end`, `detour_factor`, `travel_speed_kmh`), and its order's
#: `family`, `organization_id`, `platform`, `status` and `external_ref`.
STOPS_AHEAD = f"""
SELECT s.id, s.order_id, s.eta, s.window_start, s.window_end, s.service_seconds, s.kind,
       s.lat, s.lng, r.depot_lat, r.depot_lng, r.shift_end, p.detour_factor,
       p.travel_speed_kmh, o.family, o.organization_id, o.platform, o.status, o.external_ref
FROM {_STOP} s
JOIN {_ROUTE} r ON r.id = s.route_id
JOIN {_PLAN} p ON p.id = s.plan_id
JOIN {_ORDER} o ON o.id = s.order_id
WHERE s.route_id = (
    SELECT cr.id FROM {_ROUTE} cr JOIN {_PLAN} cp ON cp.id = cr.plan_id
    WHERE cr.driver_id = %(driver)s AND cr.date = %(day)s AND cp.status = %(committed)s
    ORDER BY cp.committed_at DESC, cp.created_at DESC
    LIMIT 1
) AND o.status = ANY(%(statuses)s)
ORDER BY s.sequence
FOR UPDATE OF s
"""  # noqa: S608 - table names come from the models, values are parameters

#: The new ETAs of a route's stops: `ids` and `etas` (arrays, one item per stop).
STOP_ETAS_SET = f"""
UPDATE {_STOP} AS stop SET eta = moved.eta
FROM unnest(%(ids)s::bigint[], %(etas)s::timestamptz[]) AS moved (id, eta)
WHERE stop.id = moved.id
"""  # noqa: S608 - the table name comes from the model, values are parameters

#: The driver's order `order` (`%(organization)s` the driver's organization) with its stop on
#: the driver's route in a plan of status `committed` (the one committed last, as
#: `selectors.committed_route` chooses), if any: every column of the order, then `stop_sequence`,
#: `stop_eta`, `stop_window_start`, `stop_window_end`, `stop_kind`, `stop_lat`, `stop_lng` and
#: `stop_timezone` (its route's zone's; all NULL without a stop), `order_timezone` (the
#: order's zone's), and what the organization's dispatch policy asks of a delivery's proof,
#: `policy_require_signature` and `policy_require_photo` (NULL without a policy). No row for an
#: unknown order or another driver's. For Order.objects.raw.
DRIVER_ORDER_STOP = f"""
SELECT o.*, s.sequence AS stop_sequence, s.eta AS stop_eta,
       s.window_start AS stop_window_start, s.window_end AS stop_window_end,
       s.kind AS stop_kind, s.lat AS stop_lat, s.lng AS stop_lng,
       s.timezone AS stop_timezone, oz.timezone AS order_timezone,
       dp.require_signature AS policy_require_signature,
       dp.require_photo AS policy_require_photo
FROM {_ORDER} o
LEFT JOIN {_ZONE} oz ON oz.id = o.zone_id
LEFT JOIN {_DISPATCH_POLICY} dp ON dp.organization_id = o.organization_id
LEFT JOIN LATERAL (
    SELECT ps.sequence, ps.eta, ps.window_start, ps.window_end, ps.kind, ps.lat, ps.lng,
           rz.timezone
    FROM {_STOP} ps
    JOIN {_ROUTE} r ON r.id = ps.route_id
    JOIN {_PLAN} p ON p.id = ps.plan_id
    JOIN {_ZONE} rz ON rz.id = r.zone_id
    WHERE ps.order_id = o.id AND r.driver_id = %(driver)s AND p.status = %(committed)s
    ORDER BY p.committed_at DESC, p.created_at DESC
    LIMIT 1
) s ON true
WHERE o.id = %(order)s AND o.organization_id = %(organization)s AND o.driver_id = %(driver)s
"""  # noqa: S608 - table names come from the models, values are parameters
#: DRIVER_ORDER_STOP with the order's row locked (FOR UPDATE) in the caller's transaction.
DRIVER_ORDER_STOP_LOCKED = f"{DRIVER_ORDER_STOP}FOR UPDATE OF o\n"
