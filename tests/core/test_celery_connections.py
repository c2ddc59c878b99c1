"""A Celery worker keeps its database connection between tasks, as the web process does between
requests (CONN_MAX_AGE), and drops one that saw an error. Celery's Django fixup alone closed it
after every task: a new PostgreSQL backend per webhook delivery."""

import pytest
from celery.fixups.django import DjangoWorkerFixup
from celery.signals import task_postrun, task_prerun
from django.db import connection

from delivery.celery import app
from webhooks import tasks


class _Request:
    is_eager = False


class _Task:
    request = _Request()


def _run_task_hooks(fixup: DjangoWorkerFixup) -> None:
    """What a worker does around a task: the fixup's hooks and the task signals."""
    sender = _Task()
    fixup.on_task_prerun(sender=sender)
    task_prerun.send(sender=tasks.deliver, task_id="t", task=tasks.deliver)
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    task_postrun.send(sender=tasks.deliver, task_id="t", task=tasks.deliver)
    fixup.on_task_postrun(sender=sender)


@pytest.mark.django_db(transaction=True)
def test_the_connection_outlives_a_task():
    fixup = DjangoWorkerFixup(app)
    connection.close()  # a fresh one: the suite's connection may be past CONN_MAX_AGE already
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]

    for _ in range(5):
        _run_task_hooks(fixup)

    assert connection.connection is not None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        assert cursor.fetchone()[0] == backend


@pytest.mark.django_db(transaction=True)
def test_a_connection_past_its_age_is_closed_after_the_task():
    fixup = DjangoWorkerFixup(app)
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    connection.close_at = 0  # past CONN_MAX_AGE

    task_postrun.send(sender=tasks.deliver, task_id="t", task=tasks.deliver)
    fixup.on_task_postrun(sender=_Task())

    assert connection.connection is None
