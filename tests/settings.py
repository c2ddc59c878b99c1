"""The test run's settings: the service's own (delivery.settings) on a Redis database of the
tests' own, so `make test` beside a running `make run` leaves that service's queue, rate-limit
counters and key cache alone (tests flush their database before and after every test).

pytest-django imports this module (pyproject.toml) before any conftest or test. PostgreSQL needs
nothing here: pytest-django creates its own `test_<name>` database."""

import os
from urllib.parse import parse_qs, urlsplit

from django.core.exceptions import ImproperlyConfigured

#: What the service run from this shell uses: REDIS_URL, or the settings' default.
SERVICE_REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
#: The tests' own database: db 15 of the same server unless TEST_REDIS_URL says otherwise
#: (the benchmarks use 9 to 12 and 14, the webhook tests' Celery broker 13).
TEST_REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


def redis_database(url: str) -> tuple[str, int, int]:
    """(host, port, database number) of a redis:// URL: two URLs naming one database compare
    equal however they are spelt."""
    parts = urlsplit(url)
    host = parts.hostname or "127.0.0.1"
    number = parts.path.strip("/") or parse_qs(parts.query).get("db", ["0"])[0]
    return ("127.0.0.1" if host == "localhost" else host, parts.port or 6379, int(number))


if redis_database(TEST_REDIS_URL) == redis_database(SERVICE_REDIS_URL):
    raise ImproperlyConfigured(
        f"TEST_REDIS_URL ({TEST_REDIS_URL}) is the service's Redis database (REDIS_URL): the tests "
        "empty their database before and after every test. Give them another one."
    )

# Through the environment, so the processes tests start (gunicorn, manage.py) get it too; they
# load the service's settings module itself, as `make run` does.
os.environ["REDIS_URL"] = TEST_REDIS_URL
os.environ["DJANGO_SETTINGS_MODULE"] = "delivery.settings"

from delivery.settings import *  # noqa: E402, F403 - the service's settings, with the above

# Fair turns (delivery/fairness.py) would make the concurrency tests' requests of one tenant
# take turns in this one process, and their races would never happen: off here (on in
# tests/core/test_fairness.py and the gunicorn the tests start).
FAIR_RUNNING_PER_WORKER = 0
