"""Webhook delivery benchmark (docs/performance.md, last row of the targets).

Delivers events to a local receiver (receiver.py: a threaded HTTP server on 127.0.0.1 in its own
process) through a real Celery worker started with the pool settings of docker-compose, and
measures, in the same run:

- noop: a no-op Celery task per second (the reference: the worker's own ceiling);
- burst: N events committed in one transaction, then delivered: the worker's delivery rate,
  the figure compared with noop (docs/performance.md target >= 0.5);
- stream: N events, one transaction each, as fast as one producer commits them (its rate is
  bounded by the producer, its delays show the worker keeping up);
- paced: events at a steady rate below capacity: the delay commit → first attempt
  (docs/performance.md target p99 < 1 s).

Each scenario runs `--rounds` times, interleaved; the tables give medians, the second the CPU
per event of the worker (Celery worker and beat) and of the database's backends (bench/cpu.py),
the figure `make bench` compares with its goal ("webhook delivery", worker <= 3 ms). Afterwards
every event must have reached the receiver (deduplicated by id) and every delivery must be
`delivered`. `--production` runs with DEBUG off, as `make bench` does (no query log).

    .venv/bin/python bench/webhooks/run.py [--pool threads --concurrency 8] [--events 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench import harness  # noqa: E402 - needs the repository root on the path

DATABASE = "delivery_bench_webhooks"
REDIS_URL = os.environ.get("BENCH_WEBHOOKS_REDIS_URL", "redis://127.0.0.1:6379/10")
# Read before Django starts: it chooses the settings.
PRODUCTION = "--production" in sys.argv
ENV = (
    harness.production_env(DATABASE, 0, REDIS_URL, LOG_LEVEL="WARNING")
    if PRODUCTION
    else harness.bench_env(DATABASE, 0, REDIS_URL=REDIS_URL, LOG_LEVEL="WARNING")
)
os.environ.update(ENV)
os.environ["DJANGO_SETTINGS_MODULE"] = "delivery.settings"

import django  # noqa: E402 - configured from the benchmark's environment above

django.setup()

import redis  # noqa: E402
from django.db import connection, transaction  # noqa: E402

from bench import cpu  # noqa: E402
from bench.webhooks import noop  # noqa: E402
from tenants.services import api_key_create, organization_create  # noqa: E402
from webhooks import events as webhook_events  # noqa: E402
from webhooks.models import Delivery, DeliveryStatus  # noqa: E402

# ----- the receiver (its own process: bench/webhooks/receiver.py) -----


class Receiver:
    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("receiver.py"))],
            stdout=subprocess.PIPE,
            text=True,
        )
        self.port = int(self.process.stdout.readline())
        self.url = f"http://127.0.0.1:{self.port}"
        self.expected = 0  # unique events the benchmark has committed so far

    def _get(self, path: str) -> dict:
        # Our own receiver on loopback, http only.
        with urllib.request.urlopen(f"{self.url}{path}", timeout=30) as response:  # noqa: S310
            return json.load(response)

    def count(self) -> dict:
        return self._get("/count")

    def wait_for_unique(self, total: int, timeout: float = 600) -> None:
        deadline = time.monotonic() + timeout
        while self.count()["unique"] < total:
            if time.monotonic() > deadline:
                raise RuntimeError(f"only {self.count()['unique']}/{total} events arrived")
            time.sleep(0.05)

    def arrivals(self) -> dict[str, float]:
        return self._get("/arrivals")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


# ----- the service's side: Celery worker and beat as in docker-compose -----


def start_celery(env: dict, pool: str, concurrency: int) -> list[subprocess.Popen]:
    (ROOT / "var").mkdir(exist_ok=True)
    log = open(ROOT / "var" / "bench-webhooks-celery.log", "ab")  # noqa: SIM115
    worker = harness.worker_command(
        "-I",
        "bench.webhooks.noop",
        "--without-gossip",
        "--without-mingle",
        pool=pool,
        concurrency=concurrency,
    )
    beat = harness.beat_command(ROOT / "var" / "bench-webhooks-beat")
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
    event = webhook_events.event_emit(
        organization_id=organization.id,
        family="partner",
        event="order.created",
        platform="partner_a",
        payload={"id": f"bench-{n}", "status": "pending", "externalRef": f"BENCH-{n}"},
    )
    return event.event_id


def _result(receiver: Receiver, committed_at: dict[str, float], first_commit: float) -> Result:
    receiver.expected += len(committed_at)
    receiver.wait_for_unique(receiver.expected)
    arrivals = receiver.arrivals()
    last = max(arrivals[event_id] for event_id in committed_at)
    delays = [(arrivals[e] - t) * 1000 for e, t in committed_at.items()]
    return Result(len(committed_at) / (last - first_commit), delays)


def run_burst(organization, receiver: Receiver, count: int, offset: int) -> Result:
    stamp: dict[str, float] = {}
    with transaction.atomic():
        # Registered before the emitter's callbacks, so it runs first, right after COMMIT.
        transaction.on_commit(lambda: stamp.setdefault("at", time.time()))
        ids = [_emit(organization, n) for n in range(offset, offset + count)]
    return _result(receiver, dict.fromkeys(ids, stamp["at"]), stamp["at"])


def run_stream(organization, receiver: Receiver, count: int, offset: int, rate: float = 0):
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
    return _result(receiver, committed_at, min(committed_at.values()))


# ----- main -----


def cpu_groups(processes: list[subprocess.Popen]) -> cpu.ProcessGroups:
    def own_backend() -> list[int]:
        # The benchmark's own connection (the events' INSERTs) is not the service's.
        return [connection.connection.info.backend_pid] if connection.connection else []

    return cpu.service_groups(
        web=[],
        worker=[process.pid for process in processes],
        database=DATABASE,
        redis_url=REDIS_URL,
        exclude_backends=own_backend,
    )


def delivered_rows_written(organization, timeout: float = 60) -> None:
    """Every delivery recorded (the receiver may see a POST before its row is written)."""
    deadline = time.monotonic() + timeout
    pending = Delivery.objects.filter(organization=organization, status=DeliveryStatus.PENDING)
    while pending.exists() and time.monotonic() < deadline:
        time.sleep(0.02)


def run_rounds(
    args, organization, receiver: Receiver, groups: cpu.ProcessGroups
) -> tuple[dict[str, list[Result]], dict[str, list[dict[str, float]]]]:
    run_noop(50)  # warm-up: the worker is up and connected
    results: dict[str, list[Result]] = {"noop": [], "burst": [], "stream": [], "paced": []}
    cpu_rounds: dict[str, list[dict[str, float]]] = {name: [] for name in results}

    def measured(name: str, run, count: int) -> None:
        before = groups.snapshot()
        results[name].append(run())
        if name != "noop":
            delivered_rows_written(organization)
        cpu_rounds[name].append(cpu.per_operation(groups.snapshot() - before, count))

    offset = 0
    for round_number in range(1, args.rounds + 1):
        measured("noop", lambda: run_noop(args.events), args.events)
        measured(
            "burst",
            lambda offset=offset: run_burst(organization, receiver, args.events, offset),
            args.events,
        )
        offset += args.events
        measured(
            "stream",
            lambda offset=offset: run_stream(organization, receiver, args.events, offset),
            args.events,
        )
        offset += args.events
        measured(
            "paced",
            lambda offset=offset: run_stream(
                organization, receiver, args.paced_events, offset, args.paced_rate
            ),
            args.paced_events,
        )
        offset += args.paced_events
        print(
            f"round {round_number}: "
            + ", ".join(
                f"{k} {v[-1].events_per_second:.0f}/s ({cpu_rounds[k][-1]['worker']:.2f} ms)"
                for k, v in results.items()
            ),
            flush=True,
        )
    return results, cpu_rounds


def report(
    args,
    results: dict[str, list[Result]],
    cpu_rounds: dict[str, list[dict[str, float]]],
    receiver: Receiver,
    organization,
) -> None:
    time.sleep(1)
    deliveries = Delivery.objects.filter(organization=organization)
    not_delivered = deliveries.exclude(status=DeliveryStatus.DELIVERED).count()
    retried = deliveries.filter(attempts__gt=1).count()
    counts = receiver.count()
    noop_rate = statistics.median(r.events_per_second for r in results["noop"])
    print()
    settings = "DEBUG off (as make bench)" if PRODUCTION else "DEBUG on"
    print(
        f"Worker: --pool={args.pool} --concurrency={args.concurrency}, {settings}; "
        "2 cores shared by all."
    )
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
    print()
    print("CPU per event (no-op: per task), ms, medians over the rounds:")
    print()
    print("| scenario | worker | pg | redis (shared server) |")
    print("|---|---:|---:|---:|")
    for name, rounds in cpu_rounds.items():
        worker, pg, redis_ms = (
            statistics.median(r[group] for r in rounds) for group in ("worker", "pg", "redis")
        )
        print(f"| {name} | {worker:.2f} | {pg:.2f} | {redis_ms:.2f} |")
    print()
    print(
        f"Invariants: {counts['unique']}/{receiver.expected} events arrived, "
        f"{counts['requests'] - counts['unique']} duplicate request(s), "
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
    parser.add_argument("--production", action="store_true", help="DEBUG off, as make bench")
    args = parser.parse_args()

    harness.fresh_database(ENV, DATABASE)
    redis.Redis.from_url(REDIS_URL).flushdb()
    receiver = Receiver()
    organization = organization_create(name="Webhook bench")
    api_key_create(
        organization_id=organization.id,
        name="bench",
        platform="partner_a",
        webhook_url=f"{receiver.url}/hook",
    )
    processes = start_celery(ENV, args.pool, args.concurrency)
    try:
        results, cpu_rounds = run_rounds(args, organization, receiver, cpu_groups(processes))
        report(args, results, cpu_rounds, receiver, organization)
    finally:
        stop(processes)
        receiver.stop()


if __name__ == "__main__":
    main()
