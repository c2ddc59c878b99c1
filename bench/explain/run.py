"""EXPLAIN (ANALYZE, BUFFERS) of the hot query paths, on the database `make bench` left behind.

    .venv/bin/python bench/explain/run.py > /tmp/explain.txt

Sends one ERP booking, one partner order creation (with a delivery window and an
Idempotency-Key), one partner order read and one bulk availability through Django's test
client, records every statement they ran, then explains each SELECT / INSERT / UPDATE in a
transaction that is rolled back (the booking's `SELECT ... FOR UPDATE` included); nothing is
left in the database.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

#: `make bench`'s database; bench/history.py calls explain_all() in a process already set up
#: for its own.
BENCH_MAIN = {
    "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/bench_main",
    "REDIS_URL": os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/9"),
    "RATELIMIT_ENABLE": "false",
    "WEBHOOK_ALLOW_PRIVATE_URLS": "true",
    "DJANGO_SETTINGS_MODULE": "delivery.settings",
}
if __name__ == "__main__":
    os.environ.update(BENCH_MAIN)
    import django

    django.setup()

from django.db import connection, transaction  # noqa: E402 - after Django's setup
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from delivery.encryption import decrypt_text  # noqa: E402
from integrations import windows  # noqa: E402
from slots.models import SlotTemplate  # noqa: E402
from slots.occurrences import day_of_week  # noqa: E402
from tenants.models import ApiKey  # noqa: E402
from webhooks import events as webhook_events  # noqa: E402
from webhooks import sending  # noqa: E402
from webhooks.models import Delivery  # noqa: E402
from zones.models import Zone  # noqa: E402


def key(slug: str, platform: str) -> str:
    api_key = ApiKey.objects.get(organization__slug=slug, platform=platform, is_active=True)
    return decrypt_text(api_key.encrypted_value)


def post_json(client: Client, path: str, body: dict, api_key: str, **headers: str):
    return client.post(
        path, json.dumps(body), content_type="application/json", HTTP_X_API_KEY=api_key, **headers
    )


EXPLAINED = ("SELECT", "INSERT", "UPDATE", "DELETE", "WITH")


def explain(label: str, request, out=sys.stdout, setup=None) -> None:
    """Runs `request` in a transaction rolled back afterwards, then replays its statements in
    order, each under EXPLAIN ANALYZE (so each sees the rows of those before it), in another
    transaction rolled back too: the database is left as it was."""
    with transaction.atomic():
        if setup is not None:
            setup()  # not explained: what the request finds in the database (a burst)
        with CaptureQueriesContext(connection) as captured:
            response = request()
        transaction.set_rollback(True)
    print(
        f"\n## {label}: HTTP {getattr(response, 'status_code', '-')}, "
        f"{len(captured.captured_queries)} statements",
        file=out,
    )
    print("(run inside an outer transaction: the service's BEGIN shows as a SAVEPOINT)", file=out)
    with transaction.atomic(), connection.cursor() as cursor:
        if setup is not None:
            setup()
        for query in captured.captured_queries:
            sql = query["sql"].strip()
            print(f"\n-- {' '.join(sql.split())[:400]}", file=out)
            if sql.split(None, 1)[0].upper() not in (
                "SELECT",
                "INSERT",
                "UPDATE",
                "DELETE",
                "WITH",
            ):
                continue
            cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) {sql}")
            for (line,) in cursor.fetchall():
                print(f"   {line}", file=out)
            if "FOR UPDATE" in sql or "LATERAL" in sql:
                # Small tables are read whole; this shows the index that serves them at scale.
                cursor.execute("SET LOCAL enable_seqscan = off")
                cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) {sql}")
                print("   -- the same with enable_seqscan = off:", file=out)
                for (line,) in cursor.fetchall():
                    print(f"   {line}", file=out)
                cursor.execute("SET LOCAL enable_seqscan = on")
        transaction.set_rollback(True)


def explain_all(out=sys.stdout) -> None:
    """The hot paths' statements explained, to `out`."""
    client = Client(HTTP_HOST="127.0.0.1")  # a host ALLOWED_HOSTS has with DEBUG off too
    erp, standard = key("bench-slots", "erp"), key("bench-slots", "standard")
    partner = key("bench-partner", "partner_a")
    template = SlotTemplate.objects.filter(
        organization__slug="bench-slots", start_time="08:00"
    ).first()
    day = date.today() + timedelta(days=2)
    while day_of_week(day) != template.day_of_week:
        day += timedelta(days=1)
    booking = {
        "externalRef": f"EXPLAIN-{uuid.uuid4().hex[:8]}",
        "dropoffAddress": "1 Bench Street",
        "dropoffLat": 52.52,
        "dropoffLng": 13.40,
        "recipientName": "Explain",
        "recipientPhone": "+491701234567",
        "deliverySlotTemplateId": str(template.id),
        "deliverySlotDate": day.isoformat(),
    }
    client.get("/api/bench/hello-auth", HTTP_X_API_KEY=erp)  # key cache warm
    explain(
        "ERP booking (POST /api/integrations/erp/orders)",
        lambda: post_json(client, "/api/integrations/erp/orders", booking, erp),
        out,
    )
    zone = Zone.objects.get(organization__slug="bench-partner")
    tz = windows.zone_tz(zone.timezone)
    start = windows.windows_for_day(day, tz)[0].start.isoformat()
    ref = f"EXPLAIN-{uuid.uuid4().hex[:8]}"
    order = {
        "externalRef": ref,
        "pickupAddress": "Warehouse",
        "pickupLat": 52.53,
        "pickupLng": 13.45,
        "dropoffAddress": "Alexanderplatz 1",
        "dropoffLat": 52.52,
        "dropoffLng": 13.40,
        "recipientName": "Explain",
        "recipientPhone": "+491701234567",
        "packageSize": "small",
        "deliveryWindowStart": start,
    }
    client.get("/api/bench/hello-auth", HTTP_X_API_KEY=partner)
    explain(
        "Partner order creation with Idempotency-Key and window",
        lambda: post_json(
            client, "/api/integrations/partner-a/orders", order, partner, HTTP_IDEMPOTENCY_KEY=ref
        ),
        out,
    )
    explain(
        "Partner order read (GET /api/integrations/partner-a/orders/<ref>)",
        lambda: client.get(
            "/api/integrations/partner-a/orders/SEED-000100", HTTP_X_API_KEY=partner
        ),
        out,
    )
    first = date.today() + timedelta(days=1)
    slot_zone = template.zone_id
    client.get("/api/bench/hello-auth", HTTP_X_API_KEY=standard)
    explain(
        "Bulk availability, 14 days (slots/statements.py CALENDAR)",
        lambda: client.get(
            "/api/public/delivery-slots/availability/bulk",
            {
                "zoneId": str(slot_zone),
                "startDate": first.isoformat(),
                "endDate": (first + timedelta(days=13)).isoformat(),
            },
            HTTP_X_API_KEY=standard,
        ),
        out,
    )
    explain("Webhook delivery: emit, claim, POST, record (webhooks/sending.py)", deliver_one, out)
    explain(
        f"Webhook delivery in a burst: {BURST} deliveries of its destination pending",
        deliver_one,
        out,
        setup=lambda: emit_burst(BURST),
    )


#: the webhook burst of `make bench`: this many deliveries of one destination pending at once
BURST = 1500


def _emit_one(ref: str):
    organization = ApiKey.objects.get(
        organization__slug="bench-webhooks", platform="partner_a", is_active=True
    ).organization_id
    return webhook_events.event_emit(
        organization_id=organization,
        family="partner",
        event="order.created",
        platform="partner_a",
        payload={"id": str(uuid.uuid4()), "status": "pending", "externalRef": ref},
    )


def emit_burst(count: int) -> None:
    """`count` events of the webhook benchmark's destination, their deliveries pending (as
    right after a burst's commit)."""
    for number in range(count):
        _emit_one(f"BURST-{number}")


def deliver_one():
    """One webhook event of the webhook benchmark's organization and its delivery attempt (the
    claim, the POST to its receiver, which may be gone: a failed attempt records the same
    way, and the record)."""
    event = _emit_one("EXPLAIN")
    delivery = Delivery.objects.filter(event_id=event.id).values_list("pk", flat=True).first()
    sending.delivery_attempt(delivery_id=delivery)


if __name__ == "__main__":
    explain_all()
