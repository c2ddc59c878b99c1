"""Scale out, shown (docs/performance.md, "Scale-out: `make scale`"): two service instances and two
Celery workers against one PostgreSQL and one Redis, behind HAProxy.

    .venv/bin/python bench/scale.py            # ~2-3 minutes
    .venv/bin/python bench/scale.py --quick    # shorter runs

1. A fresh database `bench_scale` (Redis db 11 on 6379) with `make bench`'s data (bench/load.py:
   slots, partner orders; one zone organization).
2. Two gunicorns (2 gthread workers each) on two loopback ports, two Celery workers (threads, 8)
   and one beat, all with the same settings; HAProxy (`/usr/sbin/haproxy`, its configuration
   generated into a temporary directory, run in the foreground as our child) balances round
   robin between the two gunicorns.
3. Through the balancer, with wrk: create partner order, ERP booking over 50 slots and on the
   hot slot, then `make bench`'s hot slot booked until full and its slot-hold race.
4. The invariants of `make bench` (no slot or window over capacity, one order per
   Idempotency-Key, every event delivered once deduplicated by id), then what only several
   instances can get wrong, each instance called directly (not through the balancer):
   - a zone polygon moved through the management API on one instance: resolve-zone on the other
     sees the new shape at once, and the other way round;
   - a key rotated through the provisioning API: the old value 401 on both, the new 200 on both.
5. Which instance and which worker served how much (HAProxy's counters, Celery's `inspect
   stats`), written with the checks to bench/results/scale.md; exit status 1 if a check fails.

On 2 cores this shows correctness, not speed: both instances share the same two cores.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import harness  # noqa: E402 - needs the repository root on the path

DATABASE = "bench_scale"
BALANCER_PORT = 8030
INSTANCE_PORTS = [8031, 8032]
STATS_PORT = 8039
REDIS_URL = os.environ.get("BENCH_SCALE_REDIS_URL", "redis://127.0.0.1:6379/11")
WORKERS_PER_INSTANCE = "2"  # 2 instances x 2 gthread workers: the 4 of `make bench`
ENV = harness.production_env(
    DATABASE, BALANCER_PORT, REDIS_URL, WEB_CONCURRENCY=WORKERS_PER_INSTANCE
)
harness.setup_django(ENV)

import redis  # noqa: E402 - needs Django set up
from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402

from bench import load  # noqa: E402
from delivery.celery import app as celery_app  # noqa: E402

BALANCER = f"http://127.0.0.1:{BALANCER_PORT}"
INSTANCES = [f"http://127.0.0.1:{port}" for port in INSTANCE_PORTS]
RESULTS = Path(__file__).resolve().parent / "results"
SCENARIOS = ("create partner order", "ERP booking 50 slots", "ERP booking hot slot")
# Two squares 20 km apart (more than resolve-zone's 5 km reach), south of the benchmark's zones.
SQUARE_A = (52.30, 13.30)
SQUARE_B = (52.30, 13.60)
CALLS_PER_INSTANCE = 8  # each check is asked this many times per instance: every worker answers


# ----- the balancer -----


class Balancer:
    """HAProxy in the foreground (our child), round robin over the instances, on loopback."""

    CONFIG = """global
    maxconn 512
defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
frontend service
    bind 127.0.0.1:{port}
    default_backend instances
backend instances
    balance roundrobin
{servers}
frontend stats
    bind 127.0.0.1:{stats_port}
    stats enable
    stats uri /stats
"""

    def __init__(self, port: int, stats_port: int, instance_ports: list[int]) -> None:
        self.directory = tempfile.TemporaryDirectory(prefix="bench-scale-haproxy-")
        config = Path(self.directory.name) / "haproxy.cfg"
        servers = "\n".join(
            f"    server web{n} 127.0.0.1:{p}" for n, p in enumerate(instance_ports, start=1)
        )
        config.write_text(self.CONFIG.format(port=port, stats_port=stats_port, servers=servers))
        haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
        self.stats_url = f"http://127.0.0.1:{stats_port}/stats;csv"
        log = open(ROOT / "var" / "bench-scale-haproxy.log", "ab")  # noqa: SIM115 - lives with it
        self.process = subprocess.Popen([haproxy, "-f", str(config), "-db"], stdout=log, stderr=log)
        deadline = time.monotonic() + 10
        while True:
            try:
                self.requests_per_server()
                return
            except OSError as error:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    message = "HAProxy did not start; see var/bench-scale-haproxy.log"
                    raise RuntimeError(message) from error
                time.sleep(0.2)

    def requests_per_server(self) -> dict[str, int]:
        """HAProxy's total of requests (sessions) sent to each instance."""
        with urllib.request.urlopen(self.stats_url, timeout=5) as response:  # noqa: S310
            text = response.read().decode().removeprefix("# ")
        return {
            row["svname"]: int(row["stot"])
            for row in csv.DictReader(io.StringIO(text))
            if row["pxname"] == "instances" and row["svname"].startswith("web")
        }

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
        self.directory.cleanup()


# ----- calls to one instance -----


def call(base: str, method: str, path: str, body: dict | None = None, **headers: str):
    """(status, JSON body) of one request to `base` (an instance or the balancer)."""
    request = urllib.request.Request(  # noqa: S310 - loopback http
        f"{base}/api/{path}",
        data=json.dumps(body).encode() if body is not None else None,
        method=method,
    )
    request.add_header("Content-Type", "application/json")
    for name, value in headers.items():
        request.add_header(name.replace("_", "-"), value)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def square(centre: tuple[float, float], half_degrees: float = 0.01) -> dict:
    lat, lng = centre
    ring = [
        [lng - half_degrees, lat - half_degrees],
        [lng + half_degrees, lat - half_degrees],
        [lng + half_degrees, lat + half_degrees],
        [lng - half_degrees, lat + half_degrees],
    ]
    return {"type": "Polygon", "coordinates": [[*ring, ring[0]]]}


def answers_everywhere(instances: list[str], ask) -> list[set]:
    """What each instance answers, asked CALLS_PER_INSTANCE times (the set of distinct answers)."""
    return [{ask(base) for _ in range(CALLS_PER_INSTANCE)} for base in instances]


class Tenant:
    """An organization made through the provisioning API, its admin's management token and a
    standard key: the actors of the cross-instance checks."""

    def __init__(self, base: str) -> None:
        provisioning = {"X_Provisioning_Secret": settings.PROVISIONING_SECRET}
        status, created = call(
            base,
            "POST",
            "provisioning/organizations",
            {"name": "Bench scale", "slug": "bench-scale",
             "admin": {"email": "admin@bench-scale.example", "name": "Scale Admin"}},
            **provisioning,
        )  # fmt: skip
        assert status == 201, (status, created)
        self.id = created["organization"]["id"]
        admin = created["admin"]
        status, reset = call(
            base, "POST", f"provisioning/admins/{admin['id']}/reset-password", {}, **provisioning
        )
        assert status == 200, (status, reset)
        status, token = call(
            base,
            "POST",
            "auth/token",
            {"email": admin["email"], "password": reset["temporaryPassword"]},
        )
        assert status == 200, (status, token)
        self.management = {"Authorization": f"Bearer {token['token']}"}
        status, key = call(
            base,
            "POST",
            f"provisioning/organizations/{self.id}/api-keys",
            {"name": "scale", "platform": "standard"},
            **provisioning,
        )
        assert status == 201, (status, key)
        self.key_id, self.key = key["id"], key["apiKey"]
        self.provisioning = provisioning

    def resolve(self, base: str, point: tuple[float, float], key: str | None = None):
        """(status, zone id or None) of resolve-zone at `point`."""
        status, body = call(
            base,
            "POST",
            "promises/resolve-zone",
            {"address": f"{point[0]:.6f},{point[1]:.6f}"},
            X_API_Key=key or self.key,
        )
        return status, (body.get("zone") or {}).get("id")


def key_rotation_problems(tenant: Tenant, balancer: str) -> list[str]:
    """Run after zone_edit_problems (the zone is at SQUARE_A). Every instance has used the key
    (its cache is warm); rotated once, the old value is refused
    and the new one taken by every instance at once (contract "Authentication and scope",
    "Immediate effect")."""
    problems = []
    before = answers_everywhere(INSTANCES, lambda base: tenant.resolve(base, SQUARE_A)[0])
    if any(answers != {200} for answers in before):
        problems.append(f"before the rotation the key was not taken everywhere: {before}")
    old = tenant.key
    status, rotated = call(
        balancer,
        "POST",
        f"provisioning/organizations/{tenant.id}/api-keys/{tenant.key_id}/rotate",
        {},
        **tenant.provisioning,
    )
    if status != 200:
        return [*problems, f"rotate answered {status}: {rotated}"]
    tenant.key = rotated["apiKey"]
    with_old = answers_everywhere(INSTANCES, lambda base: tenant.resolve(base, SQUARE_A, old)[0])
    with_new = answers_everywhere(INSTANCES, lambda base: tenant.resolve(base, SQUARE_A)[0])
    for n, (old_answers, new_answers) in enumerate(zip(with_old, with_new, strict=True), start=1):
        if old_answers != {401}:
            problems.append(f"instance {n} answered {sorted(old_answers)} to the rotated-away key")
        if new_answers != {200}:
            problems.append(f"instance {n} answered {sorted(new_answers)} to the new key")
    return problems


def zone_edit_problems(tenant: Tenant) -> list[str]:
    """A zone moved on one instance is seen where it now is by the other, both ways (contract
    "Geocoding and resolve-zone", "Management API")."""
    problems = []
    status, zone = call(
        INSTANCES[0],
        "POST",
        f"manage/organizations/{tenant.id}/zones",
        {"name": "Scale zone", "geodata": square(SQUARE_A)},
        **tenant.management,
    )
    if status != 201:
        return [f"zone create answered {status}: {zone}"]
    found, gone = (200, zone["id"]), (404, None)
    # Both instances have answered for the zone where it is (their caches, if any, are warm).
    moves = [(None, SQUARE_A, SQUARE_B)]
    moves += [(INSTANCES[0], SQUARE_B, SQUARE_A), (INSTANCES[1], SQUARE_A, SQUARE_B)]
    for editor, now_at, was_at in moves:
        if editor is not None:
            status, body = call(
                editor,
                "PATCH",
                f"manage/organizations/{tenant.id}/zones/{zone['id']}",
                {"geodata": square(now_at)},
                **tenant.management,
            )
            if status != 200:
                problems.append(f"zone PATCH on {editor} answered {status}: {body}")
                continue
        where = f"after the edit on {editor}" if editor else "before any edit"
        for n, base in enumerate(INSTANCES, start=1):
            at_new = {tenant.resolve(base, now_at) for _ in range(CALLS_PER_INSTANCE)}
            at_old = {tenant.resolve(base, was_at) for _ in range(CALLS_PER_INSTANCE)}
            if at_new != {found} or at_old != {gone}:
                problems.append(
                    f"{where}, instance {n} answered {sorted(at_new, key=str)} where the zone "
                    f"is and {sorted(at_old, key=str)} where it is not"
                )
    return problems


def tasks_per_worker() -> dict[str, int]:
    """Tasks each Celery worker has run (`celery inspect stats`)."""
    stats = celery_app.control.inspect(timeout=3).stats() or {}
    return {node: sum(info.get("total", {}).values()) for node, info in sorted(stats.items())}


# ----- main -----


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="runs of 3 s instead of 8 s")
    parser.add_argument("--seconds", type=int, default=None)
    args = parser.parse_args()
    seconds = args.seconds or (3 if args.quick else 8)
    started = time.monotonic()
    commit = harness.git_commit()  # what runs: taken before the load
    (ROOT / "var").mkdir(exist_ok=True)
    print(f"fresh database {DATABASE}, Redis {REDIS_URL}", flush=True)
    harness.fresh_database(ENV, DATABASE)
    redis.Redis.from_url(REDIS_URL).flushdb()
    receiver = load.webhooks_bench.Receiver()
    data = load.Data(webhook_url=f"{receiver.url}/hook", zone_counts=(1,))
    connection.close()

    scenarios = load.Scenarios(data, seconds, BALANCER)
    service = load.BenchService(
        env=ENV, web_ports=INSTANCE_PORTS, celery_workers=2, log="bench-scale"
    )
    balancer = None
    load_started = timezone.now()
    try:
        service.start()
        balancer = Balancer(BALANCER_PORT, STATS_PORT, INSTANCE_PORTS)
        print(f"two instances {INSTANCES} behind {BALANCER}; two Celery workers", flush=True)
        for name in SCENARIOS:  # warm-up: every worker connects
            scenarios.run(name, seconds=2)
        load.outbox_drain(timeout=60)
        rows = []
        for name in SCENARIOS:
            m = scenarios.run(name)
            left = load.outbox_drain(timeout=60)
            rows.append((name, m))
            print(
                f"  {name:<22} {m.requests_per_second:6.0f} req/s  p50 {m.p50_ms:6.1f} ms  "
                f"p99 {m.p99_ms:7.1f} ms  non-2xx {m.non2xx + m.socket_errors}"
                + (f"  ({left} deliveries pending)" if left else ""),
                flush=True,
            )
        checks, full = load.after_the_load(data, scenarios, [receiver], load_started)
        tenant = Tenant(BALANCER)
        # The zone first: it ends where the key check resolves (SQUARE_A), so a key that is
        # taken answers 200 there.
        checks.append(
            (
                "a zone moved on one instance is resolved where it now is by the other (both ways)",
                "; ".join(zone_edit_problems(tenant)) or "ok",
            )
        )
        checks.append(
            (
                "a rotated key: the old value 401 and the new one 200 on each instance, called "
                "directly",
                "; ".join(key_rotation_problems(tenant, BALANCER)) or "ok",
            )
        )
        per_instance = balancer.requests_per_server()
        per_worker = tasks_per_worker()
    finally:
        if balancer is not None:
            balancer.stop()
        service.stop()
        receiver.stop()

    table = "\n".join(
        [
            "| scenario (through the balancer) | req/s | p50 ms | p99 ms | errors |",
            "|---|---:|---:|---:|---:|",
            *(
                f"| {name} | {m.requests_per_second:.0f} | {m.p50_ms:.1f} | {m.p99_ms:.1f} | "
                f"{m.non2xx + m.socket_errors} |"
                for name, m in rows
            ),
            f"| ERP booking, hot slot of capacity {load.FULL_SLOT_CAPACITY} until full | "
            f"{full[0].requests_per_second:.0f} | {full[0].p50_ms:.1f} | {full[0].p99_ms:.1f} | "
            f"{full[0].non2xx + full[0].socket_errors - full[1]} (+{full[1]} expected 400 slot "
            f"full) |",
        ]
    )
    spread = (
        "- requests per instance (HAProxy): "
        + ", ".join(f"{name} {count}" for name, count in per_instance.items())
        + "\n- tasks per Celery worker: "
        + ", ".join(f"{node} {count}" for node, count in per_worker.items())
    )
    checks_text = load.checks_text(checks)
    document = (
        "# Scale-out: latest run\n\n"
        f"- date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC\n"
        f"- commit: {commit}\n"
        f"- command: `make scale{' ARGS=--quick' if args.quick else ''}`\n"
        f"- {os.cpu_count()} cores shared by everything: two gunicorns ({WORKERS_PER_INSTANCE} "
        f"gthread workers each), two Celery workers (threads, 8), one beat, HAProxy (round "
        f"robin), PostgreSQL, Redis and wrk; this shows correctness across instances, not "
        f"speed; took {(time.monotonic() - started) / 60:.1f} min\n"
        f"{spread}\n\n{table}\n\n## Checks\n\n{checks_text}\n"
    )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "scale.md").write_text(document)
    print()
    print(document)
    print("written to bench/results/scale.md")
    return 0 if all(problem == "ok" for _, problem in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
