"""The periodic sweeps log only when they did something (docs/operations.md "Logs"): Celery's
own lines about their runs are filtered out, a sweep that acted writes one line of its own, and
everything about
other tasks, and every failure, is still written."""

import contextlib
import json
import logging
import os
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
from celery.app import trace
from django.conf import settings
from django.db import connection
from django.utils import timezone

from tests import builders
from webhooks import queueing, tasks
from webhooks.models import Delivery

ROOT = Path(__file__).resolve().parents[2]


def celery_context(name: str) -> dict:
    """What Celery's worker passes with its lines about a task (celery.app.trace)."""
    return {"id": "0f7c", "name": name, "return_value": "0", "runtime": 0.01, "args": "()"}


def test_celery_lines_about_periodic_runs_are_dropped_and_failures_kept(caplog):
    caplog.set_level(logging.INFO)

    trace.info(trace.LOG_SUCCESS, celery_context("webhooks.sweep"))
    trace.info(trace.LOG_SUCCESS, celery_context("slots.delete_expired_holds"))
    logging.getLogger("celery.beat").info(
        "Scheduler: Sending due task %s (%s)", "webhooks-sweep", "webhooks.sweep"
    )
    logging.getLogger("celery.worker.request").info(
        "Discarding revoked task: %s[%s]", "webhooks.sweep", "0f7c"
    )
    trace.info(trace.LOG_SUCCESS, celery_context("webhooks.deliver"))
    failure = {**celery_context("webhooks.sweep"), "description": "raised", "exc": "boom"}
    trace.logger.error(trace.LOG_FAILURE, failure, extra={"data": failure})

    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("INFO", "Task webhooks.deliver[0f7c] succeeded in 0.01s: 0"),
        ("ERROR", "Task webhooks.sweep[0f7c] raised: boom"),
    ]


@pytest.mark.django_db
def test_a_sweep_with_nothing_to_do_logs_nothing_and_one_that_queued_logs_one_line(
    organization, django_capture_on_commit_callbacks, caplog
):
    caplog.set_level(logging.INFO)
    builders.api_key(organization, "partner_a", webhook_url="http://127.0.0.1:9/down")
    builders.order_event(organization, "SO-1")
    builders.order_event(organization, "SO-2")

    assert tasks.sweep() == 0  # their messages are live
    assert caplog.records == []

    # Their messages were lost (the broker was away at commit): the sweep queues them again.
    stale = timezone.now() - timedelta(seconds=queueing.REQUEUE_AFTER_SECONDS + 1)
    Delivery.objects.filter(organization=organization).update(queued_at=stale)
    with django_capture_on_commit_callbacks():
        assert tasks.sweep() == 2

    (record,) = caplog.records
    assert (record.name, record.levelname) == ("webhooks.tasks", "INFO")
    assert record.getMessage() == "webhooks.sweep queued 2 due deliveries"
    assert record.fields == {"task": "webhooks.sweep", "queued": 2}


@contextlib.contextmanager
def celery_worker_and_beat(tmp_path, **env):
    """A Celery worker and beat as `make run` starts them, on the test database and Redis;
    yields the paths of their logs."""
    database = connection.settings_dict
    host = f"{database['HOST']}:{database['PORT'] or 5432}"
    environment = {
        **os.environ,
        "DATABASE_URL": f"postgres://{database['USER']}@{host}/{database['NAME']}",
        "REDIS_URL": settings.REDIS_URL,
        **env,
    }
    celery = [sys.executable, "-m", "celery", "-A", "delivery.celery:app"]
    commands = {
        "worker": [*celery, "worker", "--loglevel=INFO", "--pool=threads", "--concurrency=2"],
        "beat": [*celery, "beat", "--loglevel=INFO", "--schedule", str(tmp_path / "schedule")],
    }
    processes, logs = [], {}
    try:
        for role, command in commands.items():
            logs[role] = tmp_path / f"{role}.log"
            with open(logs[role], "wb") as log:
                processes.append(
                    subprocess.Popen(
                        command, cwd=ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT
                    )
                )
        yield logs
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=30)


def json_lines(path: Path) -> list[dict]:
    """The log's JSON lines (Celery prints its start banner as text before logging starts)."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.startswith("{")]


def wait_for(path: Path, message: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not any(message in entry["message"] for entry in json_lines(path)):
        assert time.monotonic() < deadline, f"no {message!r} in {path.read_text()[-3000:]}"
        time.sleep(0.2)


@pytest.mark.django_db(transaction=True)
def test_worker_and_beat_write_json_and_nothing_about_idle_sweeps(tmp_path):
    """A real worker and beat with a sweep every second: idle, neither writes a line about it;
    once a retry is due, the sweep's own line says it queued it, and the delivery task (real
    work) is logged as Celery logs it."""
    env = {
        "LOG_FORMAT": "json",
        "WEBHOOK_SWEEP_INTERVAL_SECONDS": "1",
        # Later than the sweep looks ahead (its interval + 1 s): the failed attempt leaves the
        # retry to the sweep.
        "WEBHOOK_RETRY_SCHEDULE": "0,4",
    }
    with celery_worker_and_beat(tmp_path, **env) as logs:
        wait_for(logs["worker"], "ready.")
        wait_for(logs["beat"], "beat: Starting...")
        time.sleep(3)  # three sweeps with nothing to do
        idle = json_lines(logs["worker"]) + json_lines(logs["beat"])

        organization = builders.organization()
        builders.api_key(organization, "partner_a", webhook_url="http://127.0.0.1:9/down")
        builders.order_event(organization, "SO-1")  # attempt 1 fails; the retry is swept
        wait_for(logs["worker"], "webhooks.sweep queued 1 due deliveries")
        wait_for(logs["worker"], "attempt 2 failed")

    assert [e for e in idle if "sweep" in e["message"]] == []
    worker = json_lines(logs["worker"])
    beat = json_lines(logs["beat"])
    swept = [e for e in worker if e["logger"] == "webhooks.tasks"]
    assert {(e["task"], e["queued"]) for e in swept} == {("webhooks.sweep", 1)}
    assert [e for e in worker + beat if "webhooks.sweep[" in e["message"]] == []
    assert [e for e in beat if "Sending due task" in e["message"]] == []
    real_work = [e["message"] for e in worker if e["logger"] == "celery.app.trace"]
    assert any(m.startswith("Task webhooks.deliver[") for m in real_work), worker
