"""Gunicorn settings, shared by `make run`, `make bench` and docker-compose."""

import os

import environ
from gunicorn import glogging

bind = os.environ.get("BIND", "127.0.0.1:8000")
# Threaded workers (gthread): 2 cores here, so 4 processes of WEB_THREADS threads each. A sync
# worker takes one request at a time from the shared accept queue, so one tenant's twenty
# connections queued ahead of everyone else's (docs/faults.md "Noisy neighbours"); a gthread
# worker reads every connection as it comes and hands the request to a thread, and the in-flight
# limit (delivery/inflight.py: half of these threads per organization and kind of caller, the same
# two variables) refuses a flooding tenant's excess at once. Keep-alive connections are read by
# the worker's poller, not a thread, so an idle client holds no thread. Most threads wait their
# turn (delivery/fairness.py: 2 running per worker; beside another caller, at most
# FAIR_INSTANCE_RUNNING_PER_CALLER of one caller across all these workers, through locks on
# files in FAIR_TURNS_DIR); each that served a request keeps its PostgreSQL connection
# (CONN_MAX_AGE), unless the pool below is on.
workers = int(os.environ.get("WEB_CONCURRENCY", "4"))
worker_class = "gthread"
threads = int(os.environ.get("WEB_THREADS", "32"))
# With DATABASE_POOL_MAX_SIZE set (delivery/settings.py), each worker's threads share that many
# PostgreSQL connections instead of one kept per thread that ever ran (4 x 32 here): only the
# requests in their turn hold one, so FAIR_RUNNING_PER_WORKER + 2 is enough. Off by default:
# with PostgreSQL down, a pooled request waits for the pool's timeout before its 503, where a
# direct connection fails within connect_timeout (docs/faults.md), so max_connections must then
# cover workers x threads (docker-compose sets 300).
# Also how long a request waits for its fair turn before its 503 (delivery/settings.py).
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
# Off by default: Django writes one access line per request (delivery/access_log.py,
# docs/operations.md "Logs") with the route instead of the raw path, whose tracking and invite
# tokens are secrets.
# gunicorn's line has the raw path and also covers requests it refuses before Django.
accesslog = os.environ.get("GUNICORN_ACCESS_LOG") or None
errorlog = "-"

# What gunicorn refuses before Django (docs/operations.md "Limits gunicorn enforces"): a
# request line longer than this (method, path with query string and version) gets 414, more header
# fields than this
# or a field (name, colon and value) longer than this gets 431. 8190 is the largest request line
# gunicorn accepts; every limit is kept finite so a client cannot make a worker buffer without
# bound. Those answers, and the 400 for a malformed header (a NUL in a value, say), carry the
# contract's JSON error body (delivery/gunicorn_errors.py).
limit_request_line = int(os.environ.get("GUNICORN_LIMIT_REQUEST_LINE", "8190"))
limit_request_fields = int(os.environ.get("GUNICORN_LIMIT_REQUEST_FIELDS", "100"))
limit_request_field_size = int(os.environ.get("GUNICORN_LIMIT_REQUEST_FIELD_SIZE", "8190"))

# Prometheus multiprocess mode (delivery/metrics.py): every worker writes its counters to files
# in this directory and a scrape of any worker merges them. Set before the workers import
# prometheus_client (they are forked after this file runs, and the app is not preloaded).
# (Webhook attempts, made by Celery workers, are counted in Redis instead.)
metrics_dir = os.environ.setdefault(
    "PROMETHEUS_MULTIPROC_DIR",
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "var", "prometheus"),
)


def _log_format() -> str:
    """LOG_FORMAT as delivery/settings.py reads it (json by default when DEBUG is false)."""
    env = environ.Env()
    return env.str("LOG_FORMAT", default="plain" if env.bool("DEBUG", default=True) else "json")


class _JsonLinesLogger(glogging.Logger):
    """gunicorn's own lines (start, workers booting, its access log when on) as the service's
    JSON lines, so a log reader meets one format."""

    def setup(self, cfg):
        super().setup(cfg)
        from delivery.log_format import JsonFormatter  # noqa: PLC0415 - needs the project

        for handler in (*self.error_log.handlers, *self.access_log.handlers):
            handler.setFormatter(JsonFormatter())


if _log_format() == "json":
    logger_class = _JsonLinesLogger


def on_starting(server):
    """Clears what processes of an earlier run left (their counts would add to ours); files of
    processes still running (another gunicorn sharing the directory) are kept. Installs the JSON
    error writer before any worker forks."""
    from delivery import gunicorn_errors  # noqa: PLC0415 - needs the project on sys.path

    gunicorn_errors.install()
    os.makedirs(metrics_dir, exist_ok=True)
    for name in os.listdir(metrics_dir):
        if name.endswith(".db") and not _pid_alive(name):
            os.remove(os.path.join(metrics_dir, name))


def _pid_alive(file_name: str) -> bool:
    try:
        pid = int(file_name.rsplit("_", 1)[-1].removesuffix(".db"))
    except ValueError:
        return False
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def child_exit(server, worker):
    # Imported here, in the master, only after the directory is set above.
    from prometheus_client import multiprocess  # noqa: PLC0415

    multiprocess.mark_process_dead(worker.pid)


# How long a thread may hold the GIL while another waits for it (Python's default: 5 ms). A
# request back from PostgreSQL or Redis waits up to this for a busy thread of the same worker to
# give the interpreter up, once per round trip: with another tenant's request running beside it,
# that wait, not its own work, was most of a quiet tenant's latency (docs/faults.md "Noisy
# neighbours").
switch_interval_ms = float(os.environ.get("PYTHON_SWITCH_INTERVAL_MS", "1"))


def post_fork(server, worker):
    import sys  # noqa: PLC0415

    sys.setswitchinterval(switch_interval_ms / 1000)
