"""Benchmark harness (docs/performance.md): start the service as in production, drive it with wrk.

Everything runs on loopback and is bounded in time. Figures are reported as ratios to reference
endpoints measured in the same run, since absolute figures move 25-40 % between runs here.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = ROOT / ".venv" / "bin"
LUA = Path(__file__).resolve().parent / "lua"


def service_env(
    database_url: str, redis_url: str, port: int, *settings: dict[str, str]
) -> dict[str, str]:
    """The service on loopback, as the benchmarks and tests/faults start it: its database and
    Redis, bound to 127.0.0.1:`port`, webhooks allowed to loopback receivers, DEBUG on; then each
    of `settings` over those, the last winning."""
    env = {
        **os.environ,
        "DEBUG": "true",
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "WEBHOOK_ALLOW_PRIVATE_URLS": "true",
        "BIND": f"127.0.0.1:{port}",
    }
    for overrides in settings:
        env.update(overrides)
    return env


#: What every benchmark adds: no rate limits (wrk would trip them), the reference endpoints
#: (BENCH_ENDPOINTS), persistent connections as in production, quiet logs.
BENCH_SETTINGS = {
    "RATELIMIT_ENABLE": "false",
    "BENCH_ENDPOINTS": "true",
    "LOG_LEVEL": "WARNING",
    "CONN_MAX_AGE": "600",
}

#: What production_env adds over bench_env: DEBUG off, bench-only secrets, plain HTTP on loopback.
PRODUCTION_SETTINGS = {
    "DEBUG": "false",
    "SECRET_KEY": "bench-only-secret-key-not-for-production-0123456789",
    "PROVISIONING_SECRET": "bench-only-provisioning-secret-0123456789",
    "FIELD_ENCRYPTION_KEY": "YmVuY2gtb25seS1maWVsZC1lbmNyeXB0aW9uLWtleSE=",
    "ALLOWED_HOSTS": "127.0.0.1,localhost",
    "SECURE_SSL_REDIRECT": "false",
}


def bench_env(
    database: str, port: int, *, database_url: str | None = None, **extra: str
) -> dict[str, str]:
    """The benchmark's settings on `database` of the shared cluster (5432), or on
    `database_url` when given (a cluster of the benchmark's own: bench/history.py)."""
    return service_env(
        database_url or f"postgres://postgres@127.0.0.1:5432/{database}",
        os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/9"),
        port,
        BENCH_SETTINGS,
        extra,
    )


def production_env(
    database: str, port: int, redis_url: str, *, database_url: str | None = None, **extra: str
) -> dict[str, str]:
    """Production settings (DEBUG off), with bench-only secrets and plain HTTP on loopback."""
    return bench_env(
        database,
        port,
        database_url=database_url,
        REDIS_URL=redis_url,
        **PRODUCTION_SETTINGS,
        **extra,
    )


def server_options(env: dict) -> list[str]:
    """`-h host -p port` of the PostgreSQL server behind env's DATABASE_URL, for its client
    programs (createdb, dropdb)."""
    url = urlsplit(env["DATABASE_URL"])
    return ["-h", url.hostname or "127.0.0.1", "-p", str(url.port or 5432)]


def server_dsn(env: dict) -> str:
    """`host=... port=...` of the PostgreSQL server behind env's DATABASE_URL (libpq)."""
    url = urlsplit(env["DATABASE_URL"])
    return f"host={url.hostname or '127.0.0.1'} port={url.port or 5432}"


# The service's processes, as docker-compose.yml starts them (its `web`, `worker` and `beat`).


def gunicorn_command(*options: str) -> list[str]:
    return [
        str(VENV_BIN / "gunicorn"),
        "delivery.wsgi:application",
        "-c",
        "gunicorn.conf.py",
        *options,
    ]


def _celery_command(role: str, loglevel: str, *options: str) -> list[str]:
    return [
        str(VENV_BIN / "celery"),
        "-A",
        "delivery.celery:app",
        role,
        f"--loglevel={loglevel}",
        *options,
    ]


def worker_command(
    *options: str, concurrency: int = 8, pool: str = "threads", loglevel: str = "WARNING"
) -> list[str]:
    return _celery_command(
        "worker", loglevel, f"--pool={pool}", f"--concurrency={concurrency}", *options
    )


def literal_sql(sql: str, params) -> str:
    """`sql` with its parameters written in as literals (psycopg's client-side binding). The
    seeding statements use a parameter both as text and as a column of another type, which a
    statement bound on the server, as the service's are (delivery/settings.py), refuses."""
    import psycopg  # noqa: PLC0415 - the benchmark's tools import this module without Django
    from django.db import connection  # noqa: PLC0415

    connection.ensure_connection()
    with psycopg.ClientCursor(connection.connection) as cursor:
        return cursor.mogrify(sql, params)


def beat_command(schedule: Path, *, loglevel: str = "WARNING") -> list[str]:
    return _celery_command("beat", loglevel, "--schedule", str(schedule))


def setup_django(env: dict[str, str]) -> None:
    """This process's settings are the service's: the seeding and the checks run in it."""
    os.environ.update(env)
    os.environ["DJANGO_SETTINGS_MODULE"] = "delivery.settings"
    import django  # noqa: PLC0415 - configured from the environment just set

    django.setup()


def git_commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=False
        ).stdout.strip()

    dirty = " (working tree has uncommitted changes)" if git("status", "--porcelain") else ""
    return git("rev-parse", "--short", "HEAD") + dirty


def manage(env: dict, *args: str, timeout: float = 1800) -> str:
    """manage.py with `env`: its output, or an error that ends with the last of its stderr."""
    result = subprocess.run(
        [str(VENV_BIN / "python"), "manage.py", *args],
        cwd=ROOT,
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if result.returncode:
        raise RuntimeError(f"manage.py {args[0]} failed:\n{result.stderr[-3000:]}")
    return result.stdout


def fresh_database(env: dict, name: str) -> None:
    """Drops and creates `name` on the server of env's DATABASE_URL, then migrates it."""
    server = server_options(env)
    subprocess.run(
        ["dropdb", *server, "-U", "postgres", "--if-exists", "--force", name],
        check=True,
        timeout=60,
    )
    subprocess.run(["createdb", *server, "-U", "postgres", name], check=True, timeout=60)
    manage(env, "migrate", "--noinput")


@dataclass
class Service:
    """gunicorn (workers as in docker-compose) plus, optionally, a Celery worker and beat; their
    output goes to var/<log>.log, the beat's schedule to var/<log>-beat (a file per benchmark,
    as they may run side by side)."""

    env: dict
    port: int
    with_celery: bool = True
    worker_concurrency: int = 8
    log: str = "bench-service"
    processes: list[subprocess.Popen] = field(default_factory=list)

    def _spawn(self, command: list[str], env: dict | None = None) -> subprocess.Popen:
        with open(ROOT / "var" / f"{self.log}.log", "ab") as log:  # the child keeps its own copy
            process = subprocess.Popen(
                command, cwd=ROOT, env=env or self.env, stdout=log, stderr=log
            )
        self.processes.append(process)
        return process

    def start(self) -> None:
        self._spawn(gunicorn_command())
        if self.with_celery:
            self._spawn(worker_command(concurrency=self.worker_concurrency))
            self._spawn(beat_command(ROOT / "var" / f"{self.log}-beat"))
        self._wait_ready()

    def _wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/readyz", timeout=2):
                    return
            except OSError:
                time.sleep(0.5)
        raise RuntimeError(f"service did not become ready; see var/{self.log}.log")

    def stop(self) -> None:
        for process in self.processes:
            process.send_signal(signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        self.processes.clear()


@dataclass
class Measurement:
    requests_per_second: float
    p50_ms: float
    p99_ms: float
    non2xx: int
    socket_errors: int
    requests: int


def wrk(
    url: str,
    *,
    api_key: str = "",
    method: str = "GET",
    body: str = "",
    script: str = "get.lua",
    seconds: int = 8,
    connections: int = 8,
    extra_env: dict | None = None,
) -> Measurement:
    """One wrk run pinned to core 1 (docs/performance.md), parsed from the Lua script's JSON
    summary."""
    if shutil.which("wrk") is None:
        raise RuntimeError("wrk is not installed: apt-get install -y wrk")
    command = [
        "wrk",
        "-t1",
        f"-c{connections}",
        f"-d{seconds}s",
        "--latency",
        "-s",
        str(LUA / script),
        url,
    ]
    if shutil.which("taskset") and (os.cpu_count() or 1) > 1:
        command = ["taskset", "-c", "1", *command]
    env = {
        **os.environ,
        "BENCH_COMMON_LUA": str(LUA / "common.lua"),
        "BENCH_API_KEY": api_key,
        "BENCH_METHOD": method,
        "BENCH_BODY": body,
        **(extra_env or {}),
    }
    output = subprocess.run(
        command, env=env, capture_output=True, text=True, check=True, timeout=seconds + 60
    ).stdout
    line = next((line for line in output.splitlines() if line.startswith("BENCH_JSON ")), None)
    if line is None:
        raise RuntimeError(f"wrk printed no BENCH_JSON summary (script {script}):\n{output}")
    data = json.loads(line.removeprefix("BENCH_JSON "))
    seconds_taken = data["duration_us"] / 1e6
    return Measurement(
        requests_per_second=data["requests"] / seconds_taken,
        p50_ms=data["p50_us"] / 1000,
        p99_ms=data["p99_us"] / 1000,
        non2xx=data["non2xx"],
        socket_errors=data["socket_errors"],
        requests=data["requests"],
    )


def median_of(measurements: list[Measurement]) -> Measurement:
    return Measurement(
        requests_per_second=statistics.median(m.requests_per_second for m in measurements),
        p50_ms=statistics.median(m.p50_ms for m in measurements),
        p99_ms=statistics.median(m.p99_ms for m in measurements),
        non2xx=sum(m.non2xx for m in measurements),
        socket_errors=sum(m.socket_errors for m in measurements),
        requests=sum(m.requests for m in measurements),
    )


def table(rows: list[tuple[str, Measurement, str, float | None, str]]) -> str:
    """Markdown table: scenario, req/s, p50, p99, errors, reference, ratio, target."""
    lines = [
        "| scenario | req/s | p50 ms | p99 ms | non-2xx | reference | ratio | target |",
        "|---|---:|---:|---:|---:|---|---:|---|",
    ]
    for name, m, reference, ratio, target in rows:
        ratio_text = f"{ratio:.2f}" if ratio is not None else "-"
        lines.append(
            f"| {name} | {m.requests_per_second:.0f} | {m.p50_ms:.1f} | {m.p99_ms:.1f} | "
            f"{m.non2xx + m.socket_errors} | {reference} | {ratio_text} | {target} |"
        )
    return "\n".join(lines)


def section_of(document: str, heading: str) -> str:
    """The section of `document` under `heading` (up to the next `## ` heading), or ""."""
    start = document.find(heading)
    if start < 0:
        return ""
    end = document.find("\n## ", start + len(heading))
    return document[start:end] if end >= 0 else document[start:]


def section_kept(previous: str, document: str, heading: str) -> str:
    """`document` with the section under `heading` carried over from `previous` as it was (a
    section another command writes into the same file), or unchanged when `previous` has none."""
    kept = section_of(previous, heading)
    return section_replaced(document, heading, kept) if kept else document


def section_replaced(document: str, heading: str, section: str) -> str:
    """`document` (Markdown) with the section under `heading` (up to the next `## ` heading)
    replaced by `section`, or `section` added at the end when it has none; the other sections
    are kept as they are."""
    start = document.find(heading)
    if start < 0:
        return document.rstrip("\n") + "\n\n" + section
    end = document.find("\n## ", start + len(heading))
    rest = document[end + 1 :] if end >= 0 else ""
    return document[:start] + section + ("\n" + rest if rest else "")


if __name__ == "__main__":  # pragma: no cover - a quick self-check of the reference endpoints
    port = 8019
    env = bench_env("delivery_bench_refs", port)
    (ROOT / "var").mkdir(exist_ok=True)
    fresh_database(env, "delivery_bench_refs")
    service = Service(env=env, port=port, with_celery=False)
    service.start()
    try:
        for path in ("bench/hello", "bench/dbread"):
            print(path, wrk(f"http://127.0.0.1:{port}/api/{path}", seconds=3))
    finally:
        service.stop()
    sys.exit(0)
