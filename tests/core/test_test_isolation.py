"""The test run leaves a running service alone (docs/operations.md "Configuration",
TEST_REDIS_URL): its Redis database is not the service's, so emptying it before and after every
test (conftest.py)
and the webhook tests' broker flushes cannot wipe the service's queue, rate-limit counters or key
cache. The service's database is only read here, never written."""

import os
import subprocess
import sys
import uuid

import redis
from django.conf import settings
from django.core.cache import cache

from delivery.celery import app as celery_app
from tests import settings as test_settings
from tests.gunicorn import ROOT
from tests.webhooks.conftest import TEST_BROKER_URL

SERVICE = test_settings.redis_database(test_settings.SERVICE_REDIS_URL)
OWN = test_settings.redis_database(test_settings.TEST_REDIS_URL)


def test_the_test_run_uses_a_redis_database_that_is_not_the_services():
    assert OWN != SERVICE
    assert test_settings.redis_database(settings.REDIS_URL) == OWN
    assert test_settings.redis_database(settings.CACHES["default"]["LOCATION"]) == OWN
    assert test_settings.redis_database(settings.CELERY_BROKER_URL) == OWN
    assert test_settings.redis_database(celery_app.conf.broker_url) == OWN
    # What the webhook tests' worker consumes and flushes is not the service's either.
    assert test_settings.redis_database(TEST_BROKER_URL) != SERVICE


def test_processes_the_tests_start_use_the_tests_redis_database():
    # tests/gunicorn.py and the manage.py runs pass this process's environment on, and load
    # the service's own settings module with it.
    assert os.environ["DJANGO_SETTINGS_MODULE"] == "delivery.settings"
    result = subprocess.run(
        [sys.executable, "-c", "from django.conf import settings; print(settings.REDIS_URL)"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert test_settings.redis_database(result.stdout.strip()) == OWN


def test_what_the_tests_cache_lands_in_their_own_database_only():
    probe = f"isolation-probe-{uuid.uuid4()}"
    cache.set(probe, "tests", timeout=60)
    stored_key = cache.make_key(probe)
    own = redis.Redis.from_url(test_settings.TEST_REDIS_URL)
    service = redis.Redis.from_url(test_settings.SERVICE_REDIS_URL)
    assert own.exists(stored_key) == 1
    assert service.exists(stored_key) == 0


def test_the_tests_refuse_to_run_on_the_services_redis_database():
    """The same database spelt another way is still refused, before any test could flush it."""
    result = subprocess.run(
        [sys.executable, "-c", "import tests.settings"],
        cwd=ROOT,
        env={
            **os.environ,
            "REDIS_URL": "redis://127.0.0.1:6379/4",
            "TEST_REDIS_URL": "redis://localhost:6379?db=4",
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode != 0
    assert "TEST_REDIS_URL (redis://localhost:6379?db=4) is the service's Redis database" in (
        result.stderr
    )


def test_the_default_test_database_is_not_the_services_default():
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import tests.settings as s; print(s.SERVICE_REDIS_URL, s.TEST_REDIS_URL)",
        ],
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "TEST_REDIS_URL")},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert result.stdout.split() == ["redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/15"]
