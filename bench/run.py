"""The whole benchmark in one run (docs/performance.md): `make bench`.

    .venv/bin/python bench/run.py            # ~12-15 minutes: 3 interleaved rounds of 8 s each
    .venv/bin/python bench/run.py --quick    # smoke run: 1 round of 3 s, fewer webhook events

1. A fresh database `bench_main` (Redis db 9) loaded with realistic data, reusing the seeding of
   the per-feature benchmarks: `bench/slots` (a slot zone, 5 templates a day for a week,
   10,000 ERP orders booked over the next 14 days), `bench/partner` (a partner organization
   with 20,000 orders and 90 delivery windows), `bench/resolve_zone` (organizations with
   1,000 zones and with 1 zone), plus a webhook organization; partner and ERP keys send their
   webhooks to a local receiver.
2. The service as in production (gunicorn `-c gunicorn.conf.py` with docker-compose's 4 gthread
   workers, DEBUG off, persistent connections, Celery worker `--pool=threads --concurrency=8`
   and beat), `RATELIMIT_ENABLE=false`, `BENCH_ENDPOINTS=true`.
3. wrk pinned to core 1 on every scenario, interleaved, `--rounds` times; medians reported as
   ratios to the reference endpoints of the same run (absolute figures move 25-40 % between
   runs here). Webhook deliveries are measured with bench/webhooks (burst rate vs a no-op
   Celery task, commit → first attempt at a steady rate).
4. The invariants, checked after the load (exit status 1 if one fails): no slot or delivery
   window over capacity, counters equal to their active bookings, one order per
   Idempotency-Key, every webhook event received (deduplicated by id) once the outbox drained.
5. CPU per operation (bench/cpu.py): utime + stime of gunicorn, the Celery worker and beat, the
   PostgreSQL backends of `bench_main`, the shared PostgreSQL background processes and Redis,
   read from /proc before and after each measured run (after the outbox drained where the
   operations emit webhooks), divided by the operations completed.

6. Noisy neighbours (bench/noisy.py, its own database and gunicorn): a quiet tenant's reads
   alone and while another tenant floods its management API and its API key.
7. The courier API (bench/courier.py, its own database and service): all-in CPU per `delivered`
   event with a signature, and per batch of 20 location points (ETAs recomputed).
8. Maintenance under load (bench/maintenance.py, its own database and service): partner order
   reads and creates alone, while an index is built concurrently and while retention runs.

The tables are printed and written to bench/results/latest.md; `--only noisy` runs step 6 alone,
`--only courier` step 7, `--only maintenance` step 8, and replaces only its section.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import harness  # noqa: E402 - needs the repository root on the path

#: Where it runs: the shared cluster's `bench_main`, Redis db 9, port 8021; bench/history.py
#: points it at a cluster, a Redis and a port of its own (BENCH_DATABASE_URL, BENCH_REDIS_URL,
#: BENCH_PORT).
DATABASE_URL = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/bench_main")
DATABASE = urlsplit(DATABASE_URL).path.lstrip("/")
PORT = int(os.environ.get("BENCH_PORT", "8021"))
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/9")
WORKERS = "4"  # docker-compose.yml `web`: WEB_CONCURRENCY=4 (gunicorn.conf.py's default)
ENV = harness.production_env(
    DATABASE, PORT, REDIS_URL, database_url=DATABASE_URL, WEB_CONCURRENCY=WORKERS
)
harness.setup_django(ENV)

import redis  # noqa: E402 - needs Django set up
from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402

from bench import cpu, load  # noqa: E402
from bench.faults_results import HEADING as FAULTS_HEADING  # noqa: E402
from bench.load import FULL_SLOT_CAPACITY, READS, WRITES, Scenarios  # noqa: E402
from tenants.services import api_key_create, organization_create  # noqa: E402
from webhooks.models import Delivery, DeliveryStatus  # noqa: E402

BASE = f"http://127.0.0.1:{PORT}"
RESULTS = Path(__file__).resolve().parent / "results"


# ----- report -----

TARGETS = {
    # scenario: (reference, target ratio)
    "authenticated hello": ("DRF hello", 0.85),
    "read partner order": ("dbread", 0.8),
    "create partner order": ("dbwrite", 0.5),
    "bulk availability 14 days": ("dbread", 0.5),
    "resolve-zone 1,000 zones": ("resolve-zone 1 zone", 0.5),
    "ERP booking 50 slots": ("dbwrite", 0.5),
    "ERP booking hot slot": ("bookhot", 0.7),
}

LABELS = {
    "create partner order": "create partner order (Idempotency-Key, window)",
    "bulk availability 14 days": "bulk availability, 14 days",
}


def render(medians: dict, hooks: dict, full: tuple[harness.Measurement, int]) -> tuple[str, bool]:
    ceiling = medians["authenticated hello"].requests_per_second
    lines = [
        "| scenario | req/s | p50 ms | p99 ms | errors | share of auth. hello | "
        "reference | ratio | target | result |",
        "|---|---:|---:|---:|---:|---:|---|---:|---:|---|",
    ]
    all_pass = True
    for name, m in medians.items():
        errors = m.non2xx + m.socket_errors
        reference, target = TARGETS.get(name, ("-", None))
        if target is None:
            ratio_text, target_text, verdict = "-", "-", "reference"
        else:
            ratio = m.requests_per_second / medians[reference].requests_per_second
            passed = ratio >= target and errors == 0
            all_pass &= passed
            ratio_text, target_text = f"{ratio:.2f}", f">= {target}"
            verdict = "PASS" if passed else ("FAIL (errors)" if ratio >= target else "FAIL")
        lines.append(
            f"| {LABELS.get(name, name)} | {m.requests_per_second:.0f} | {m.p50_ms:.1f} | "
            f"{m.p99_ms:.1f} | {errors} | {m.requests_per_second / ceiling:.2f} | "
            f"{reference} | {ratio_text} | {target_text} | {verdict} |"
        )
        if name == "ERP booking hot slot":
            until_full, slot_full = full
            errors = until_full.non2xx + until_full.socket_errors - slot_full
            lines.append(
                f"| ERP booking, hot slot of capacity {FULL_SLOT_CAPACITY} until full (one run) | "
                f"{until_full.requests_per_second:.0f} | {until_full.p50_ms:.1f} | "
                f"{until_full.p99_ms:.1f} | {errors} "
                f"(+{slot_full} expected 400 slot full) | "
                f"{until_full.requests_per_second / ceiling:.2f} | - | - | - | see invariants |"
            )
    noop_rate = hooks["noop"]
    ratio = hooks["burst"] / noop_rate
    passed = ratio >= 0.5 and hooks["p99_ms"] < 1000
    all_pass &= passed
    lines.append(
        f"| no-op Celery task (tasks/s) | {noop_rate:.0f} | - | - | 0 | - | - | - | - | reference |"
    )
    lines.append(
        f"| webhook deliveries/s; commit → first attempt | {hooks['burst']:.0f} | "
        f"{hooks['p50_ms']:.0f} | {hooks['p99_ms']:.0f} | {hooks['not_delivered']} | - | "
        f"no-op task/s | {ratio:.2f} | >= 0.5, p99 < 1000 ms | {'PASS' if passed else 'FAIL'} |"
    )
    return "\n".join(lines), all_pass


# ----- CPU per operation -----

# scenario: (goal text, the all-in or worker figure it tests, its bound in ms per operation)
CPU_GOALS = {
    "create partner order": ("all-in <= 12 ms", "all-in", 12.0),
    "ERP booking 50 slots": ("all-in <= 12 ms", "all-in", 12.0),
    "ERP booking hot slot": ("all-in <= 12 ms", "all-in", 12.0),
    "webhook delivery": ("worker <= 3 ms", "worker", 3.0),
}
READ_CPU_GOAL = ("read partner order", "dbread", 1.3)  # all-in within 1.3x of dbread's


class CpuPerOperation:
    """CPU seconds per process group around each measured run (bench/cpu.py), per operation."""

    def __init__(self, service: load.BenchService) -> None:
        def own_backend() -> list[int]:
            # The benchmark's own connection (outbox polling, the webhook burst's INSERTs) is
            # not the service's.
            return [connection.connection.info.backend_pid] if connection.connection else []

        self.groups = cpu.service_groups(
            web=[process.pid for process in service.web],
            worker=[process.pid for process in service.worker],
            database=DATABASE,
            redis_url=REDIS_URL,
            exclude_backends=own_backend,
            server=harness.server_dsn(ENV),
        )
        # scenario -> per round: ms of CPU per operation of each group, all-in, and ops
        self.rounds: dict[str, list[dict[str, float]]] = {}

    def measure(self, name: str, run):
        """Runs `run()` (which returns the measurement and how many operations completed) between
        two snapshots; returns the measurement."""
        before = self.groups.snapshot()
        measurement, operations = run()
        spent = self.groups.snapshot() - before
        per_operation = cpu.per_operation(spent, operations)
        per_operation["ops"] = operations
        self.rounds.setdefault(name, []).append(per_operation)
        return measurement

    def medians(self) -> dict[str, dict[str, float]]:
        """scenario -> group (and all-in, ops) -> median over the rounds."""
        return {
            name: {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
            for name, rounds in self.rounds.items()
        }

    def render(self) -> str:
        medians = self.medians()
        columns = (*cpu.GROUPS, "all-in")
        lines = [
            "| scenario | ops | "
            + " | ".join(f"{c} ms/op" for c in columns)
            + " | goal | result |",
            "|---|---:|" + "---:|" * len(columns) + "---|---|",
        ]
        read, reference, factor = READ_CPU_GOAL
        for name, row in medians.items():
            goal, verdict = "-", "reference" if name in ("dbread", "no-op Celery task") else "-"
            if name in CPU_GOALS:
                goal, column, bound = CPU_GOALS[name]
                verdict = "PASS" if row[column] <= bound else "FAIL"
            elif name == read and reference in medians:
                bound = factor * medians[reference]["all-in"]
                goal = f"all-in <= {factor} x dbread ({bound:.2f} ms)"
                ratio = row["all-in"] / medians[reference]["all-in"]
                verdict = f"{'PASS' if row['all-in'] <= bound else 'FAIL'} ({ratio:.2f} x)"
            figures = " | ".join(f"{row[c]:.2f}" for c in columns)
            lines.append(
                f"| {LABELS.get(name, name)} | {row['ops']:.0f} | {figures} | {goal} | {verdict} |"
            )
        return "\n".join(lines)


def completed(measurement: harness.Measurement) -> int:
    """Operations a wrk run completed: its 2xx answers."""
    return measurement.requests - measurement.non2xx


# ----- main -----


# ----- noisy neighbours (bench/noisy.py) -----

NOISY_HEADING = "## Noisy neighbours"


def noisy_section(rounds: int, seconds: int) -> str:
    """Runs bench/noisy.py (its own database, port and gunicorn) and returns its section."""
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "noisy.py"), "--rounds", str(rounds),
         "--seconds", str(seconds)],
        cwd=ROOT, check=True, timeout=1800,
    )  # fmt: skip
    return f"{NOISY_HEADING}\n\n" + (RESULTS / "noisy.md").read_text()


def with_noisy_section(document: str, section: str) -> str:
    """`document` with its noisy-neighbours section replaced by `section` (added at the end
    when it has none); the other sections are kept as they are."""
    return harness.section_replaced(document, NOISY_HEADING, section)


# ----- the courier API's CPU per operation (bench/courier.py) -----

COURIER_HEADING = "## Courier API (dispatch goals)"


def courier_section(rounds: int, seconds: int) -> str:
    """Runs bench/courier.py (its own database, port and service) and returns its section."""
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "courier.py"), "--rounds", str(rounds),
         "--seconds", str(seconds)],
        cwd=ROOT, check=True, timeout=1800,
    )  # fmt: skip
    return f"{COURIER_HEADING}\n\n" + (RESULTS / "courier.md").read_text()


# ----- maintenance under load (bench/maintenance.py) -----

MAINTENANCE_HEADING = "## Maintenance under load"


def maintenance_section(rounds: int, seconds: int) -> str:
    """Runs bench/maintenance.py (its own database, port and service) and returns its section."""
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "maintenance.py"), "--rounds", str(rounds),
         "--seconds", str(seconds)],
        cwd=ROOT, check=True, timeout=1800,
    )  # fmt: skip
    return f"{MAINTENANCE_HEADING}\n\n" + (RESULTS / "maintenance.md").read_text()


@dataclass
class Run:
    """What one measurement left: the wrk medians, the webhook figures, the hot slot booked
    until full, the CPU per operation and the invariants."""

    medians: dict[str, harness.Measurement]
    hooks: dict
    full: tuple[harness.Measurement, int]
    cpu_use: CpuPerOperation
    checks: list[tuple[str, str]]


def measure(  # noqa: PLR0915 - one run, told in order
    *,
    rounds: int,
    seconds: int,
    events: int,
    paced_events: int,
    prepare: Callable[[load.Data], None] | None = None,
    before_rounds: Callable[[], None] | None = None,
    after_rounds: Callable[[], None] | None = None,
) -> Run:
    """A fresh database with the benchmark's data, `prepare(data)` (bench/history.py loads a
    year of history there) before the service starts, the warm-up, `before_rounds()`, then
    `rounds` interleaved rounds of every scenario, `after_rounds()` and the invariants after
    the load."""
    (ROOT / "var").mkdir(exist_ok=True)
    RESULTS.mkdir(exist_ok=True)
    print(f"fresh database {DATABASE}, Redis {REDIS_URL}", flush=True)
    harness.fresh_database(ENV, DATABASE)
    redis.Redis.from_url(REDIS_URL).flushdb()
    load_receiver = load.webhooks_bench.Receiver()  # partner and ERP events of the HTTP load
    hook_receiver = load.webhooks_bench.Receiver()  # the webhook benchmark's own events
    data = load.Data(webhook_url=f"{load_receiver.url}/hook")
    hook_organization = organization_create(name="Bench webhooks", slug="bench-webhooks")
    api_key_create(
        organization_id=hook_organization.id,
        name="bench",
        platform="partner_a",
        webhook_url=f"{hook_receiver.url}/hook",
    )
    if prepare is not None:
        prepare(data)
    connection.close()

    scenarios = Scenarios(data, seconds, BASE)
    results: dict[str, list[harness.Measurement]] = {name: [] for name in Scenarios.NAMES}
    hooks: dict[str, list] = {"noop": [], "burst": [], "paced": []}
    service = load.BenchService(env=ENV, web_ports=[PORT])
    load_started = timezone.now()
    service.start()
    try:
        cpu_use = CpuPerOperation(service)
        print("warm-up", flush=True)
        for name in Scenarios.NAMES:  # every worker connects and fills its caches
            scenarios.run(name, seconds=2)
        load.outbox_drain(timeout=60)
        load.webhooks_bench.run_noop(50)
        if before_rounds is not None:
            before_rounds()
        offset = 0
        for round_number in range(1, rounds + 1):
            scenarios.round = round_number
            print(f"round {round_number}/{rounds}", flush=True)
            for name, (_, emits) in Scenarios.NAMES.items():

                def run(name=name, emits=emits):
                    m = scenarios.run(name)
                    # The events' deliveries are charged to the operations that emitted them,
                    # and the next scenario starts with an idle Celery worker.
                    left = load.outbox_drain(timeout=60) if emits else 0
                    if left:
                        print(f"  ({left} webhook deliveries still pending)", flush=True)
                    return m, completed(m)

                m = cpu_use.measure(name, run)
                results[name].append(m)
                print(
                    f"  {name:<28} {m.requests_per_second:7.0f} req/s  p50 {m.p50_ms:6.1f} ms"
                    f"  p99 {m.p99_ms:7.1f} ms  non-2xx {m.non2xx + m.socket_errors}  "
                    f"all-in CPU {cpu_use.rounds[name][-1]['all-in']:.2f} ms/op",
                    flush=True,
                )
            hooks["noop"].append(
                cpu_use.measure(
                    "no-op Celery task",
                    lambda: (load.webhooks_bench.run_noop(events), events),
                )
            )

            def burst(offset=offset):
                result = load.webhooks_bench.run_burst(
                    hook_organization, hook_receiver, events, offset
                )
                load.outbox_drain(timeout=60)  # every delivery's row written
                return result, events

            hooks["burst"].append(cpu_use.measure("webhook delivery", burst))
            offset += events
            hooks["paced"].append(
                load.webhooks_bench.run_stream(
                    hook_organization, hook_receiver, paced_events, offset, rate=100.0
                )
            )
            offset += paced_events
            print(
                f"  webhooks: no-op {hooks['noop'][-1].events_per_second:.0f}/s, deliveries "
                f"{hooks['burst'][-1].events_per_second:.0f}/s, first attempt p99 "
                f"{hooks['paced'][-1].p99_ms:.0f} ms; worker CPU per delivery "
                f"{cpu_use.rounds['webhook delivery'][-1]['worker']:.2f} ms",
                flush=True,
            )
        if after_rounds is not None:
            after_rounds()
        checks, full = load.after_the_load(
            data, scenarios, [load_receiver, hook_receiver], load_started
        )
    finally:
        service.stop()
        load_receiver.stop()
        hook_receiver.stop()

    medians = {name: harness.median_of(values) for name, values in results.items()}
    for name, median in medians.items():  # errors: the worst round's, so one bad round fails
        median.non2xx = max(m.non2xx for m in results[name])
        median.socket_errors = max(m.socket_errors for m in results[name])
    hook_summary = {
        "noop": statistics.median(r.events_per_second for r in hooks["noop"]),
        "burst": statistics.median(r.events_per_second for r in hooks["burst"]),
        "p50_ms": statistics.median(r.median_ms for r in hooks["paced"]),
        "p99_ms": statistics.median(r.p99_ms for r in hooks["paced"]),
        # The load's deliveries (a database with history holds ended ones of its own).
        "not_delivered": Delivery.objects.filter(created_at__gte=load_started)
        .exclude(status=DeliveryStatus.DELIVERED)
        .count(),
    }
    return Run(medians, hook_summary, full, cpu_use, checks)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: 1 round of 3 s")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--seconds", type=int, default=None)
    parser.add_argument("--events", type=int, default=None, help="webhook events per burst")
    parser.add_argument(
        "--only",
        choices=["noisy", "courier", "maintenance"],
        help="run one scenario alone and update its section",
    )
    args = parser.parse_args()
    rounds = args.rounds or (1 if args.quick else 3)
    seconds = args.seconds or (3 if args.quick else 8)
    if args.only:
        latest = RESULTS / "latest.md"
        heading, section = {
            "noisy": (NOISY_HEADING, noisy_section),
            "courier": (COURIER_HEADING, courier_section),
            "maintenance": (MAINTENANCE_HEADING, maintenance_section),
        }[args.only]
        document = harness.section_replaced(latest.read_text(), heading, section(rounds, seconds))
        latest.write_text(document)
        print(f"written to {latest} ({heading})")
        return 0
    events = args.events or (300 if args.quick else 1500)
    paced_events = 100 if args.quick else 300
    command = "make bench" + (f" ARGS='{shlex.join(sys.argv[1:])}'" if sys.argv[1:] else "")
    started = time.monotonic()
    commit = harness.git_commit()  # what runs: taken before the load (others may commit meanwhile)

    run = measure(rounds=rounds, seconds=seconds, events=events, paced_events=paced_events)
    table, all_pass = render(run.medians, run.hooks, run.full)
    cpu_table = run.cpu_use.render()
    invariant_lines = load.checks_text(run.checks)
    minutes = (time.monotonic() - started) / 60
    header = (
        f"- date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC\n"
        f"- commit: {commit}\n"
        f"- command: `{command}`\n"
        f"- machine: {os.cpu_count()} cores ({platform.machine()}), shared by gunicorn "
        f"({WORKERS} gthread workers x 32 threads), Celery (threads, 8), PostgreSQL, Redis "
        f"and wrk (pinned to core 1)\n"
        f"- method: {rounds} interleaved round(s) of {seconds} s per scenario, medians; wrk "
        f"-t1 -c{READS} on reads, -c{WRITES} on writes; webhook burst of {events} events, "
        f"first attempt measured on {paced_events} events at 100/s; took {minutes:.1f} min\n"
        f"- errors: non-2xx answers and socket errors of the worst round; on the slot booked "
        f"until full (capacity {FULL_SLOT_CAPACITY}), the 400 `Delivery slot is full` answers "
        f"are expected and counted apart\n"
        f"- noise: this machine's figures move 25-40 % between runs, and other engineers run "
        f"tests on it at the same time: compare the ratios (same run), not absolute figures\n"
    )
    cpu_header = (
        "CPU time per completed operation (2xx answer, webhook delivery or no-op task), medians "
        "over the rounds, read from /proc before and after each run (bench/cpu.py; "
        'docs/performance.md "CPU per operation"). web: gunicorn master and workers; worker: '
        "Celery worker and beat; pg: the PostgreSQL backends of the benchmark's database (not "
        "its own connection); pg-bg: the postmaster, checkpointer, background writer, "
        "walwriter and autovacuum, shared with every database of the cluster, so left out of "
        "all-in; redis: the Redis server. all-in = web + worker + pg + redis. Rows whose "
        "operations emit webhooks are read after the outbox drained, so their deliveries are "
        "in them. wrk and the webhook receiver are not counted."
    )
    # `make faults` keeps its figures in the same file (bench/faults_results.py): kept as they are.
    previous = (RESULTS / "latest.md").read_text() if (RESULTS / "latest.md").exists() else ""
    document = (
        "# Benchmark: latest run\n\n"
        f"{header}\n{table}\n\n## CPU per operation\n\n{cpu_header}\n\n{cpu_table}\n\n"
        f"## Invariants after the load\n\n{invariant_lines}\n"
    )
    (RESULTS / "latest.md").write_text(document)
    # After the main service stopped: the scenario starts its own (docs/faults.md).
    document = with_noisy_section(document, noisy_section(rounds, seconds))
    (RESULTS / "latest.md").write_text(document)
    document = harness.section_replaced(document, COURIER_HEADING, courier_section(rounds, seconds))
    (RESULTS / "latest.md").write_text(document)
    maintenance = maintenance_section(rounds, seconds)
    document = harness.section_replaced(document, MAINTENANCE_HEADING, maintenance)
    document = harness.section_kept(previous, document, FAULTS_HEADING)
    (RESULTS / "latest.md").write_text(document)
    print()
    print(header)
    print(table)
    print()
    print(cpu_table)
    print()
    print(invariant_lines)
    print(
        f"\ntargets: {'all PASS' if all_pass else 'some FAIL'}; written to bench/results/latest.md"
    )
    return 0 if all(problem == "ok" for _, problem in run.checks) else 1


if __name__ == "__main__":
    sys.exit(main())
