"""CPU time per process group, read from /proc (docs/performance.md, "CPU per operation").

    groups = ProcessGroups({"web": Tree(gunicorn_pid), "redis": Pids(lambda: {redis_pid})})
    before = groups.snapshot()
    ...  # the load
    spent = groups.snapshot() - before  # {"web": seconds, "redis": seconds}

A group names how to find its processes at the moment of a snapshot (a process tree, or a set
of pids asked for each time, such as the PostgreSQL backends of one database). A snapshot holds
utime + stime of every process found, in seconds; the difference of two snapshots charges each
group the CPU its processes spent in between:

- a process present in both: the difference of its readings;
- a process that appeared in between: all of its CPU (it started after the first reading);
- a process that ended in between: a tree's processes are read with the CPU of the children
  they reaped (cutime + cstime), so a gunicorn worker that exits is charged to the tree
  through its master (less what it had spent before the first reading). A PostgreSQL backend
  that exits is lost (its parent, the postmaster, serves every database); with persistent
  connections (CONN_MAX_AGE) that is rare.

Only Linux's /proc is read; the figures are in seconds, with the kernel's clock-tick resolution
(`os.sysconf("SC_CLK_TCK")`, 10 ms here): measure over many operations.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

PROC = Path("/proc")
TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class ProcessTime:
    """One process's CPU at one moment, in seconds: its own, and its reaped children's."""

    start_ticks: int  # when the process started, to tell a reused pid from the same process
    own: float
    reaped_children: float


def read_process(pid: int) -> ProcessTime | None:
    """utime + stime (and cutime + cstime) of a live process; None once it has gone."""
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    # The command name (field 2) is in parentheses and may hold spaces: split after its end.
    fields = stat[stat.rindex(")") + 2 :].split()
    # fields[0] is field 3 (state): utime is field 14, stime 15, cutime 16, cstime 17,
    # starttime 22 (proc(5)).
    utime, stime, cutime, cstime = (int(value) for value in fields[11:15])
    return ProcessTime(
        start_ticks=int(fields[19]),
        own=(utime + stime) / TICKS_PER_SECOND,
        reaped_children=(cutime + cstime) / TICKS_PER_SECOND,
    )


def _parent(stat: str) -> int:
    return int(stat[stat.rindex(")") + 2 :].split()[1])  # field 4, ppid


def children_of() -> dict[int, list[int]]:
    """parent pid -> child pids, for every process visible now."""
    children: dict[int, list[int]] = {}
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except (FileNotFoundError, ProcessLookupError):
            continue
        children.setdefault(_parent(stat), []).append(int(entry.name))
    return children


class Tree:
    """Processes started from given roots (gunicorn master and its workers, a Celery worker):
    read with the CPU of the children they reaped."""

    with_reaped_children = True

    def __init__(self, *roots: int) -> None:
        self.roots = roots

    def pids(self) -> set[int]:
        children = children_of()
        found: set[int] = set()
        pending = list(self.roots)
        while pending:
            pid = pending.pop()
            if pid not in found:
                found.add(pid)
                pending.extend(children.get(pid, ()))
        return found


class Pids:
    """The processes a function names at each snapshot (the backends of a database, say), read
    without their children's CPU."""

    with_reaped_children = False

    def __init__(self, find: Callable[[], Iterable[int]]) -> None:
        self.find = find

    def pids(self) -> set[int]:
        return set(self.find())


@dataclass
class Snapshot:
    """group -> pid -> its CPU at the moment of the snapshot."""

    readings: dict[str, dict[int, ProcessTime]] = field(default_factory=dict)
    with_reaped_children: dict[str, bool] = field(default_factory=dict)

    def __sub__(self, before: Snapshot) -> dict[str, float]:
        """Seconds of CPU each group spent between `before` and this snapshot."""
        spent: dict[str, float] = {}
        for group, now in self.readings.items():
            earlier = before.readings.get(group, {})
            reaped = self.with_reaped_children.get(group, False)
            total = 0.0
            for pid, reading in now.items():
                total += _spent(earlier.get(pid), reading, reaped)
            if reaped:
                # A process of the tree that ended was reaped by its parent, whose children's
                # CPU now holds all of it: only its part since `before` is ours.
                total -= sum(
                    _cpu(reading, reaped) for pid, reading in earlier.items() if pid not in now
                )
            spent[group] = total
        return spent


def _cpu(reading: ProcessTime, reaped: bool) -> float:
    return reading.own + (reading.reaped_children if reaped else 0.0)


def _spent(before: ProcessTime | None, after: ProcessTime, reaped: bool) -> float:
    if before is None or before.start_ticks != after.start_ticks:
        return _cpu(after, reaped)  # started after the first reading (or a reused pid)
    return _cpu(after, reaped) - _cpu(before, reaped)


class ProcessGroups:
    """Named groups of processes whose CPU is read together."""

    def __init__(self, groups: dict[str, Tree | Pids]) -> None:
        self.groups = groups

    def snapshot(self) -> Snapshot:
        snapshot = Snapshot()
        for name, group in self.groups.items():
            readings = {}
            for pid in group.pids():
                reading = read_process(pid)
                if reading is not None:
                    readings[pid] = reading
            snapshot.readings[name] = readings
            snapshot.with_reaped_children[name] = group.with_reaped_children
        return snapshot


# ----- the service's groups (bench/run.py) -----

#: The groups of the CPU table, in its order. `all-in` adds the first four: pg-bg is left out
#: because it is shared with every other database of the cluster (other engineers' tests).
GROUPS = ("web", "worker", "pg", "pg-bg", "redis")
ALL_IN = ("web", "worker", "pg", "redis")


def service_groups(
    *,
    web: Iterable[int],
    worker: Iterable[int],
    database: str,
    redis_url: str,
    exclude_backends: Callable[[], Iterable[int]] = tuple,
    server: str = "host=127.0.0.1 port=5432",
) -> ProcessGroups:
    """web: the gunicorn trees; worker: the Celery worker and beat trees; pg: the PostgreSQL
    client backends connected to `database` of the cluster at `server` (other engineers' tests
    use other databases of it), less `exclude_backends()` (the benchmark's own connection);
    pg-bg: the postmaster and the cluster's background processes (checkpointer, background
    writer, walwriter, autovacuum), shared; redis: the server behind `redis_url`."""
    import psycopg  # noqa: PLC0415 - only the benchmark needs it here
    import redis  # noqa: PLC0415

    # A connection of our own to the maintenance database: never one of `database`'s backends.
    catalog = psycopg.connect(
        f"{server} user=postgres dbname=postgres application_name=bench-cpu", autocommit=True
    )

    def backends() -> list[int]:
        rows = catalog.execute(
            "SELECT pid FROM pg_stat_activity"
            " WHERE datname = %s AND backend_type = 'client backend' AND NOT pid = ANY(%s)",
            (database, list(exclude_backends())),
        ).fetchall()
        return [pid for (pid,) in rows]

    def background() -> list[int]:
        rows = catalog.execute(
            "SELECT pid FROM pg_stat_activity WHERE backend_type <> 'client backend'"
        ).fetchall()
        postmaster = [parent_of(rows[0][0])] if rows else []
        return [pid for (pid,) in rows] + postmaster

    redis_pid = int(redis.Redis.from_url(redis_url).info("server")["process_id"])
    return ProcessGroups(
        {
            "web": Tree(*web),
            "worker": Tree(*worker),
            "pg": Pids(backends),
            "redis": Pids(lambda: [redis_pid]),
            "pg-bg": Pids(background),
        }
    )


def parent_of(pid: int) -> int:
    """The parent of `pid` (of a PostgreSQL background process: the postmaster)."""
    return _parent((PROC / str(pid) / "stat").read_text())


def per_operation(spent: dict[str, float], operations: int) -> dict[str, float]:
    """Milliseconds of CPU per operation of each group of `spent` (seconds, from a snapshot
    difference), plus `all-in` (the ALL_IN groups' sum); no operation counts as one."""
    row = {group: 1000 * seconds / max(operations, 1) for group, seconds in spent.items()}
    row["all-in"] = sum(row[group] for group in ALL_IN)
    return row
