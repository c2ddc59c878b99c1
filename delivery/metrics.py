"""Prometheus metrics at `/metrics`: HTTP traffic, bookings, webhook attempts, due deliveries,
records removed by retention.

Several gunicorn workers (and a Celery worker) share one picture through prometheus_client's
multiprocess mode: with `PROMETHEUS_MULTIPROC_DIR` set in a process's environment before it
imports prometheus_client, its counters live in files of that directory, and a scrape of any
worker merges every file. gunicorn.conf.py sets the directory and clears it on start. Without
the variable (tests, `runserver`) the metrics stay in the process.

Read at scrape time instead: the queue depth of due webhook deliveries (one query on the
partial index `webhook_delivery_due`), and the webhook attempt and retention counters, which
Celery workers keep in Redis (they may run in other containers, whose files a scrape cannot
read).

Access: with the `METRICS_TOKEN` setting, a scrape needs `Authorization: Bearer <token>`;
without it, only loopback clients get an answer (403 otherwise).
"""

import functools
import hmac
import ipaddress
import logging
import os
import time

import redis
from django.conf import settings
from django.db import transaction
from django.http import HttpResponse
from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector

logger = logging.getLogger(__name__)

HTTP_REQUESTS = Counter(
    "http_requests",
    "HTTP requests by method, route (URL pattern) and status code",
    ["method", "route", "status"],
)
HTTP_LATENCY = Histogram(
    "http_request_duration_seconds",
    "Time from the first middleware to the response, by method and route",
    ["method", "route"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
BOOKINGS = Counter(
    "bookings",
    "Capacity bookings: kind slot (ERP slots) or window (partner windows); outcome booked "
    "(committed) or full (refused at capacity)",
    ["kind", "outcome"],
)
WEBHOOK_OUTCOMES = ("delivered", "retry", "failed")

UNMATCHED_ROUTE = "unmatched"
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
#: the Prometheus text format that generate_latest writes
_TEXT_FORMAT = "text/plain; version=0.0.4; charset=utf-8"


def multiprocess_dir() -> str:
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR", "")


def booking_refused(kind: str) -> None:
    BOOKINGS.labels(kind, "full").inc()


def booking_made(kind: str) -> None:
    """Counts a booking once its transaction commits (a rolled-back one never happened)."""
    transaction.on_commit(BOOKINGS.labels(kind, "booked").inc)


def _webhook_attempts_key() -> str:
    return f"{settings.SERVICE_NAME}:metrics:webhook_attempts"


@functools.lru_cache(maxsize=4)
def _redis_for(url: str) -> redis.Redis:
    """One connection pool per process and URL, made on first use (after gunicorn forked)."""
    return redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1)


def _redis() -> redis.Redis:
    return _redis_for(settings.REDIS_URL)


def webhook_attempt_recorded(outcome: str, count: int = 1) -> None:
    """Attempts are made by Celery workers, in other processes or containers than the web: the
    counter lives in Redis (one HINCRBY per recorded batch) so every deployment sees all of
    them."""
    try:
        _redis().hincrby(_webhook_attempts_key(), outcome, count)
    except (redis.RedisError, OSError) as error:
        logger.warning("metrics: webhook attempt not counted: %s", error.__class__.__name__)


def _retention_key() -> str:
    return f"{settings.SERVICE_NAME}:metrics:retention_removed"


def retention_removed(kind: str, count: int) -> None:
    """Records removed by a retention task (delivery/retention.py), counted in Redis as webhook
    attempts are: the tasks run in Celery workers."""
    try:
        _redis().hincrby(_retention_key(), kind, count)
    except (redis.RedisError, OSError) as error:
        logger.warning("metrics: removed records not counted: %s", error.__class__.__name__)


def route_of(request) -> str:
    match = getattr(request, "resolver_match", None)
    if match is None:
        return UNMATCHED_ROUTE
    # Both twins of a path (with and without the trailing slash) count as one route.
    return "/" + match.route.rstrip("/")


class MetricsMiddleware:
    """Counts every request by method, URL pattern (never the raw path: ids would explode the
    label space) and status, and observes its latency. A few microseconds per request."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        response = self.get_response(request)
        method = request.method if request.method in _METHODS else "other"
        key = (method, route_of(request), response.status_code)
        children = _CHILDREN.get(key)
        if children is None:
            children = _CHILDREN.setdefault(key, _children_of(*key))
        children[0].observe(time.perf_counter() - started)
        children[1].inc()
        return response


#: (method, route, status) -> its latency and request series; `.labels()` on every request
#: costs a lock and a tuple more. Bounded: routes are URL patterns, methods are filtered.
_CHILDREN: dict[tuple[str, str, int], tuple] = {}


def _children_of(method: str, route: str, status: int) -> tuple:
    return (HTTP_LATENCY.labels(method, route), HTTP_REQUESTS.labels(method, route, str(status)))


class WebhookAttemptsCollector:
    """`webhook_attempts_total{outcome}`: read from Redis at scrape time (one HGETALL)."""

    def collect(self):
        try:
            counts = _redis().hgetall(_webhook_attempts_key())
        except (redis.RedisError, OSError) as error:
            logger.error("metrics: webhook attempts not read: %s", error.__class__.__name__)
            return
        family = CounterMetricFamily(
            "webhook_attempts",
            "Webhook delivery attempts by outcome: delivered, retry (failed, another attempt "
            "is scheduled), failed (failed, no attempt left)",
            labels=["outcome"],
        )
        for outcome in WEBHOOK_OUTCOMES:
            family.add_metric([outcome], int(counts.get(outcome.encode(), 0)))
        yield family


class RetentionRemovedCollector:
    """`retention_removed_total{kind}`: read from Redis at scrape time (one HGETALL); a kind
    appears once its task removed something."""

    def collect(self):
        try:
            counts = _redis().hgetall(_retention_key())
        except (redis.RedisError, OSError) as error:
            logger.error("metrics: removed records not read: %s", error.__class__.__name__)
            return
        family = CounterMetricFamily(
            "retention_removed",
            'Records removed by the retention tasks, by kind (docs/operations.md "Retention")',
            labels=["kind"],
        )
        for kind, count in sorted(counts.items()):
            family.add_metric([kind.decode()], int(count))
        yield family


#: Collected at scrape time, in the scraping process: the same in any mode. The apps register
#: their collectors when Django starts (webhooks/apps.py): this module may not import them.
_SCRAPE_TIME_REGISTRY = CollectorRegistry(auto_describe=False)
_SCRAPE_TIME_COLLECTORS: set[type] = set()


def register_scrape_time(collector) -> None:
    """Adds a collector read at every scrape; once per class, however often an app starts."""
    if type(collector) in _SCRAPE_TIME_COLLECTORS:
        return
    _SCRAPE_TIME_COLLECTORS.add(type(collector))
    _SCRAPE_TIME_REGISTRY.register(collector)


register_scrape_time(RetentionRemovedCollector())


def exposition() -> bytes:
    directory = multiprocess_dir()
    if directory:
        registry = CollectorRegistry()
        MultiProcessCollector(registry, path=directory)
    else:
        registry = REGISTRY
    return generate_latest(registry) + generate_latest(_SCRAPE_TIME_REGISTRY)


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def metrics_view(request):
    token = settings.METRICS_TOKEN
    if token:
        sent = request.headers.get("Authorization", "")
        if not hmac.compare_digest(sent.encode(), f"Bearer {token}".encode()):
            response = HttpResponse("Unauthorized\n", status=401, content_type="text/plain")
            response["WWW-Authenticate"] = 'Bearer realm="metrics"'
            return response
    elif not _is_loopback(request.META.get("REMOTE_ADDR", "")):
        return HttpResponse(
            "Forbidden: set METRICS_TOKEN to scrape from another host\n",
            status=403,
            content_type="text/plain",
        )
    if request.method not in ("GET", "HEAD"):
        return HttpResponse(status=405, headers={"Allow": "GET, HEAD"})
    return HttpResponse(exposition(), content_type=_TEXT_FORMAT)
