"""The write paths' CPU at several commits, on one machine in one sitting: `make bench-commits`.

    .venv/bin/python bench/commits.py e0f7b87 HEAD    # ~4 minutes per commit

A goal stated against "before this change" (issue 28: at most 1.15x the ratios of before) can
only be checked on the machine that measures the after: ratios to `dbwrite` move between
machines too (a request's fixed cost is a larger share on a slower core). So each commit is
cloned into a temporary directory (removed once measured), gets its own virtualenv
(scripts/bootstrap.sh dev), and runs, with its own benchmark code, the CPU table of `make
bench` for a few scenarios: DRF hello, dbread, dbwrite, create partner order and ERP booking of
50 slots, 2 interleaved rounds of 6 s, medians. Its own database (`bench_commits`), Redis db 12
and port 8041 keep it apart from `make bench`; run it with nothing else on the machine. The
table goes to bench/results/commits.md.
"""

from __future__ import annotations

import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAMES = ("DRF hello", "dbread", "dbwrite", "create partner order", "ERP booking 50 slots")
#: the scenarios divided by `dbwrite`, as in issue 28's goal
RATIOS = ("create partner order", "ERP booking 50 slots")
ROUNDS, SECONDS = 2, 6
MARKER = "COMMIT-CPU "


def inside() -> None:  # pragma: no cover - runs in a clone of another commit, with its code
    """The measurement, run from a clone's root with that commit's own bench/ modules."""
    os.environ.setdefault("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/bench_commits")
    os.environ.setdefault("BENCH_PORT", "8041")
    os.environ.setdefault("BENCH_REDIS_URL", "redis://127.0.0.1:6379/12")
    sys.path.insert(0, os.getcwd())
    sys.argv = sys.argv[:1]  # bench/run.py reads nothing, but keep its parser quiet
    import redis  # noqa: PLC0415

    full = importlib.import_module("bench.run")  # first: it sets Django up
    load = importlib.import_module("bench.load")

    full.harness.fresh_database(full.ENV, full.DATABASE)
    redis.Redis.from_url(full.REDIS_URL).flushdb()
    receiver = load.webhooks_bench.Receiver()
    data = load.Data(webhook_url=f"{receiver.url}/hook")
    full.connection.close()
    scenarios = load.Scenarios(data, SECONDS, f"http://127.0.0.1:{full.PORT}")
    service = load.BenchService(env=full.ENV, web_ports=[full.PORT])
    service.start()
    try:
        cpu = full.CpuPerOperation(service)
        for name in NAMES:  # warm-up: every worker connects and fills its caches
            scenarios.run(name, seconds=2)
        load.outbox_drain(timeout=60)
        for number in range(1, ROUNDS + 1):
            scenarios.round = number
            for name in NAMES:
                emits = full.Scenarios.NAMES[name][1]

                def run(name=name, emits=emits):
                    measurement = scenarios.run(name)
                    if emits:  # the deliveries are charged to the writes that emitted them
                        load.outbox_drain(timeout=60)
                    return measurement, full.completed(measurement)

                cpu.measure(name, run)
        # Not CpuPerOperation.medians(): older commits' bench/run.py does not have it.
        medians = {
            name: {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
            for name, rounds in cpu.rounds.items()
        }
        print(MARKER + json.dumps(medians), flush=True)
    finally:
        service.stop()
        receiver.stop()


def clone(revision: str, into: Path) -> tuple[str, Path]:
    """The full hash of `revision` and a clone of it checked out in the directory `into` (a
    temporary one, outside the repository: a clone carries its own virtualenv, a few hundred
    MB, and code that is not ours today)."""
    sha = subprocess.run(
        ["git", "rev-parse", "--verify", f"{revision}^{{commit}}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    path = into / sha[:12]
    subprocess.run(["git", "clone", "-q", str(ROOT), str(path)], check=True)
    subprocess.run(["git", "checkout", "-q", sha], cwd=path, check=True)
    return sha, path


def measured(path: Path) -> dict[str, dict[str, float]]:
    """The medians printed by `inside()` run in the clone at `path`."""
    subprocess.run(["scripts/bootstrap.sh", "dev"], cwd=path, check=True, capture_output=True)
    result = subprocess.run(
        [str(path / ".venv" / "bin" / "python"), str(Path(__file__).resolve()), "--inside"],
        cwd=path,
        capture_output=True,
        text=True,
        check=False,
    )
    for line in result.stdout.splitlines():
        if line.startswith(MARKER):
            return json.loads(line[len(MARKER) :])
    raise RuntimeError(f"no figures from {path}:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}")


def render(rows: list[tuple[str, str, dict[str, dict[str, float]]]]) -> str:
    """One line per commit: all-in CPU per operation of each scenario, and the ratios."""
    head = " | ".join(f"{name} ms" for name in NAMES)
    ratios = " | ".join(f"{name} / dbwrite" for name in RATIOS)
    lines = [
        f"| commit | subject | {head} | {ratios} | web / worker / pg ms of a create |",
        "|---|---|" + "---:|" * (len(NAMES) + len(RATIOS)) + "---|",
    ]
    for sha, subject, medians in rows:
        figures = " | ".join(f"{medians[name]['all-in']:.2f}" for name in NAMES)
        quotients = " | ".join(
            f"{medians[name]['all-in'] / medians['dbwrite']['all-in']:.2f}x" for name in RATIOS
        )
        create = medians["create partner order"]
        split = f"{create['web']:.2f} / {create['worker']:.2f} / {create['pg']:.2f}"
        lines.append(f"| {sha[:7]} | {subject} | {figures} | {quotients} | {split} |")
    return "\n".join(lines)


def main() -> int:
    if sys.argv[1:] == ["--inside"]:
        inside()
        return 0
    revisions = sys.argv[1:]
    if not revisions:
        print(__doc__)
        return 2
    rows = []
    for revision in revisions:
        with tempfile.TemporaryDirectory(prefix="bench-commits-") as into:
            sha, path = clone(revision, Path(into))
            figures = measured(path)
        subject = subprocess.run(
            ["git", "log", "-1", "--format=%s", sha],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()[:60]
        print(f"{sha[:7]} {subject}", flush=True)
        rows.append((sha, subject.replace("|", "/"), figures))
        print(render(rows[-1:]).splitlines()[-1], flush=True)
    load_average = os.getloadavg()[0]
    document = (
        "# Benchmark: the write paths' CPU at several commits\n\n"
        f"- date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC\n"
        f'- command: `make bench-commits REVS="{" ".join(revisions)}"` (bench/commits.py)\n'
        f"- method: each commit's own code and benchmark, {ROUNDS} interleaved rounds of "
        f"{SECONDS} s, medians of all-in CPU per operation (web + worker + pg + redis, as in "
        "`make bench`); load average (1 min) at the end "
        f"{load_average:.1f}\n\n" + render(rows) + "\n"
    )
    (ROOT / "bench" / "results" / "commits.md").write_text(document)
    print(f"written to {ROOT / 'bench' / 'results' / 'commits.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
