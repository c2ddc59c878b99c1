"""The dispatch benchmark's second part (bench/dispatch.py, result in bench/results/dispatch.md
section 2): end to end on the service.

    .venv/bin/python bench/dispatch_service.py    # ~2-4 minutes; writes results/dispatch-service.md

1. A fresh database (`bench_dispatch_service`, Redis db 9 unless BENCH_REDIS_URL says) with one
   organization: 4 Berlin zones with depots, 50 drivers serving them (08:00-18:00, 30 orders
   each), 1,000 partner orders of one day with two-hour delivery windows and drop-offs inside
   their zones (seed 26), a partner key whose webhook URL is a loopback receiver listening for
   `order.assigned`, an admin's management token. Inserted set-based (bulk_create); zones and the
   key through their services.
2. The service as in production (bench/harness.py: gunicorn, a Celery worker, beat), the solver
   bounded by DISPATCH_SOLVER_MAX_ITERATIONS (the figure a rerun repeats) with a time limit
   far above it, so the plan is the same plan on every run.
3. A warm-up plan of another day (imports, connections), then the measured one: `POST
   .../dispatch/plans`, the plan read every 50 ms until `ready`; its steps (reading, matrix,
   solving, writing) from the plan's `timings`. Then `POST .../commit` and the time until the
   receiver has every `order.assigned` (the last first arrival), with the CPU the service's
   processes and its PostgreSQL backends spent on them (bench/cpu.py).

`run()` answers the markdown section (bench/dispatch.py `--only service` calls it); run as a
script it writes bench/results/dispatch-service.md.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
import urllib.error
import urllib.request
from datetime import UTC, date, datetime, timedelta
from datetime import time as wall
from pathlib import Path
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import cpu, harness  # noqa: E402 - needs the repository root on the path

#: an existing, migrated database to measure on instead of a fresh one (bench/history.py: the
#: year-loaded database of its own cluster); its name is then the URL's
DATABASE_URL = os.environ.get("BENCH_DISPATCH_DATABASE_URL")
DATABASE = (
    urlsplit(DATABASE_URL).path.lstrip("/")
    if DATABASE_URL
    else os.environ.get("BENCH_DISPATCH_DATABASE", "bench_dispatch_service")
)
PORT = int(os.environ.get("BENCH_DISPATCH_PORT", "8023"))
RECEIVER_PORT = int(os.environ.get("BENCH_DISPATCH_RECEIVER_PORT", str(PORT + 1)))
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/9")
RESULTS = Path(__file__).resolve().parent / "results"
BASE = f"http://127.0.0.1:{PORT}"

#: the solver's bound: iterations (the same plan on every run), and seconds only as a safety net
MAX_ITERATIONS = int(os.environ.get("BENCH_DISPATCH_ITERATIONS", "1000"))
TIME_LIMIT_SECONDS = 600
SOLVER_SETTINGS = {
    "DISPATCH_SOLVER_MAX_ITERATIONS": str(MAX_ITERATIONS),
    "DISPATCH_SOLVER_TIME_LIMIT_SECONDS": str(TIME_LIMIT_SECONDS),
}

SEED = 26
BERLIN = ZoneInfo("Europe/Berlin")
#: Wednesday 8 January 2031 (+01:00), a plain winter day; the warm-up plans the day before
DAY = date(2031, 1, 8)
WARM_UP_DAY = DAY - timedelta(days=1)
#: zone name -> centre, width and height in metres (the depot at the centre)
ZONES = {
    "Charlottenburg": ((52.5160, 13.3040), 4000, 3000),
    "Mitte": ((52.5219, 13.4032), 4200, 3000),
    "Neukölln": ((52.4811, 13.4350), 3600, 3000),
    "Prenzlauer Berg": ((52.5390, 13.4240), 3000, 2600),
}
ORDERS = 1_000
DRIVERS = 50
DRIVER_CAPACITY = 30
SHIFT = (wall(8), wall(18))
WINDOWS = ((8, 10), (10, 12), (12, 14), (14, 16), (16, 18))
WARM_UP_ORDERS = 20

#: the CPU groups (bench/cpu.py) reported, in order: the service's processes and its database
CPU_GROUPS = ("web", "worker", "pg")
#: the goals (bench/results/dispatch.md "Goals"), milliseconds
READY_BEYOND_SOLVER_MS = 2_000
COMMIT_TO_LAST_WEBHOOK_MS = 5_000
PASSWORD = "bench-dispatch-password-0123"


def service_env() -> dict[str, str]:
    return harness.production_env(
        DATABASE, PORT, REDIS_URL, database_url=DATABASE_URL, **SOLVER_SETTINGS
    )


# ----- data -----


class Day:
    """The organization, its zones, drivers and orders, its key and an admin's token."""

    def __init__(self, receiver_url: str) -> None:
        from dispatch.models import DriverZone  # noqa: PLC0415 - Django is set up by run()
        from integrations.models import Order, OrderStatusEvent  # noqa: PLC0415
        from tenants.models import Driver, Membership, OrgRole, User  # noqa: PLC0415
        from tenants.services import (  # noqa: PLC0415
            api_key_create,
            auth_token_create,
            organization_create,
        )
        from zones.services import zone_create  # noqa: PLC0415

        rng = random.Random(SEED)
        self.organization = organization_create(name="Bench Dispatch", slug="bench-dispatch")
        organization_id = self.organization.id
        api_key_create(
            organization_id=organization_id,
            name="bench partner",
            platform="partner_a",
            webhook_url=receiver_url,
            webhook_events=["order.assigned"],
        )
        zones = []
        for name, ((lat, lng), width, height) in ZONES.items():
            zones.append(
                zone_create(
                    organization_id=organization_id,
                    name=name,
                    geodata=_box(lat, lng, width, height),
                    timezone_name="Europe/Berlin",
                    depot={"address": f"Depot {name}", "lat": lat, "lng": lng},
                )
            )
        drivers = Driver.objects.bulk_create(
            Driver(
                organization_id=organization_id,
                name=f"Driver {n:02d}",
                phone=f"+49170{n:07d}",
                vehicle_type="van",
                capacity=DRIVER_CAPACITY,
                shift_start=SHIFT[0],
                shift_end=SHIFT[1],
            )
            for n in range(DRIVERS)
        )
        DriverZone.objects.bulk_create(
            DriverZone(driver=driver, zone=zones[n % len(zones)])
            for n, driver in enumerate(drivers)
        )
        now = datetime.now(UTC)
        orders = []
        for day, count, prefix in ((DAY, ORDERS, "DAY"), (WARM_UP_DAY, WARM_UP_ORDERS, "WARM")):
            for n in range(count):
                zone = zones[n % len(zones)]
                (lat, lng), width, height = ZONES[zone.name]
                start_hour, end_hour = rng.choice(WINDOWS)
                orders.append(
                    Order(
                        organization_id=organization_id,
                        family="partner",
                        platform="partner_a",
                        external_ref=f"{prefix}-{n:05d}",
                        pickup_address=f"Depot {zone.name}",
                        dropoff_address=f"Customer {n}",
                        # within the middle 90 % of the zone's box (small offsets: flat enough)
                        dropoff_lat=lat + rng.uniform(-0.45, 0.45) * height / 111_320,
                        dropoff_lng=lng
                        + rng.uniform(-0.45, 0.45) * width / (111_320 * _cos_degrees(lat)),
                        recipient_name="Bench Recipient",
                        recipient_phone="+491701234567",
                        package_size="small",
                        zone=zone,
                        delivery_window_start=datetime.combine(day, wall(start_hour), BERLIN),
                        delivery_window_end=datetime.combine(day, wall(end_hour), BERLIN),
                        created_at=now,
                        updated_at=now,
                    )
                )
        Order.objects.bulk_create(orders, batch_size=1000)
        OrderStatusEvent.objects.bulk_create(
            (OrderStatusEvent(order=o, to_status="pending", at=now) for o in orders),
            batch_size=1000,
        )
        email = "admin@bench-dispatch.example.com"
        user = User.objects.create_user(email=email, password=PASSWORD)
        Membership.objects.create(
            organization=self.organization, user=user, org_role=OrgRole.ADMIN, is_active=True
        )
        self.token = auth_token_create(email=email, password=PASSWORD, address="127.0.0.1").value
        self.plans_url = f"{BASE}/api/manage/organizations/{organization_id}/dispatch/plans"


def _cos_degrees(degrees: float) -> float:
    import math  # noqa: PLC0415 - only here

    return math.cos(math.radians(degrees))


def _box(lat: float, lng: float, width_m: float, height_m: float) -> dict:
    dlat = height_m / 2 / 111_320
    dlng = width_m / 2 / (111_320 * _cos_degrees(lat))
    west, east, south, north = lng - dlng, lng + dlng, lat - dlat, lat + dlat
    return {
        "type": "Polygon",
        "coordinates": [
            [[west, south], [east, south], [east, north], [west, north], [west, south]]
        ],
    }


# ----- HTTP -----


def _call(method: str, url: str, token: str, body: dict | None = None) -> tuple[int, dict]:
    request = urllib.request.Request(  # noqa: S310 - loopback http only
        url,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:  # noqa: S310 - loopback
            return answer.status, json.loads(answer.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def _receiver(path: str) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{RECEIVER_PORT}{path}", timeout=30) as answer:
        return json.loads(answer.read())


def _start_receiver() -> subprocess.Popen:
    """bench/webhooks/receiver.py's handler on RECEIVER_PORT (its own process, as in make bench)."""
    code = (
        "import sys; sys.path.insert(0, 'bench/webhooks');"
        "from http.server import ThreadingHTTPServer; from receiver import Handler;"
        f"s = ThreadingHTTPServer(('127.0.0.1', {RECEIVER_PORT}), Handler);"
        "s.daemon_threads = True; s.serve_forever()"
    )
    process = subprocess.Popen([str(harness.VENV_BIN / "python"), "-c", code], cwd=ROOT)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            _receiver("/count")
            return process
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError(f"the webhook receiver did not listen on {RECEIVER_PORT}")


def _plan_until_ready(day: Day, on: date) -> tuple[str, float, dict]:
    """POSTs a plan of `on` and reads it until ready: its id, seconds from POST to ready, and
    the plan read."""
    started = time.monotonic()
    status, plan = _call("POST", day.plans_url, day.token, {"date": on.isoformat()})
    if status != 202:
        raise RuntimeError(f"POST plans answered {status}: {plan}")
    while True:
        status, read = _call("GET", f"{day.plans_url}/{plan['id']}", day.token)
        if read.get("status") == "ready":
            return plan["id"], time.monotonic() - started, read
        if read.get("status") != "planning":
            raise RuntimeError(f"plan {plan['id']} is {read.get('status')}: {read}")
        if time.monotonic() - started > TIME_LIMIT_SECONDS + 60:
            raise RuntimeError(f"plan {plan['id']} not ready after {TIME_LIMIT_SECONDS + 60} s")
        time.sleep(0.05)


# ----- the run -----


def measure(day: Day, groups: cpu.ProcessGroups) -> dict:
    from dispatch.models import Plan  # noqa: PLC0415 - Django is set up by run()

    print("warm-up plan", flush=True)
    _plan_until_ready(day, WARM_UP_DAY)

    print(f"plan of {ORDERS} orders, {DRIVERS} drivers", flush=True)
    plan_id, ready_seconds, read = _plan_until_ready(day, DAY)
    stored = Plan.objects.get(pk=plan_id)
    routed = sum(len(route["stops"]) for route in read["routes"])

    print("commit", flush=True)
    load_at_commit = os.getloadavg()[0]
    before = groups.snapshot()
    committed_at = time.time()
    status, commit = _call("POST", f"{day.plans_url}/{plan_id}/commit", day.token)
    commit_seconds = time.time() - committed_at
    answered = groups.snapshot()
    if status != 200:
        raise RuntimeError(f"commit answered {status}: {commit}")
    deadline = time.monotonic() + 120
    while _receiver("/count")["unique"] < routed and time.monotonic() < deadline:
        time.sleep(0.05)
    arrivals = sorted(_receiver("/arrivals").values())
    received = groups.snapshot()
    return {
        "ready_ms": ready_seconds * 1000,
        "timings": stored.timings,
        "solver_ms": stored.solver_ms,
        "routes": sum(1 for route in read["routes"] if route["stops"]),
        "routed": routed,
        "distance_km": sum(route["distanceMeters"] for route in read["routes"]) / 1000,
        "unassigned": len(read.get("unassigned", [])),
        "commit_ms": commit_seconds * 1000,
        "webhooks": len(arrivals),
        "first_webhook_ms": (arrivals[0] - committed_at) * 1000 if arrivals else None,
        "last_webhook_ms": (arrivals[-1] - committed_at) * 1000 if arrivals else None,
        # CPU milliseconds per group: the commit's request, and up to the last order.assigned
        "commit_cpu_ms": {k: v * 1000 for k, v in (answered - before).items()},
        "webhooks_cpu_ms": {k: v * 1000 for k, v in (received - before).items()},
        "load_at_commit": load_at_commit,
    }


def render(figures: dict, minutes: float, loads: tuple[float, float]) -> tuple[str, bool]:
    t = figures["timings"]
    beyond = figures["ready_ms"] - figures["solver_ms"]
    ready_pass = beyond <= READY_BEYOND_SOLVER_MS and figures["unassigned"] == 0
    last = figures["last_webhook_ms"]
    webhooks_pass = figures["webhooks"] == figures["routed"] == ORDERS and (
        last is not None and last <= COMMIT_TO_LAST_WEBHOOK_MS
    )

    def verdict(passed: bool) -> str:
        return "PASS" if passed else "FAIL"

    def cpu_split(spent: dict) -> str:
        parts = [spent[group] for group in CPU_GROUPS]
        return f"{sum(parts):.0f} ({' + '.join(f'{part:.0f}' for part in parts)})"

    rows = [
        ("POST plans → ready (polled every 50 ms)", f"{figures['ready_ms']:.0f}", "-", "-"),
        ("&nbsp;&nbsp;reading (orders, drivers, zones, policy)", f"{t['reading']}", "-", "-"),
        ("&nbsp;&nbsp;matrix", f"{t['matrix']}", "-", "-"),
        (
            f"&nbsp;&nbsp;solving (the solver's own: {figures['solver_ms']} ms)",
            f"{t['solving']}",
            "-",
            "-",
        ),
        ("&nbsp;&nbsp;writing (routes, stops, left out)", f"{t['writing']}", "-", "-"),
        (
            "&nbsp;&nbsp;rest: request, queue, worker pick-up, polling",
            f"{figures['ready_ms'] - sum(t.values()):.0f}",
            "-",
            "-",
        ),
        (
            "ready beyond the solver's own time; unassigned",
            f"{beyond:.0f}; {figures['unassigned']}",
            f"<= {READY_BEYOND_SOLVER_MS}; 0",
            verdict(ready_pass),
        ),
        ("POST commit answered", f"{figures['commit_ms']:.0f}", "-", "-"),
        (
            "&nbsp;&nbsp;its CPU: web + worker + PostgreSQL",
            cpu_split(figures["commit_cpu_ms"]),
            "-",
            "-",
        ),
        (
            "commit → first order.assigned received",
            f"{figures['first_webhook_ms']:.0f}" if figures["first_webhook_ms"] else "-",
            "-",
            "-",
        ),
        (
            f"commit → every order.assigned received ({figures['webhooks']} of {ORDERS})",
            f"{last:.0f}" if last is not None else "-",
            f"<= {COMMIT_TO_LAST_WEBHOOK_MS}, all {ORDERS}",
            verdict(webhooks_pass),
        ),
        (
            "&nbsp;&nbsp;CPU from commit to the last: web + worker + PostgreSQL",
            cpu_split(figures["webhooks_cpu_ms"]),
            "-",
            "-",
        ),
    ]
    lines = [
        "## End to end on the service",
        "",
        f"{ORDERS:,} partner orders of {DAY} (two-hour windows, seed {SEED}) in "
        f"{len(ZONES)} Berlin zones with depots, {DRIVERS} drivers (capacity {DRIVER_CAPACITY}, "
        f"{SHIFT[0]:%H:%M}-{SHIFT[1]:%H:%M}), seeded in PostgreSQL; the service as in production "
        "(gunicorn, Celery worker `--pool=threads --concurrency=8`, beat), straight-line matrix "
        f"(`haversine`); the solver bounded by `DISPATCH_SOLVER_MAX_ITERATIONS={MAX_ITERATIONS}` "
        f"(time limit {TIME_LIMIT_SECONDS} s only as a safety net), seed 1, so a rerun makes "
        "the same plan; a warm-up plan of the day before first. Webhooks go to a loopback "
        f"receiver (bench/webhooks/receiver.py). Result: {figures['routes']} routes, "
        f"{figures['routed']} stops, {figures['distance_km']:.1f} km in all (what a rerun "
        f"repeats). One run, {minutes:.1f} minutes, on a shared 2-core "
        f"machine (load average {loads[0]:.1f} at start, "
        f"{figures['load_at_commit']:.1f} at the commit, {loads[1]:.1f} at end): "
        "times, unlike the plan, move with the load; CPU milliseconds (bench/cpu.py: the "
        "gunicorn tree, the Celery worker and beat, the database's PostgreSQL backends; the "
        "loopback receiver and Redis, shared, left out) move less.",
        "",
        "| measure | ms | goal | result |",
        "|---|---:|---|---|",
        *(f"| {name} | {value} | {goal} | {result} |" for name, value, goal, result in rows),
        "",
        "The commit's events are queued when its transaction commits, so the first "
        "`order.assigned` arrives about when the commit's transaction ends; `POST commit "
        "answered` includes queueing a delivery task per in-flight slot of the receiver after "
        "it (the other deliveries wait for a slot: those tasks send them batch after batch).",
    ]
    return "\n".join(lines), ready_pass and webhooks_pass


def run() -> tuple[str, bool]:
    """Seeds, starts the service, measures; answers the markdown section and whether every goal
    passed."""
    figures, minutes, loads = measured()
    return render(figures, minutes, loads)


def measured() -> tuple[dict, float, tuple[float, float]]:
    """Seeds, starts the service, measures: the figures, the minutes it took, the load average
    at its start and end."""
    env = service_env()
    harness.setup_django(env)
    import redis  # noqa: PLC0415 - needs Django set up
    from django.db import connection  # noqa: PLC0415

    started = time.monotonic()
    loads = [os.getloadavg()[0]]
    (ROOT / "var").mkdir(exist_ok=True)
    if DATABASE_URL:
        print(f"database {DATABASE} as it is, Redis {REDIS_URL}", flush=True)
    else:
        print(f"fresh database {DATABASE}, Redis {REDIS_URL}", flush=True)
        harness.fresh_database(env, DATABASE)
    redis.Redis.from_url(REDIS_URL).flushdb()
    receiver = _start_receiver()
    try:
        day = Day(f"http://127.0.0.1:{RECEIVER_PORT}/hooks")
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
        print(f"seeded in {time.monotonic() - started:.0f} s", flush=True)
        service = harness.Service(env=env, port=PORT, log="bench-dispatch-service")
        service.start()
        try:
            web, *workers = (process.pid for process in service.processes)
            groups = cpu.service_groups(
                web=[web],
                worker=workers,
                database=DATABASE,
                redis_url=REDIS_URL,
                exclude_backends=lambda: (
                    [connection.connection.info.backend_pid] if connection.connection else []
                ),
                server=harness.server_dsn(env),
            )
            figures = measure(day, groups)
        finally:
            service.stop()
    finally:
        receiver.kill()
        receiver.wait()
        connection.close()
    loads.append(os.getloadavg()[0])
    return figures, (time.monotonic() - started) / 60, (loads[0], loads[1])


if __name__ == "__main__":
    if sys.argv[1:2] == ["--json"]:  # bench/history.py: the figures only, no section written
        figures, minutes, _ = measured()
        Path(sys.argv[2]).write_text(json.dumps({**figures, "minutes": minutes}))
        sys.exit(0)
    section, all_pass = run()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "dispatch-service.md").write_text(section + "\n")
    print()
    print(section)
    print(
        f"\ngoals: {'all PASS' if all_pass else 'some FAIL'}; "
        "written to bench/results/dispatch-service.md"
    )
    sys.exit(0 if all_pass else 1)
