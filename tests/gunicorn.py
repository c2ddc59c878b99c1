"""A real gunicorn serving the project against the test database, for tests that need a second
process or the WSGI server's own behaviour (started as `make run` starts it: gunicorn.conf.py)."""

import contextlib
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from django.db import connection

ROOT = Path(__file__).resolve().parents[1]
HEALTHZ = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def raw_request(port: int, request: bytes, timeout: float = 10) -> bytes:
    """Everything the server answers until it closes the connection (empty when it closed or
    reset it without an answer)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as conn:
        # A server that stops reading (a refused request) may still have answered: read it.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            conn.sendall(request)
        chunks = []
        while True:
            try:
                chunk = conn.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks)


def status_of(raw: bytes) -> int:
    return int(raw.split(b" ", 2)[1]) if raw.startswith(b"HTTP/") else 0


def body_of(raw: bytes) -> bytes:
    return raw.partition(b"\r\n\r\n")[2]


@contextlib.contextmanager
def gunicorn_server(tmp_path, **env):
    """Yields the port of a one-worker gunicorn using the test database (data the test commits
    is what it sees: use `transactional_db`) and the same Redis as the test process."""
    port = free_port()
    database = connection.settings_dict
    host = f"{database['HOST']}:{database['PORT'] or 5432}"
    log = tmp_path / "gunicorn.log"
    with open(log, "wb") as log_file:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "delivery.wsgi:application",
                "-c",
                "gunicorn.conf.py",
            ],
            cwd=ROOT,
            env={
                **os.environ,
                "BIND": f"127.0.0.1:{port}",
                "WEB_CONCURRENCY": "1",
                "PROMETHEUS_MULTIPROC_DIR": str(tmp_path),
                # Its instance turns (delivery/fairness.py) shared with no other server.
                "FAIR_TURNS_DIR": str(tmp_path / "turns"),
                "DATABASE_URL": f"postgres://{database['USER']}@{host}/{database['NAME']}",
                **env,
            },
            stdout=log_file,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if status_of(raw_request(port, HEALTHZ)) == 200:
                    break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"gunicorn did not start: {log.read_text()[-2000:]}")
            time.sleep(0.2)
        yield port
    finally:
        server.terminate()
        server.wait(timeout=30)
