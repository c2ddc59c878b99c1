"""A PostgreSQL cluster and a Redis of their own, on free ports in temporary directories: what
`make faults` (tests/faults) and `make bench-history` (bench/history.py) start, so nothing touches
the shared PostgreSQL (5432) or Redis (6379). Every wait is bounded.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import psycopg


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(predicate, *, timeout: float, interval: float = 0.1, what: str = "condition"):
    """Polls `predicate` until it returns something truthy; fails after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


def port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


def stop_group(process: subprocess.Popen, *, sig=signal.SIGTERM, timeout: float = 15) -> None:
    """Stops a process started with its own session, and everything it forked."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, sig)
    except ProcessLookupError:
        return
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


# --- PostgreSQL --------------------------------------------------------------------------------


def pg_bin(name: str) -> str:
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if not candidates:
        raise RuntimeError(f"PostgreSQL server binaries not found ({name})")
    return candidates[-1]


def _as_postgres(*command: str, timeout: float = 60) -> subprocess.CompletedProcess:
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    return subprocess.run(
        [*prefix, *command], check=True, capture_output=True, text=True, timeout=timeout
    )


#: The fault tests' cluster: durability off, it only has to be fast and throwaway.
FAULTS_SETTINGS = {"fsync": "off", "full_page_writes": "off", "max_connections": "200"}

#: A cluster tuned like a real server of this machine's size (24 GB, 2 cores), durable, with
#: pg_stat_statements loaded: what the history benchmark measures on.
SERVER_SETTINGS = {
    "max_connections": "300",
    "shared_buffers": "1GB",
    "effective_cache_size": "8GB",
    "work_mem": "8MB",
    "maintenance_work_mem": "1GB",
    "max_wal_size": "8GB",
    "checkpoint_timeout": "15min",
    "random_page_cost": "1.1",
    "effective_io_concurrency": "200",
    "shared_preload_libraries": "pg_stat_statements",
    "pg_stat_statements.max": "10000",
    "pg_stat_statements.track": "top",
    "track_io_timing": "on",
}


@dataclass
class ThrowawayPostgres:
    """A PostgreSQL cluster in a temporary directory on a free port, trust auth; `settings`
    are its `-c` options (by default the fault tests': no fsync)."""

    port: int = field(default_factory=free_port)
    directory: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="faults-pg-")))
    settings: dict[str, str] = field(default_factory=lambda: dict(FAULTS_SETTINGS))

    @property
    def data(self) -> Path:
        return self.directory / "data"

    def url(self, database: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def create(self) -> None:
        if os.geteuid() == 0:
            shutil.chown(self.directory, "postgres", "postgres")
        _as_postgres(
            pg_bin("initdb"),
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "-A",
            "trust",
            "--no-sync",
            "-E",
            "UTF8",
        )
        self.start()

    def start(self) -> None:
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.directory} " + " ".join(
            f"-c {name}={value}" for name, value in self.settings.items()
        )
        _as_postgres(
            pg_bin("pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.directory / "server.log"),
            "-o",
            options,
            "-w",
            "-t",
            "60",
            "start",
            timeout=90,
        )

    def stop(self, mode: str = "fast") -> None:
        _as_postgres(
            pg_bin("pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop", timeout=90
        )

    def is_running(self) -> bool:
        return (self.data / "postmaster.pid").exists()

    def destroy(self) -> None:
        if self.is_running():
            try:
                self.stop("immediate")
            except subprocess.SubprocessError:
                pid = int((self.data / "postmaster.pid").read_text().split()[0])
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(self.directory, ignore_errors=True)

    def connect(self, database: str) -> psycopg.Connection:
        return psycopg.connect(self.url(database), autocommit=True, connect_timeout=5)

    def execute(self, database: str, sql: str, params=None) -> list[tuple]:
        with self.connect(database) as conn, conn.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall() if cursor.description else []


# --- Redis -------------------------------------------------------------------------------------


@dataclass
class ThrowawayRedis:
    """A redis-server on a free port, nothing persisted: a restart comes back empty."""

    port: int = field(default_factory=free_port)
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        wait_until(lambda: port_open(self.port), timeout=10, what="redis-server to listen")

    def stop(self) -> None:
        """SIGTERM: redis-server shuts down at once (nothing to save)."""
        if self.process is not None:
            stop_group(self.process)
            self.process = None
        wait_until(lambda: not port_open(self.port), timeout=10, what="redis-server to stop")
