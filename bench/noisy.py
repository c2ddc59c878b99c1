"""Noisy neighbours (docs/faults.md, issue 25): a quiet tenant measured alone, then while another
tenant floods, on the service as in production (gunicorn.conf.py, DEBUG off).

    .venv/bin/python bench/noisy.py              # 3 rounds of 8 s (~2 min with the seeding)
    make bench ARGS="--only noisy"               # the same, from bench/run.py

The quiet tenant reads one of its partner orders over one connection (wrk -c1, an API key).
The noisy tenant sends FLOOD_CONNECTIONS connections at full blast (no pause between requests,
Retry-After ignored), in two variants: its management API (the order list, a bearer token) and
its API key (reads of its own orders). The rate limits (600/m) are off, as in every benchmark:
what is measured is the in-flight limit and the web tier. Goals: the quiet tenant's p50 within
2x of its p50 alone (same round), its p99 under 500 ms.

Writes its section (Markdown) to bench/results/noisy.md; bench/run.py puts it in latest.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import harness  # noqa: E402 - needs the repository root on the path

DATABASE = os.environ.get("BENCH_NOISY_DATABASE", "bench_noisy")
PORT = int(os.environ.get("BENCH_NOISY_PORT", "8022"))
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/9")
ENV = harness.production_env(DATABASE, PORT, REDIS_URL)
harness.setup_django(ENV)

import redis  # noqa: E402 - needs Django set up
from django.conf import settings  # noqa: E402
from django.db import connection, transaction  # noqa: E402

from integrations.models import Order, OrderStatusEvent  # noqa: E402
from tenants.models import Membership, OrgRole, User  # noqa: E402
from tenants.services import api_key_create, auth_token_create, organization_create  # noqa: E402

BASE = f"http://127.0.0.1:{PORT}"
RESULTS = Path(__file__).resolve().parent / "results"
FLOOD_CONNECTIONS = 20  # issue 25's twenty connections
ORDERS_PER_TENANT = 2_000
PASSWORD = "bench-noisy-password-0123"


class Tenant:
    """An organization with ORDERS_PER_TENANT partner orders, a partner key and an admin's
    management token."""

    def __init__(self, name: str) -> None:
        slug = name.lower()
        self.organization = organization_create(name=f"Bench {name}", slug=f"bench-{slug}")
        self.key = api_key_create(
            organization_id=self.organization.id, name="bench", platform="partner_a"
        ).value
        now = datetime.now(UTC)
        orders = [
            Order(
                organization=self.organization,
                family="partner",
                platform="partner_a",
                external_ref=f"{name.upper()}-{n:05d}",
                pickup_address="Warehouse",
                pickup_lat=52.53,
                pickup_lng=13.45,
                dropoff_address=f"Customer {n}",
                dropoff_lat=52.52,
                dropoff_lng=13.40,
                recipient_name="Seed Recipient",
                recipient_phone="+491701234567",
                package_size="small",
                created_at=now - timedelta(seconds=n),
                updated_at=now - timedelta(seconds=n),
            )
            for n in range(ORDERS_PER_TENANT)
        ]
        with transaction.atomic():
            Order.objects.bulk_create(orders, batch_size=2000)
            OrderStatusEvent.objects.bulk_create(
                [OrderStatusEvent(order=o, to_status="pending", at=o.created_at) for o in orders],
                batch_size=2000,
            )
        self.order_ref = orders[0].external_ref
        email = f"admin@{slug}.example.com"
        user = User.objects.create_user(email=email, password=PASSWORD)
        Membership.objects.create(
            organization=self.organization, user=user, org_role=OrgRole.ADMIN, is_active=True
        )
        self.token = auth_token_create(email=email, password=PASSWORD, address="127.0.0.1").value

    @property
    def order_url(self) -> str:
        return f"{BASE}/api/integrations/partner-a/orders/{self.order_ref}"

    @property
    def management_url(self) -> str:
        return f"{BASE}/api/manage/organizations/{self.organization.id}/orders"


def quiet_read(quiet: Tenant, seconds: int) -> harness.Measurement:
    return harness.wrk(quiet.order_url, api_key=quiet.key, seconds=seconds, connections=1)


def flood(noisy: Tenant, variant: str, seconds: int) -> harness.Measurement:
    if variant == "management":
        return harness.wrk(
            noisy.management_url,
            seconds=seconds,
            connections=FLOOD_CONNECTIONS,
            extra_env={"BENCH_BEARER": noisy.token},
        )
    return harness.wrk(
        noisy.order_url, api_key=noisy.key, seconds=seconds, connections=FLOOD_CONNECTIONS
    )


def quiet_under_flood(
    quiet: Tenant, noisy: Tenant, variant: str, seconds: int
) -> tuple[harness.Measurement, harness.Measurement]:
    """The quiet tenant measured while the flood runs: the flood starts a second earlier and
    ends a second later, so every measured request meets it."""
    flooded: list[harness.Measurement] = []
    flooder = threading.Thread(
        target=lambda: flooded.append(flood(noisy, variant, seconds + 2)), daemon=True
    )
    flooder.start()
    time.sleep(1)
    measured = quiet_read(quiet, seconds)
    flooder.join()
    return measured, flooded[0]


VARIANTS = ("management", "api-key")


def render(
    rounds: list[dict], seconds: int, minutes: float, loads: tuple[float, float]
) -> tuple[str, bool]:
    lines = [
        "| quiet tenant (wrk -c1, partner order read) | p50 ms | p99 ms | p50 / alone | goal | "
        "result | flood req/s | flood 2xx/s | flood 429 share |",
        "|---|---:|---:|---:|---|---|---:|---:|---:|",
    ]
    alone_p50 = statistics.median(r["alone"].p50_ms for r in rounds)
    alone_p99 = statistics.median(r["alone"].p99_ms for r in rounds)
    lines.append(
        f"| alone | {alone_p50:.1f} | {alone_p99:.1f} | 1.00 | - | reference | - | - | - |"
    )
    all_pass = True
    for variant in VARIANTS:
        ratios = [r[variant][0].p50_ms / r["alone"].p50_ms for r in rounds]
        p50 = statistics.median(r[variant][0].p50_ms for r in rounds)
        p99 = statistics.median(r[variant][0].p99_ms for r in rounds)
        ratio = statistics.median(ratios)
        errors = sum(r[variant][0].non2xx + r[variant][0].socket_errors for r in rounds)
        passed = ratio <= 2.0 and p99 < 500 and errors == 0
        all_pass &= passed
        floods = [r[variant][1] for r in rounds]
        rate = statistics.median(f.requests_per_second for f in floods)
        ok_rate = statistics.median(
            f.requests_per_second * (1 - f.non2xx / max(f.requests, 1)) for f in floods
        )
        refused = statistics.median(f.non2xx / max(f.requests, 1) for f in floods)
        spread = ", ".join(f"{x:.2f}" for x in ratios)
        verdict = "PASS" if passed else f"FAIL{' (errors)' if errors else ''}"
        lines.append(
            f"| while another tenant floods its {variant} API ({FLOOD_CONNECTIONS} connections)"
            f" | {p50:.1f} | {p99:.1f} | {ratio:.2f} ({spread}) | p50 <= 2x, p99 < 500 ms | "
            f"{verdict} | {rate:.0f} | {ok_rate:.0f} | {refused:.0%} |"
        )
    header = (
        f"- date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; commit {harness.git_commit()}; "
        f'`bench/noisy.py` (`make bench ARGS="--only noisy"`), took {minutes:.1f} min\n'
        f"- service: gunicorn.conf.py as shipped ({settings.WEB_CONCURRENCY} gthread workers x "
        f"{settings.WEB_THREADS} threads), IN_FLIGHT_LIMIT {settings.IN_FLIGHT_LIMIT} (the "
        f"default), rate limits off; {os.cpu_count()} cores shared with PostgreSQL, Redis, the "
        "Celery worker and both wrk (pinned to core 1); load average (1 min) "
        f"{loads[0]:.1f} at the start, {loads[1]:.1f} at the end: other work on the machine "
        "competes with the quiet tenant too\n"
        f"- method: {len(rounds)} rounds; each measures the quiet tenant alone, then under each "
        f"flood, {seconds} s each; medians over the rounds, the ratio is taken within each round "
        "(the spread lists every round's). Flood columns: what the flooding tenant got; its "
        "429s are `too_many_in_flight` answers\n"
        '- the figures before (sync workers, no limit) and of earlier runs: docs/faults.md "Noisy '
        'neighbours"\n'
    )
    return header + "\n" + "\n".join(lines), all_pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=8)
    args = parser.parse_args()
    started = time.monotonic()
    (ROOT / "var").mkdir(exist_ok=True)
    RESULTS.mkdir(exist_ok=True)
    print(f"fresh database {DATABASE}, Redis {REDIS_URL}", flush=True)
    harness.fresh_database(ENV, DATABASE)
    redis.Redis.from_url(REDIS_URL).flushdb()
    quiet, noisy = Tenant("Quiet"), Tenant("Noisy")
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    connection.close()

    service = harness.Service(env=ENV, port=PORT, log="bench-noisy")
    service.start()
    rounds: list[dict] = []
    load_at_start = os.getloadavg()[0]
    try:
        print("warm-up", flush=True)
        quiet_read(quiet, 2)
        for variant in VARIANTS:
            flood(noisy, variant, 2)
        for number in range(1, args.rounds + 1):
            result = {"alone": quiet_read(quiet, args.seconds)}
            for variant in VARIANTS:
                result[variant] = quiet_under_flood(quiet, noisy, variant, args.seconds)
            rounds.append(result)
            figures = "; ".join(
                f"{v}: p50 {result[v][0].p50_ms:.1f} ms p99 {result[v][0].p99_ms:.1f} ms "
                f"(flood {result[v][1].requests_per_second:.0f} req/s, "
                f"{result[v][1].non2xx} non-2xx)"
                for v in VARIANTS
            )
            print(
                f"round {number}: alone p50 {result['alone'].p50_ms:.1f} ms p99 "
                f"{result['alone'].p99_ms:.1f} ms; {figures}",
                flush=True,
            )
    finally:
        service.stop()
    loads = (load_at_start, os.getloadavg()[0])
    section, all_pass = render(rounds, args.seconds, (time.monotonic() - started) / 60, loads)
    (RESULTS / "noisy.md").write_text(section + "\n")
    print()
    print(section)
    print(f"\ngoals: {'all PASS' if all_pass else 'some FAIL'}; written to bench/results/noisy.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
