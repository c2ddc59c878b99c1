"""The reference task of the webhook benchmark (docs/performance.md: "a no-op Celery task per
second").

It does nothing but count itself in Redis, so the benchmark can tell when all have run.
Loaded into the worker with `-I bench.webhooks.noop`; never part of the service.
"""

import redis
from django.conf import settings

from delivery.celery import app

COUNTER_KEY = "bench:webhooks:noop"

_client: redis.Redis | None = None


def counter() -> redis.Redis:
    global _client  # noqa: PLW0603 - one connection pool per worker process
    if _client is None:
        _client = redis.Redis.from_url(settings.REDIS_URL)
    return _client


@app.task(name="bench.noop", acks_late=True, ignore_result=True)
def noop() -> None:
    counter().incr(COUNTER_KEY)
