"""A year of history, measured: `make bench-history` (docs/performance.md "History").

    .venv/bin/python bench/history.py                 # the full year (5 M orders, ...), 3 rounds
    .venv/bin/python bench/history.py --scale 0.01    # a hundredth of it, for a quick look
    .venv/bin/python bench/history.py --scale 0.1 --quick

1. Starts a PostgreSQL cluster of its own (bench/throwaway.py: a temporary directory, a free
   port, tuned like a real server of this machine: shared_buffers 1 GB, fsync on,
   pg_stat_statements loaded) and a Redis of its own on a free port: the shared 5432 and 6379
   are never touched.
2. Runs the `make bench` scenarios (bench/run.py `measure`, gunicorn on a free port) twice, in
   the same cluster: on `history_empty` (the benchmark's own data only) and on
   `history_loaded`, where bench/history_load.py first loads a year of a busy organization into
   the benchmark's tenants (set-based SQL), then VACUUM ANALYZE. Each run is a child process
   (Django is set up once per process, for one database).
   After those scenarios, on each database: the courier rows (bench/courier.py, its own
   organization) and the dispatch rows (bench/dispatch_service.py: a plan of 1,000 orders and its
   commit), each in a child that measures on the database as it is.
3. After the warm-up of each run, pg_stat_statements is reset for its database; after the
   rounds, its top statements are kept. On the loaded database, the hot statements are
   explained (bench/explain: EXPLAIN (ANALYZE, BUFFERS)) into bench/results/history-plans.txt.
4. Writes bench/results/history.md: per scenario the all-in CPU per operation on both databases
   and their ratio (goal <= 1.15), the PostgreSQL CPU per webhook delivery (goal <= 1 ms), the
   load time, the database sizes, and the statements whose cost grew with the history.

CI never runs it; nothing is left behind (the cluster's directory is removed, `--keep` keeps it
running for a look and prints how to reach it).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import psycopg  # noqa: E402 - after the path, as the rest

from bench import harness  # noqa: E402 - needs the repository root on the path
from bench.throwaway import (  # noqa: E402
    SERVER_SETTINGS,
    ThrowawayPostgres,
    ThrowawayRedis,
    free_port,
)

RESULTS = Path(__file__).resolve().parent / "results"
KINDS = ("empty", "loaded")
RATIO_GOAL = 1.15
WEBHOOK_PG_GOAL_MS = 1.0
#: the scenarios of the goal (issue 29): the hot paths, not the reference endpoints
HOT = (
    "authenticated hello",
    "read partner order",
    "create partner order",
    "bulk availability 14 days",
    "resolve-zone 1,000 zones",
    "resolve-zone 1 zone",
    "ERP booking 50 slots",
    "ERP booking hot slot",
    "webhook delivery",
    "courier event delivered with signature",
    "20 location points in one call",
    "dispatch: commit of 1,000 orders, CPU per order up to its order.assigned",
    "dispatch: plan of 1,000 orders, reading + matrix + writing (ms, not CPU)",
)
TOP_STATEMENTS = 25
#: the retention drain before the loaded rounds: rows per batch (no request waits on them
#: there) and the most seconds per task
RETENTION_DRAIN_BATCH = 10_000
RETENTION_DRAIN_SECONDS = 3600
STATEMENT_COLUMNS = ("query", "calls", "total_ms", "mean_ms", "rows", "hit", "read")


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f}, {five:.2f}, {fifteen:.2f}"


# ----- the child: one measured run on one database -----


def child(args) -> None:
    """One bench/run.py measurement on BENCH_DATABASE_URL (the loaded one with the year loaded
    first); its figures as JSON to `args.out`."""
    # bench.run first: importing it configures Django from the BENCH_* environment.
    bench_run = importlib.import_module("bench.run")
    from django.db import connection  # noqa: PLC0415 - needs Django set up
    from django.test import override_settings  # noqa: PLC0415

    from bench import history_load, retention  # noqa: PLC0415

    info: dict = {"kind": args.child, "load average at start": load_average()}

    def sql(statement: str, params=None):
        with connection.cursor() as cursor:
            cursor.execute(statement, params)
            return cursor.fetchall() if cursor.description else None

    def prepare(data) -> None:
        sql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        if args.child == "loaded":
            print(f"loading {args.scale:g} of a year", flush=True)
            loaded = history_load.load(args.scale)
            data.slots.existing_orders += loaded.erp_orders
            info["rows"] = loaded.rows
            info["load seconds"] = loaded.seconds
            # Every retention task run to the end of its backlog (the year's deliveries, events
            # and keys past their retention, the expired holds, ...): a service in its second
            # year has long removed what is due, so the rounds see the steady state retention
            # keeps, and no task works through a year's backlog beside them.
            info["retention"] = {}
            with override_settings(RETENTION_BATCH_SIZE=RETENTION_DRAIN_BATCH):
                for task, service in retention.services().items():
                    started = time.monotonic()
                    removed, along, finished = retention.until_done(
                        service, time.monotonic() + RETENTION_DRAIN_SECONDS
                    )
                    info["retention"][task] = [removed, along, finished,
                                               time.monotonic() - started]  # fmt: skip
                    print(f"  retention {task}: {removed:,} removed (+{along:,} along) in "
                          f"{time.monotonic() - started:.0f} s", flush=True)  # fmt: skip
        started = time.monotonic()
        sql("VACUUM ANALYZE")
        info["vacuum analyze seconds"] = time.monotonic() - started
        info["database size"] = sql("SELECT pg_database_size(current_database())")[0][0]
        info["largest tables"] = sql(
            "SELECT relname, pg_total_relation_size(oid), pg_relation_size(oid), reltuples::bigint"
            " FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace"
            " ORDER BY 2 DESC LIMIT 12"
        )

    def before_rounds() -> None:
        sql(
            "SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database"
            " WHERE datname = current_database()), 0)"
        )

    def after_rounds() -> None:
        info["statements"] = [
            dict(zip(STATEMENT_COLUMNS, row, strict=True))
            for row in sql(
                "SELECT query, calls, total_exec_time, mean_exec_time, rows, shared_blks_hit,"
                " shared_blks_read FROM pg_stat_statements"
                " WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
                " ORDER BY total_exec_time DESC LIMIT 300"
            )
        ]

    run = bench_run.measure(
        rounds=args.rounds,
        seconds=args.seconds,
        events=args.events,
        paced_events=args.paced_events,
        prepare=prepare,
        before_rounds=before_rounds,
        after_rounds=after_rounds,
    )
    info["cpu"] = run.cpu_use.medians()
    info["wrk"] = {
        name: {"rps": m.requests_per_second, "p50": m.p50_ms, "p99": m.p99_ms,
               "errors": m.non2xx + m.socket_errors}
        for name, m in run.medians.items()
    }  # fmt: skip
    info["hooks"] = run.hooks
    info["checks"] = run.checks
    info["load average at end"] = load_average()
    Path(args.out).write_text(json.dumps(info, default=str))
    if args.child == "loaded" and args.plans:
        from bench.explain import run as explain  # noqa: PLC0415 - needs Django set up

        print("explaining the hot statements", flush=True)
        try:
            with open(args.plans, "w") as out:
                explain.explain_all(out)
        except Exception as exc:
            print(f"explaining failed: {exc!r}", flush=True)


# ----- the parent: the cluster, both runs, the report -----


def run_child(kind: str, args, postgres: ThrowawayPostgres, redis_url: str, out: Path) -> dict:
    env = {
        **os.environ,
        "BENCH_DATABASE_URL": postgres.url(f"history_{kind}"),
        "BENCH_REDIS_URL": redis_url,
        "BENCH_PORT": str(free_port()),
    }
    command = [
        sys.executable, __file__, "--child", kind, "--out", str(out),
        "--scale", str(args.scale), "--rounds", str(args.rounds),
        "--seconds", str(args.seconds), "--events", str(args.events),
        "--paced-events", str(args.paced_events),
    ]  # fmt: skip
    if kind == "loaded":
        command += ["--plans", str(RESULTS / "history-plans.txt")]
    print(f"== {kind} database ==", flush=True)
    subprocess.run(command, cwd=ROOT, env=env, check=True, timeout=4 * 3600)
    return json.loads(out.read_text())


def _normalized(query: str) -> str:
    return " ".join(query.split())


def _blocks(statement: dict) -> str:
    """Shared buffers a call touched (of which read from outside shared_buffers)."""
    calls = max(statement["calls"], 1)
    hit, read = statement["hit"] / calls, statement["read"] / calls
    return f"{hit + read:.1f} ({read:.1f})"


def statements_table(empty: list[dict], loaded: list[dict], top: int = TOP_STATEMENTS) -> str:
    """The statements of the loaded run, by total time, beside the same statement's figures on
    the empty database (matched by text: query ids differ between databases)."""
    before = {_normalized(s["query"]): s for s in empty}
    lines = [
        "| # | statement | calls | total ms | mean ms | blocks/call (read) | empty: mean ms | "
        "empty: blocks/call (read) | mean ratio |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for number, s in enumerate(loaded[:top], start=1):
        query = _normalized(s["query"])
        blocks = _blocks(s)
        other = before.get(query)
        if other:
            ratio = s["mean_ms"] / other["mean_ms"] if other["mean_ms"] else float("nan")
            tail = f"{other['mean_ms']:.3f} | {_blocks(other)} | {ratio:.2f}"
        else:
            tail = "- | - | -"
        shown = query if len(query) <= 220 else query[:217] + "..."
        shown = shown.replace("|", "\\|")
        lines.append(
            f"| {number} | `{shown}` | {s['calls']} | {s['total_ms']:.0f} | {s['mean_ms']:.3f} | "
            f"{blocks} | {tail} |"
        )
    return "\n".join(lines)


#: the tables the courier rows update all day (ETAs, moves): their share of heap-only updates
HOT_TABLES = ("integrations_order", "dispatch_planstop")


def hot_updates(empty: dict, loaded: dict, name: str) -> str:
    """How many of a child's row updates were heap-only (HOT) on each database: an update that
    is not writes a new entry in every index of its table."""
    lines = []
    for kind, figures in (("empty", empty), ("loaded", loaded)):
        for table, updated, hot in figures.get("child statements", {}).get(f"{name} updates", []):
            share = f"{100 * hot / updated:.0f} %" if updated else "-"
            lines.append(f"- {kind}: `{table}` {updated} rows updated, {hot} heap-only ({share})")
    return (
        ("\nUpdates, and how many were heap-only:\n\n" + "\n".join(lines) + "\n") if lines else ""
    )


def child_statements(empty: dict, loaded: dict) -> str:
    """The courier and dispatch children's statements, as the run's above (older figures have
    none)."""
    sections = []
    for name, what in (
        ("courier", "the courier rows (bench/courier.py: its seeding, warm-up and rounds)"),
        ("dispatch", "the dispatch rows (bench/dispatch_service.py: seeding, plans, commit)"),
    ):
        before = empty.get("child statements", {}).get(name)
        after = loaded.get("child statements", {}).get(name)
        if before is None or after is None:
            continue
        sections.append(
            f"\n### Statements of {what}\n\n{statements_table(before, after, top=15)}\n"
            + hot_updates(empty, loaded, name)
        )
    return "".join(sections)


def report(args, empty: dict, loaded: dict) -> str:
    run = loaded["run"]
    lines = [
        "| scenario | empty: all-in ms/op | loaded: all-in ms/op | ratio | goal | result | "
        "empty: pg ms/op | loaded: pg ms/op | empty: req/s | loaded: req/s |",
        "|---|---:|---:|---:|---|---|---:|---:|---:|---:|",
    ]
    failures = []
    for name, row in loaded["cpu"].items():
        base = empty["cpu"].get(name)
        if base is None:
            continue
        ratio = row["all-in"] / base["all-in"] if base["all-in"] else float("nan")
        hot = name in HOT
        verdict = "-" if not hot else ("PASS" if ratio <= RATIO_GOAL else "FAIL")
        if verdict == "FAIL":
            failures.append(name)
        rps = (empty["wrk"].get(name, {}).get("rps"), loaded["wrk"].get(name, {}).get("rps"))
        rps_text = " | ".join(f"{r:.0f}" if r else "-" for r in rps)
        pg = " | ".join("-" if r["pg"] is None else f"{r['pg']:.2f}" for r in (base, row))
        lines.append(
            f"| {name} | {base['all-in']:.2f} | {row['all-in']:.2f} | {ratio:.2f} | "
            f"{f'<= {RATIO_GOAL}' if hot else 'reference'} | {verdict} | {pg} | {rps_text} |"
        )
    hook_pg = loaded["cpu"]["webhook delivery"]["pg"]
    hook_verdict = "PASS" if hook_pg <= WEBHOOK_PG_GOAL_MS else "FAIL"
    rows = loaded.get("rows", {})
    seconds = loaded.get("load seconds", {})
    load_total = sum(seconds.values())
    gib = 1024**3
    checks = [
        f"- {kind}: "
        + "; ".join(f"{'PASS' if p == 'ok' else 'FAIL'}: {n}" for n, p in run["checks"])
        for kind, run in (("empty", empty), ("loaded", loaded))
    ]
    if "retention" in loaded:
        cleanup = (
            "every retention task ran to the end of its backlog ("
            + ", ".join(
                f"{task}: {removed:,} removed{f' (+{along:,} events)' if along else ''} in "
                f"{seconds:.0f} s{'' if finished else ', not finished'}"
                for task, (removed, along, finished, seconds) in loaded["retention"].items()
            )
            + f"), VACUUM ANALYZE {loaded['vacuum analyze seconds']:.0f} s"
        )
    else:  # the figures of runs before the drain
        cleanup = (
            f"the service's hold cleanup (its first run) deleted "
            f"{loaded.get('expired holds deleted', 0):,} expired holds in "
            f"{loaded.get('holds cleanup seconds', 0):.1f} s, VACUUM ANALYZE "
            f"{loaded['vacuum analyze seconds']:.0f} s"
        )
    sizes = f"{loaded['database size'] / gib:.2f} GiB loaded, {empty['database size'] / gib:.2f}"
    tables = "\n".join(
        f"| {name} | {rows_:,} | {total / 2**20:,.0f} | {heap / 2**20:,.0f} |"
        for name, total, heap, rows_ in loaded["largest tables"]
    )
    return f"""# Benchmark: a year of history (`make bench-history`)

- date: {run["started"]}; commit {run["commit"]}; took {run["minutes"]:.1f} min
- command: `make bench-history ARGS='{run["command"]}'`
- scale: {run["scale"]:g} of a year (1 = 5 M orders, 5 M webhook events, 1 M Idempotency-Keys)
- method: bench/run.py's scenarios ({run["rounds"]} interleaved round(s) of {run["seconds"]} s,
  webhook burst of {run["events"]} events) on the empty database, then on the loaded one, same
  cluster (its own: shared_buffers 1 GB, fsync on, pg_stat_statements), same Redis, same code;
  CPU per operation all-in (web + worker + pg + redis, bench/cpu.py), medians of the rounds;
  then on each database, after those: bench/courier.py ({run["rounds"]} rounds of 240 `delivered`
  events with a signature and {run["seconds"]} s of 20-point location batches, its own
  organization's drivers on routes of today) and bench/dispatch_service.py (a plan of 1,000
  orders of one day, 50 drivers, then its commit until every `order.assigned` was received: CPU
  per order web + worker + pg; the plan's reading, matrix and writing steps in milliseconds of
  wall time, one run, so noisier than the rest)
- machine: {os.cpu_count()} cores ({platform.machine()}), shared with other engineers' work;
  load average (1, 5, 15 min) {empty["load average at start"]} at the start of the empty run,
  {loaded["load average at start"]} at the start of the loaded run, {loaded["load average at end"]}
  at its end

## CPU per operation: loaded vs empty

Goal: every hot scenario within {RATIO_GOAL}x its empty-database CPU per operation; webhook
delivery at most {WEBHOOK_PG_GOAL_MS:g} ms of PostgreSQL per delivery. Figures move 10-20 % between
runs on this shared machine: a ratio within that of 1 is noise.

{chr(10).join(lines)}

- webhook delivery, PostgreSQL per delivery: {empty["cpu"]["webhook delivery"]["pg"]:.2f} ms
  empty, **{hook_pg:.2f} ms loaded** (goal <= {WEBHOOK_PG_GOAL_MS:g} ms): {hook_verdict}
- hot scenarios over {RATIO_GOAL}x: {", ".join(failures) or "none"}

## What was loaded

- load: {load_total:.0f} s ({", ".join(f"{k} {v:.0f} s" for k, v in seconds.items())}); then
  {cleanup}
- rows: {", ".join(f"{k} {v:,}" for k, v in rows.items())}
- database size: {sizes} GiB empty

| largest tables (loaded) | rows | total MiB | heap MiB |
|---|---:|---:|---:|
{tables}

## Statements (pg_stat_statements, the loaded run's rounds, by total time)

Reset after each run's warm-up, read at the end of its rounds; the benchmark's own connection
(outbox polling, the webhook burst's INSERTs) is in it too. Total time includes lock waits (the
key row of a webhook destination, a hot slot's counter, the reference endpoints' row): compare
the mean time and the blocks per call of a statement on both databases. Matched to the empty
run's statement of the same text.

{statements_table(empty["statements"], loaded["statements"])}
{child_statements(empty, loaded)}

## Invariants after the load

{chr(10).join(checks)}
"""


def run_courier_and_dispatch(
    kind: str, args, postgres: ThrowawayPostgres, redis_url: str
) -> tuple[dict, dict]:
    """The courier and dispatch rows on the same database, after the scenarios: bench/courier.py
    (its own organization, drivers on routes of today) and bench/dispatch_service.py (a plan of
    1,000 orders, then its commit), each a child measuring on the database as it is. Answers
    rows in the shape of the run child's `cpu` (milliseconds, `all-in` and `pg`), and each
    child's statements (pg_stat_statements, as the run child keeps them)."""
    env = {
        **os.environ,
        "BENCH_REDIS_URL": redis_url,
        "BENCH_COURIER_DATABASE_URL": postgres.url(f"history_{kind}"),
        "BENCH_COURIER_PORT": str(free_port()),
        "BENCH_DISPATCH_DATABASE_URL": postgres.url(f"history_{kind}"),
        "BENCH_DISPATCH_PORT": str(free_port()),
        "BENCH_DISPATCH_RECEIVER_PORT": str(free_port()),
    }
    courier_out = ROOT / "var" / f"history-courier-{kind}.json"
    dispatch_out = ROOT / "var" / f"history-dispatch-{kind}.json"
    catalog = psycopg.connect(postgres.url(f"history_{kind}"), autocommit=True)
    statements: dict[str, list] = {}

    def updates() -> dict[str, tuple[int, int]]:
        # per table: rows updated, and of those heap-only (HOT: no index entry written)
        return {
            table: (updated, hot)
            for table, updated, hot in catalog.execute(
                "SELECT relname, n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables"
                " WHERE relname = ANY(%s)",
                [list(HOT_TABLES)],
            ).fetchall()
        }

    def measured(name: str, command: list[str]) -> None:
        # pg_stat_statements of this child alone: its seeding, load and warm-up included
        catalog.execute(
            "SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database"
            " WHERE datname = current_database()), 0)"
        )
        before = updates()
        subprocess.run(command, cwd=ROOT, env=env, check=True, timeout=3600)
        after = updates()
        statements[f"{name} updates"] = [
            [table, after[table][0] - before[table][0], after[table][1] - before[table][1]]
            for table in HOT_TABLES
            if table in after and table in before
        ]
        statements[name] = [
            dict(zip(STATEMENT_COLUMNS, row, strict=True))
            for row in catalog.execute(
                "SELECT query, calls, total_exec_time, mean_exec_time, rows, shared_blks_hit,"
                " shared_blks_read FROM pg_stat_statements"
                " WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
                " ORDER BY total_exec_time DESC LIMIT 300"
            ).fetchall()
        ]

    print(f"== {kind} database: the courier API ==", flush=True)
    measured(
        "courier",
        [sys.executable, "bench/courier.py", "--rounds", str(args.rounds),
         "--seconds", str(args.seconds), "--json", str(courier_out)],
    )  # fmt: skip
    print(f"== {kind} database: a dispatch plan and its commit ==", flush=True)
    measured("dispatch", [sys.executable, "bench/dispatch_service.py", "--json", str(dispatch_out)])
    catalog.close()
    rows = {}
    for name, rounds in json.loads(courier_out.read_text())["rounds"].items():
        if name.startswith("dbread"):
            continue
        rows[name] = {k: statistics.median(r[k] for r in rounds) for k in ("all-in", "pg")}
    plan = json.loads(dispatch_out.read_text())
    spent = plan["webhooks_cpu_ms"]
    per_order = max(plan["routed"], 1)
    rows["dispatch: commit of 1,000 orders, CPU per order up to its order.assigned"] = {
        "all-in": sum(spent[group] for group in ("web", "worker", "pg")) / per_order,
        "pg": spent["pg"] / per_order,
    }
    steps = plan["timings"]
    rows["dispatch: plan of 1,000 orders, reading + matrix + writing (ms, not CPU)"] = {
        "all-in": steps["reading"] + steps["matrix"] + steps["writing"],
        "pg": None,
    }
    return rows, statements


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of a year to load")
    parser.add_argument("--quick", action="store_true", help="1 round of 3 s, small bursts")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--seconds", type=int, default=None)
    parser.add_argument("--events", type=int, default=None)
    parser.add_argument("--paced-events", type=int, default=None)
    parser.add_argument("--keep", action="store_true", help="leave the cluster running")
    parser.add_argument("--only", choices=KINDS, help="run one database (to debug)")
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="write history.md again from the last run's figures (var/history-*.json)",
    )
    parser.add_argument("--child", choices=KINDS, help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--plans", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.rounds = args.rounds or (1 if args.quick else 3)
    args.seconds = args.seconds or (3 if args.quick else 8)
    args.events = args.events or (300 if args.quick else 1500)
    args.paced_events = args.paced_events or (100 if args.quick else 300)
    return args


def main() -> int:
    args = arguments()
    if args.child:
        child(args)
        return 0

    figures = {kind: ROOT / "var" / f"history-{kind}.json" for kind in KINDS}
    if args.report_only:
        results = {kind: json.loads(path.read_text()) for kind, path in figures.items()}
        document = report(args, results["empty"], results["loaded"])
        (RESULTS / "history.md").write_text(document)
        print(document)
        return 0
    started = time.monotonic()
    started_at = f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
    commit = harness.git_commit()
    (ROOT / "var").mkdir(exist_ok=True)
    RESULTS.mkdir(exist_ok=True)
    postgres = ThrowawayPostgres(
        directory=Path(tempfile.mkdtemp(prefix="bench-history-pg-")),
        settings=dict(SERVER_SETTINGS),
    )
    redis_server = ThrowawayRedis()
    print(f"uptime: load average {load_average()}", flush=True)
    print(f"PostgreSQL on port {postgres.port} ({postgres.directory})", flush=True)
    postgres.create()
    redis_server.start()
    results: dict[str, dict] = {}
    try:
        for number, kind in enumerate(KINDS):
            if args.only and kind != args.only:
                continue
            redis_url = f"redis://127.0.0.1:{redis_server.port}/{number}"
            results[kind] = run_child(kind, args, postgres, redis_url, figures[kind])
            rows, statements = run_courier_and_dispatch(kind, args, postgres, redis_url)
            results[kind]["cpu"].update(rows)
            results[kind]["child statements"] = statements
            results[kind]["run"] = {
                "commit": commit,
                "command": shlex.join(sys.argv[1:]),
                "scale": args.scale,
                "rounds": args.rounds,
                "seconds": args.seconds,
                "events": args.events,
                "started": started_at,
                "minutes": (time.monotonic() - started) / 60,
            }
            figures[kind].write_text(json.dumps(results[kind], default=str))
    finally:
        redis_server.stop()
        if args.keep:
            print(f"kept: psql -h 127.0.0.1 -p {postgres.port} -U postgres history_loaded")
        else:
            postgres.destroy()
    if args.only:
        print(json.dumps({k: v for k, v in results[args.only].items() if k != "statements"}))
        return 0
    document = report(args, results["empty"], results["loaded"])
    (RESULTS / "history.md").write_text(document)
    print(document)
    return 0


if __name__ == "__main__":
    sys.exit(main())
