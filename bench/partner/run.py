"""Partner orders under load: create (with Idempotency-Key) and read, against gunicorn
(docs/performance.md).

    .venv/bin/python bench/partner/run.py [--seconds 8] [--rounds 3] [--connections 16]

Starts the service as in production on 127.0.0.1:8011 (gunicorn `-c gunicorn.conf.py`, sync
workers, persistent connections, rate limits off, Celery worker and beat) on a fresh database
`delivery_bench_partner` holding one organization with a zone, a `partner_a` key and 20,000
existing orders. Then, interleaved and repeated, wrk pinned to one core drives:

- `hello-auth`: the trivial authenticated endpoint (API-key lookup, nothing else);
- `dbread` / `dbwrite`: one primary-key SELECT / one INSERT in a transaction;
- `read order`: `GET /integrations/partner-a/orders/<ref>` over 1,000 existing refs;
- `create order`: `POST /integrations/partner-a/orders`, a unique externalRef and
  Idempotency-Key per request, no delivery window;
- `create order + window`: the same, booking one of 90 delivery windows (30 days x 3).

It reports the median of each (req/s, p50, p99, non-2xx) and its ratio to the references, then
checks the invariants: one order per Idempotency-Key, no window over capacity, window counters
equal to their orders. Figures move 25-40 % between runs here: read the ratios.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench import harness  # noqa: E402 - needs the repository root on the path

DATABASE = "delivery_bench_partner"
PORT = 8011
HERE = Path(__file__).resolve().parent
REDIS_URL = os.environ.get("BENCH_PARTNER_REDIS_URL", "redis://127.0.0.1:6379/14")
ENV = harness.bench_env(DATABASE, PORT, REDIS_URL=REDIS_URL, LOG_LEVEL="WARNING")
os.environ.update(ENV)
os.environ["DJANGO_SETTINGS_MODULE"] = "delivery.settings"

import django  # noqa: E402 - configured from the benchmark's environment above

django.setup()

from django.db import connection, transaction  # noqa: E402
from django.db.models import Count, F, Q  # noqa: E402

from integrations import windows  # noqa: E402
from integrations.models import (  # noqa: E402
    DeliveryWindowLoad,
    IdempotencyKey,
    IdempotencyStatus,
    Order,
    OrderStatusEvent,
)
from tenants.services import api_key_create, organization_create  # noqa: E402
from zones import services as zone_services  # noqa: E402

EXISTING_ORDERS = 20_000
READ_REFS = 1_000
MITTE = {
    "type": "Polygon",
    "coordinates": [
        [[13.37, 52.50], [13.43, 52.50], [13.43, 52.54], [13.37, 52.54], [13.37, 52.50]]
    ],
}


def seed() -> tuple[str, list[str], list[str]]:
    """The organization, its key and zone, and EXISTING_ORDERS orders (bulk, with history)."""
    organization = organization_create(name="Bench Partner", slug="bench-partner")
    key = api_key_create(organization_id=organization.id, name="bench", platform="partner_a").value
    zone = zone_services.zone_create(
        organization_id=organization.id,
        name="Mitte",
        geodata=MITTE,
        timezone_name="Europe/Berlin",
        window_capacity=1_000_000,
    )
    now = datetime.now(UTC)
    orders = [
        Order(
            organization=organization,
            family="partner",
            platform="partner_a",
            external_ref=f"SEED-{n:06d}",
            pickup_address="Warehouse",
            pickup_lat=52.53,
            pickup_lng=13.45,
            dropoff_address=f"Customer {n}",
            dropoff_lat=52.52,
            dropoff_lng=13.40,
            recipient_name="Seed Recipient",
            recipient_phone="+491701234567",
            package_size="small",
            notes="Zone: Mitte",
            zone=zone,
            created_at=now - timedelta(seconds=n),
            updated_at=now - timedelta(seconds=n),
        )
        for n in range(EXISTING_ORDERS)
    ]
    with transaction.atomic():
        Order.objects.bulk_create(orders, batch_size=2000)
        OrderStatusEvent.objects.bulk_create(
            [OrderStatusEvent(order=o, to_status="pending", at=o.created_at) for o in orders],
            batch_size=2000,
        )
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    tz = windows.zone_tz(zone.timezone)
    day = datetime.now(tz).date() + timedelta(days=1)
    starts: list[str] = []
    while len(starts) < 90:
        starts += [w.start.isoformat() for w in windows.windows_for_day(day, tz)]
        day += timedelta(days=1)
    refs = [f"SEED-{n:06d}" for n in range(0, EXISTING_ORDERS, EXISTING_ORDERS // READ_REFS)]
    return key, refs, starts


def check_invariants() -> list[str]:
    problems = []
    bench_orders = Order.objects.filter(external_ref__startswith="B-").count()
    keys = IdempotencyKey.objects.filter(key__startswith="B-")
    completed = keys.filter(status=IdempotencyStatus.COMPLETED).count()
    if bench_orders != completed or keys.count() != completed:
        problems.append(
            f"{bench_orders} orders for {completed} completed keys ({keys.count()} keys)"
        )
    over = DeliveryWindowLoad.objects.filter(booked__gt=F("capacity")).count()
    if over:
        problems.append(f"{over} windows over capacity")
    mismatched = (
        DeliveryWindowLoad.objects.annotate(
            active=Count("orders", filter=~Q(orders__status__in=("cancelled", "failed")))
        )
        .exclude(booked=F("active"))
        .count()
    )
    if mismatched:
        problems.append(f"{mismatched} window counters differ from their orders")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=16)
    args = parser.parse_args()

    (ROOT / "var").mkdir(exist_ok=True)
    harness.fresh_database(ENV, DATABASE)
    key, refs, starts = seed()
    connection.close()
    base = f"http://127.0.0.1:{PORT}/api"
    orders_url = f"{base}/integrations/partner-a/orders"

    def run(name: str):
        common = {"seconds": args.seconds, "connections": args.connections}
        if name == "hello-auth":
            return harness.wrk(f"{base}/bench/hello-auth", api_key=key, **common)
        if name == "dbread":
            return harness.wrk(f"{base}/bench/dbread", **common)
        if name == "dbwrite":
            return harness.wrk(f"{base}/bench/dbwrite", method="POST", body="{}", **common)
        if name == "read order":
            return harness.wrk(
                orders_url,
                api_key=key,
                script=str(HERE / "read.lua"),
                extra_env={"BENCH_REFS": ",".join(refs)},
                **common,
            )
        run_id = uuid.uuid4().hex[:8]
        extra = {"BENCH_RUN": run_id}
        if name == "create order + window":
            extra["BENCH_WINDOWS"] = ",".join(starts)
        return harness.wrk(
            orders_url, api_key=key, script=str(HERE / "create.lua"), extra_env=extra, **common
        )

    scenarios = [
        "hello-auth",
        "dbread",
        "dbwrite",
        "read order",
        "create order",
        "create order + window",
    ]
    results: dict[str, list] = {name: [] for name in scenarios}
    # A log and beat schedule of its own: other benches may run beside.
    service = harness.Service(env=ENV, port=PORT, worker_concurrency=4, log="bench-partner")
    service.start()
    try:
        for name in scenarios:  # warm-up: every worker connects and fills its caches
            harness.wrk(f"{base}/bench/hello-auth", api_key=key, seconds=2, connections=16)
            run(name)
        for round_number in range(args.rounds):
            for name in scenarios:
                measurement = run(name)
                results[name].append(measurement)
                print(f"round {round_number + 1} {name}: {measurement}", flush=True)
    finally:
        service.stop()

    m = {name: harness.median_of(values) for name, values in results.items()}

    def ratio(a: str, b: str) -> float:
        return m[a].requests_per_second / m[b].requests_per_second

    rows = [
        ("hello-auth", m["hello-auth"], "-", None, "-"),
        ("dbread", m["dbread"], "-", None, "-"),
        ("dbwrite", m["dbwrite"], "-", None, "-"),
        ("read order", m["read order"], "dbread", ratio("read order", "dbread"), ">= 0.8"),
        ("read order", m["read order"], "hello-auth", ratio("read order", "hello-auth"), "-"),
        ("create order", m["create order"], "dbwrite", ratio("create order", "dbwrite"), ">= 0.5"),
        (
            "create order",
            m["create order"],
            "hello-auth",
            ratio("create order", "hello-auth"),
            "-",
        ),
        (
            "create order + window",
            m["create order + window"],
            "dbwrite",
            ratio("create order + window", "dbwrite"),
            ">= 0.5",
        ),
    ]
    print()
    print(
        f"{args.connections} connections, {args.seconds} s per run, median of {args.rounds} "
        f"interleaved runs, {EXISTING_ORDERS} existing orders"
    )
    print(harness.table(rows))
    problems = check_invariants()
    print("invariants:", "ok" if not problems else "; ".join(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    sys.exit(main())
