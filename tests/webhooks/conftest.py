"""Webhook fixtures: a real HTTP receiver (pytest-httpserver), a real Celery worker on a Redis
database of its own, and an independent HMAC check."""

import hashlib
import hmac
import json
import os
import threading
import time
from dataclasses import dataclass, field

import pytest
from celery.contrib.testing.worker import start_worker
from django.db import connections
from werkzeug import Request, Response

from delivery.celery import app as celery_app
from webhooks import services
from zones.models import Zone

#: a Redis database of the tests' own, so no other worker takes our messages (nor we theirs)
TEST_BROKER_URL = os.environ.get("TEST_BROKER_URL", "redis://127.0.0.1:6379/13")


SQUARE = {
    "type": "Polygon",
    "coordinates": [[[13.0, 52.0], [13.1, 52.0], [13.1, 52.1], [13.0, 52.1], [13.0, 52.0]]],
}


def make_zone(organization, name: str = "North", purpose: str = "both") -> Zone:
    slug = name.lower().replace(" ", "-")
    return Zone.objects.create(
        organization=organization, name=name, slug=slug, purpose=purpose, geodata=SQUARE
    )


def independent_hmac_hex(key: str, body: bytes) -> str:
    """HMAC-SHA256 written out here, not imported from the code under test."""
    return hmac.new(key.encode("utf-8"), body, hashlib.sha256).hexdigest()


@dataclass
class Received:
    body: bytes
    headers: dict
    at: float

    @property
    def json(self) -> dict:
        return json.loads(self.body)


@dataclass
class Receiver:
    """A webhook endpoint that answers from a script of status codes (then 200)."""

    url: str
    statuses: list[int] = field(default_factory=list)
    delay_seconds: float = 0.0
    requests: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def handle(self, request: Request) -> Response:
        with self.lock:
            self.requests.append(Received(request.get_data(), dict(request.headers), time.time()))
            status = self.statuses.pop(0) if self.statuses else 200
        if self.delay_seconds:
            time.sleep(self.delay_seconds)
        return Response("ok" if status < 300 else "nope", status=status)

    def wait_for(self, count: int, timeout: float = 30.0) -> list[Received]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.requests) >= count:
                    return list(self.requests)
            time.sleep(0.02)
        raise AssertionError(f"expected {count} webhook(s), got {len(self.requests)}")


@pytest.fixture
def receiver(httpserver) -> Receiver:
    result = Receiver(url=httpserver.url_for("/hook"))
    httpserver.expect_request("/hook", method="POST").respond_with_handler(result.handle)
    return result


def _use_broker(url: str) -> None:
    celery_app.conf.broker_url = url
    # Forget connections and producers made for the previous broker.
    celery_app._pool = None
    celery_app.amqp._producer_pool = None


@pytest.fixture
def test_broker():
    """The Celery app publishes to the tests' own Redis database, emptied before and after."""
    previous = celery_app.conf.broker_url
    _use_broker(TEST_BROKER_URL)
    with celery_app.connection_for_write() as connection:
        connection.default_channel.client.flushdb()
    yield celery_app
    with celery_app.connection_for_write() as connection:
        connection.default_channel.client.flushdb()
    _use_broker(previous)


@pytest.fixture
def dead_broker():
    """A broker address nobody listens on: publishing fails at once."""
    previous = celery_app.conf.broker_url
    _use_broker("redis://127.0.0.1:1/0")
    yield
    _use_broker(previous)
    services.broker_breaker.reset()


@pytest.fixture
def celery_worker(transactional_db, test_broker):
    """A real worker (thread pool, as in docker-compose) consuming the test broker."""
    with start_worker(
        celery_app,
        pool="threads",
        concurrency=4,
        perform_ping_check=False,
        shutdown_timeout=10,
    ) as worker:
        yield worker
    connections.close_all()
