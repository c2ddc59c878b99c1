"""Real processes for the fault tests: a throwaway PostgreSQL cluster and Redis of their own, the
service as in production (gunicorn, Celery worker, beat) and a local webhook receiver.

Nothing here touches the shared PostgreSQL (5432) or Redis (6379): every instance listens on a
free port of its own and lives in a temporary directory. Every wait is bounded.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import requests

from bench import harness
from bench.harness import ROOT
from bench.throwaway import (  # noqa: F401 - the fault tests import them from here
    ThrowawayPostgres,
    ThrowawayRedis,
    free_port,
    stop_group,
    wait_until,
)

LOG_DIR = ROOT / "var" / "faults"
STACKDUMP = Path(__file__).resolve().parent / "stackdump"
STACKDUMP_SIGNAL = signal.SIGRTMIN + 3


# --- The service under test --------------------------------------------------------------------


@dataclass
class Service:
    """gunicorn, Celery worker and beat started as in production (bench/harness.py, run.sh)."""

    name: str
    database_url: str
    redis_url: str
    extra_env: dict = field(default_factory=dict)
    port: int = field(default_factory=free_port)
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)
    workdir: Path | None = None  # beat schedule and metrics files, made on first use

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _workdir(self) -> Path:
        if self.workdir is None:
            self.workdir = Path(tempfile.mkdtemp(prefix="faults-svc-"))
            (self.workdir / "prometheus").mkdir()
        return self.workdir

    @property
    def env(self) -> dict[str, str]:
        settings = {
            "WEB_CONCURRENCY": "2",
            "LOG_LEVEL": "INFO",
            "LOG_FORMAT": "plain",
            "PYTHONUNBUFFERED": "1",
            # Metrics files of our own, not the checkout's shared var/prometheus.
            "PROMETHEUS_MULTIPROC_DIR": str(self._workdir() / "prometheus"),
            # Fair turns' locks of our own (delivery/fairness.py), shared with no other service.
            "FAIR_TURNS_DIR": str(self._workdir() / "turns"),
            # tests/faults/stackdump: `dump_stacks()` makes every process show where it is.
            "PYTHONPATH": os.pathsep.join(
                [str(STACKDUMP), *filter(None, [os.environ.get("PYTHONPATH")])]
            ),
        }
        return harness.service_env(
            self.database_url, self.redis_url, self.port, settings, self.extra_env
        )

    def log_path(self, role: str) -> Path:
        LOG_DIR.mkdir(parents=True, exist_ok=True)
        return LOG_DIR / f"{self.name}-{role}.log"

    def _spawn(self, role: str, command: list[str]) -> subprocess.Popen:
        log = open(self.log_path(role), "ab")  # noqa: SIM115 - the child keeps it open
        try:
            process = subprocess.Popen(
                command,
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        finally:
            log.close()
        self.processes[role] = process
        return process

    def start_web(self) -> None:
        self._spawn("web", harness.gunicorn_command())
        wait_until(self.ready, timeout=60, interval=0.3, what="gunicorn to answer /readyz")

    def start_worker(self, concurrency: int = 8) -> None:
        worker = harness.worker_command(
            "--without-gossip",
            "--without-mingle",
            "-n",
            f"{self.name}-{time.monotonic_ns()}@faults",
            concurrency=concurrency,
            loglevel="INFO",
        )
        self._spawn("worker", worker)
        wait_until(
            lambda: "ready." in self.log("worker"), timeout=60, what="the Celery worker to be ready"
        )

    def start_beat(self) -> None:
        self._spawn(
            "beat", harness.beat_command(self._workdir() / "beat-schedule", loglevel="INFO")
        )

    def start(self, *, worker_concurrency: int = 8) -> None:
        self.start_web()
        self.start_worker(worker_concurrency)
        self.start_beat()

    def kill(self, role: str) -> None:
        """SIGKILL, no shutdown of any kind (as the OOM killer would)."""
        process = self.processes.pop(role)
        stop_group(process, sig=signal.SIGKILL)

    def stop(self) -> None:
        for role in list(self.processes):
            stop_group(self.processes.pop(role))
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def dump_stacks(self) -> str:
        """Every thread's stack of every service process, into its log; returns where."""
        for process in self.processes.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, STACKDUMP_SIGNAL)
        time.sleep(1)
        return f"stacks dumped to {LOG_DIR}/{self.name}-{{web,worker,beat}}.log"

    def log(self, role: str) -> str:
        path = self.log_path(role)
        return path.read_text(errors="replace") if path.exists() else ""

    def ready(self) -> bool:
        try:
            return requests.get(f"{self.base_url}/readyz", timeout=2).status_code == 200
        except requests.RequestException:
            return False

    def manage(self, *args: str, timeout: float = 120) -> str:
        return harness.manage(self.env, *args, timeout=timeout)


# --- Seeding -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tenant:
    organization_id: str
    api_key: str
    #: an admin of the organization (password tests.builders.PASSWORD), for the management API
    admin_email: str = ""
    #: the key's id, for its management routes (test-webhook)
    api_key_id: str = ""


def seed_tenants(service: Service, webhook_urls: list[str]) -> list[Tenant]:
    """One organization per URL, each with a zone and a partner_a key sending there."""
    output = service.manage(
        "shell", "-c", f"from tests.faults.seed import main; main({json.dumps(webhook_urls)})"
    )
    line = next(line for line in output.splitlines() if line.startswith("SEED "))
    return [Tenant(**item) for item in json.loads(line.removeprefix("SEED "))]


def order_body(ref: str) -> dict:
    return {
        "externalRef": ref,
        "pickupAddress": "Warehouse, Storkower Str. 1, Berlin",
        "pickupLat": 52.53,
        "pickupLng": 13.45,
        "dropoffAddress": "Alexanderplatz 1, Berlin",
        "dropoffLat": 52.52,
        "dropoffLng": 13.40,
        "recipientName": "Ada Lovelace",
        "recipientPhone": "+491701234567",
        "packageSize": "small",
    }


def create_order(
    service: Service, tenant: Tenant, ref: str, timeout: float = 15
) -> requests.Response:
    return requests.post(
        f"{service.base_url}/api/integrations/partner-a/orders",
        json=order_body(ref),
        headers={"X-API-Key": tenant.api_key},
        timeout=timeout,
    )


# --- The webhook receiver ----------------------------------------------------------------------


@dataclass
class Arrival:
    path: str
    event_id: str
    external_ref: str
    at: float


class Receiver:
    """A real HTTP server in a thread. `/ok/...` answers 200 at once (after `delay`);
    `/hang/...` answers nothing until the test ends (or `hang_seconds`)."""

    def __init__(self, delay: float = 0.0, hang_seconds: float = 120.0) -> None:
        self.delay = delay
        self.hang_seconds = hang_seconds
        self.arrivals: list[Arrival] = []
        self.lock = threading.Lock()
        self.release = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                arrival = Arrival(
                    path=self.path,
                    event_id=body.get("id", ""),
                    external_ref=body.get("payload", {}).get("externalRef", ""),
                    at=time.time(),
                )
                with receiver.lock:
                    receiver.arrivals.append(arrival)
                if self.path.startswith("/hang"):
                    receiver.release.wait(receiver.hang_seconds)
                elif receiver.delay:
                    time.sleep(receiver.delay)
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()

    def received(self, prefix: str = "/") -> list[Arrival]:
        with self.lock:
            return [a for a in self.arrivals if a.path.startswith(prefix)]

    def event_ids(self, prefix: str = "/") -> set[str]:
        return {a.event_id for a in self.received(prefix)}


def delivery_states(postgres: ThrowawayPostgres, database: str) -> dict[str, int]:
    rows = postgres.execute(
        database, "SELECT status, count(*) FROM webhooks_delivery GROUP BY status"
    )
    return dict(rows)


def all_event_ids(postgres: ThrowawayPostgres, database: str, organization_id: str) -> set[str]:
    rows = postgres.execute(
        database,
        "SELECT event_id FROM webhooks_event WHERE organization_id = %s AND family = 'partner'",
        (organization_id,),
    )
    return {row[0] for row in rows}


def wait_for_every_delivery(
    receiver: Receiver,
    postgres: ThrowawayPostgres,
    database: str,
    expected: set[str],
    *,
    since: float,
    timeout: float,
    recorded_timeout: float,
) -> tuple[float, float]:
    """Waits until every `expected` event has reached the receiver, then (within
    `recorded_timeout` more) until every delivery is recorded as delivered; returns how many
    seconds after `since` (a time.monotonic()) each came."""
    wait_until(
        lambda: receiver.event_ids() >= expected,
        timeout=timeout,
        interval=0.5,
        what="every event to reach the receiver",
    )
    received_after = time.monotonic() - since
    wait_until(
        lambda: delivery_states(postgres, database) == {"delivered": len(expected)},
        timeout=recorded_timeout,
        interval=0.5,
        what="every delivery to be recorded as delivered",
    )
    return received_after, time.monotonic() - since
