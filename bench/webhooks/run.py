"""Webhook delivery benchmark (../shared/BENCH.md, last row of the targets).

Delivers events to a local receiver (a threaded HTTP server on 127.0.0.1) through a real Celery
worker started with the pool settings of docker-compose, and measures, in the same run:

- noop: a no-op Celery task per second (the reference: the worker's own ceiling);
- burst: N events committed in one transaction, then delivered (the worker's delivery rate);
- stream: N events, one transaction each, as fast as one producer commits them;
- paced: events at a steady rate below capacity: the delay commit → first attempt.

Each scenario runs `--rounds` times, interleaved; the table gives medians. Afterwards every event
must have reached the receiver (deduplicated by id) and every delivery must be `delivered`.

    .venv/bin/python bench/webhooks/run.py [--pool threads --concurrency 8] [--events 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench import harness  # noqa: E402 - needs the repository root on the path

DATABASE = "delivery_bench_webhooks"
REDIS_URL = os.environ.get("BENCH_WEBHOOKS_REDIS_URL", "redis://127.0.0.1:6379/10")
ENV = harness.bench_env(DATABASE, 0, REDIS_URL=REDIS_URL, LOG_LEVEL="WARNING")
os.environ.update(ENV)
os.environ["DJANGO_SETTINGS_MODULE"] = "delivery.settings"

import django  # noqa: E402 - configured from the benchmark's environment above

django.setup()

import redis  # noqa: E402
from django.db import transaction  # noqa: E402

from bench.webhooks import noop  # noqa: E402
from tenants.services import api_key_create, organization_create  # noqa: E402
from webhooks import services  # noqa: E402
from webhooks.models import Delivery, DeliveryStatus  # noqa: E402

# ----- the receiver -----


@dataclass
class Arrivals:
    first_seen: dict[str, float] = field(default_factory=dict)
    requests: int = 0
    lock: threading.Condition = field(default_factory=threading.Condition)

    def record(self, event_id: str) -> None:
        now = time.time()
        with self.lock:
            self.requests += 1
            self.first_seen.setdefault(event_id, now)
            self.lock.notify_all()

    def wait_for(self, event_ids: set[str], timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        with self.lock:
            while not event_ids <= self.first_seen.keys():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    missing = len(event_ids - self.first_seen.keys())
                    raise RuntimeError(f"{missing} event(s) never arrived")
                self.lock.wait(min(remaining, 0.5))


def start_receiver(arrivals: Arrivals) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as a real receiver would offer

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            document = json.loads(body)
            arrivals.record(document.get("id") or document.get("eventId"))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


# ----- the service's side: Celery worker and beat as in docker-compose -----


def start_celery(env: dict, pool: str, concurrency: int) -> list[subprocess.Popen]:
    (ROOT / "var").mkdir(exist_ok=True)
    log = open(ROOT / "var" / "bench-webhooks-celery.log", "ab")  # noqa: SIM115
    celery = str(harness.VENV_BIN / "celery")
    worker = [
        celery,
        "-A",
        "delivery.celery:app",
        "worker",
        "--loglevel=WARNING",
        f"--pool={pool}",
        f"--concurrency={concurrency}",
        "-I",
        "bench.webhooks.noop",
        "--without-gossip",
        "--without-mingle",
    ]
    beat = [
        celery,
        "-A",
        "delivery.celery:app",
        "beat",
        "--loglevel=WARNING",
        "--schedule",
        str(ROOT / "var" / "bench-webhooks-beat"),
    ]
    return [
        subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log)
        for command in (worker, beat)
    ]


def stop(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


# ----- scenarios -----


@dataclass
class Result:
    events_per_second: float
    delays_ms: list[float]

    @property
    def median_ms(self) -> float:
        return statistics.median(self.delays_ms)

    @property
    def p99_ms(self) -> float:
        ordered = sorted(self.delays_ms)
        return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def run_noop(count: int) -> Result:
    noop.counter().set(noop.COUNTER_KEY, 0)
    started = time.time()
    for _ in range(count):
        noop.noop.apply_async()
    deadline = time.monotonic() + 300
    while int(noop.counter().get(noop.COUNTER_KEY) or 0) < count:
        if time.monotonic() > deadline:
            raise RuntimeError("no-op tasks did not all run")
        time.sleep(0.005)
    return Result(count / (time.time() - started), [])


def _emit(organization, n: int) -> str:
    event = services.event_emit(
        organization_id=organization.id,
        family="partner",
        event="order.created",
        platform="partner_a",
        payload={"id": f"bench-{n}", "status": "pending", "externalRef": f"BENCH-{n}"},
    )
    return event.event_id


def _result(arrivals: Arrivals, committed_at: dict[str, float], first_commit: float) -> Result:
    arrivals.wait_for(set(committed_at))
    last = max(arrivals.first_seen[event_id] for event_id in committed_at)
    delays = [(arrivals.first_seen[e] - t) * 1000 for e, t in committed_at.items()]
    return Result(len(committed_at) / (last - first_commit), delays)


def run_burst(organization, arrivals: Arrivals, count: int, offset: int) -> Result:
    stamp: dict[str, float] = {}
    with transaction.atomic():
        # Registered before the emitter's callbacks, so it runs first, right after COMMIT.
        transaction.on_commit(lambda: stamp.setdefault("at", time.time()))
        ids = [_emit(organization, n) for n in range(offset, offset + count)]
    return _result(arrivals, dict.fromkeys(ids, stamp["at"]), stamp["at"])


def run_stream(organization, arrivals: Arrivals, count: int, offset: int, rate: float = 0):
    committed_at: dict[str, float] = {}
    started = time.time()
    for i, n in enumerate(range(offset, offset + count)):
        if rate:
            pause = started + i / rate - time.time()
            if pause > 0:
                time.sleep(pause)
        stamp: dict[str, float] = {}
        with transaction.atomic():
            transaction.on_commit(lambda stamp=stamp: stamp.setdefault("at", time.time()))
            event_id = _emit(organization, n)
        committed_at[event_id] = stamp["at"]
    return _result(arrivals, committed_at, min(committed_at.values()))


# ----- main -----


def run_rounds(args, organization, arrivals: Arrivals) -> dict[str, list[Result]]:
    run_noop(50)  # warm-up: the worker is up and connected
    results: dict[str, list[Result]] = {"noop": [], "burst": [], "stream": [], "paced": []}
    offset = 0
    for round_number in range(1, args.rounds + 1):
        results["noop"].append(run_noop(args.events))
        results["burst"].append(run_burst(organization, arrivals, args.events, offset))
        offset += args.events
        results["stream"].append(run_stream(organization, arrivals, args.events, offset))
        offset += args.events
        paced = run_stream(organization, arrivals, args.paced_events, offset, args.paced_rate)
        results["paced"].append(paced)
        offset += args.paced_events
        print(
            f"round {round_number}: "
            + ", ".join(f"{k} {v[-1].events_per_second:.0f}/s" for k, v in results.items()),
            flush=True,
        )
    return results


def report(args, results: dict[str, list[Result]], arrivals: Arrivals, organization) -> None:
    time.sleep(1)
    deliveries = Delivery.objects.filter(organization=organization)
    not_delivered = deliveries.exclude(status=DeliveryStatus.DELIVERED).count()
    retried = deliveries.filter(attempts__gt=1).count()
    noop_rate = statistics.median(r.events_per_second for r in results["noop"])
    print()
    print(f"Worker: --pool={args.pool} --concurrency={args.concurrency}; 2 cores shared by all.")
    print(f"Events per scenario: {args.events} (paced: {args.paced_events} at {args.paced_rate}/s)")
    print()
    print("| scenario | events/s | ratio to no-op | commit→first attempt p50 ms | p99 ms |")
    print("|---|---:|---:|---:|---:|")
    for name, runs in results.items():
        rate = statistics.median(r.events_per_second for r in runs)
        if runs[0].delays_ms:
            p50 = f"{statistics.median(r.median_ms for r in runs):.0f}"
            p99 = f"{statistics.median(r.p99_ms for r in runs):.0f}"
        else:
            p50 = p99 = "-"
        print(f"| {name} | {rate:.0f} | {rate / noop_rate:.2f} | {p50} | {p99} |")
    expected = args.rounds * (2 * args.events + args.paced_events)
    print()
    print(
        f"Invariants: {len(arrivals.first_seen)}/{expected} events arrived, "
        f"{arrivals.requests - len(arrivals.first_seen)} duplicate request(s), "
        f"{not_delivered} delivery(ies) not delivered, {retried} needed a retry."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pool", default="threads")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--paced-rate", type=float, default=100.0)
    parser.add_argument("--paced-events", type=int, default=500)
    args = parser.parse_args()

    harness.fresh_database(ENV, DATABASE)
    redis.Redis.from_url(REDIS_URL).flushdb()
    arrivals = Arrivals()
    receiver = start_receiver(arrivals)
    organization = organization_create(name="Webhook bench")
    api_key_create(
        organization=organization,
        name="bench",
        platform="partner_a",
        webhook_url=f"http://127.0.0.1:{receiver.server_address[1]}/hook",
    )
    processes = start_celery(ENV, args.pool, args.concurrency)
    try:
        results = run_rounds(args, organization, arrivals)
        report(args, results, arrivals, organization)
    finally:
        stop(processes)
        receiver.shutdown()


if __name__ == "__main__":
    main()
