"""bench/retention.py: the history and maintenance benchmarks run every retention task of the
beat, run after run, until its backlog is gone. Its list must follow the beat's: a retention
task it missed would leave its backlog beside the measured rounds."""

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from bench import retention
from tenants.models import AuthToken, User
from tests.builders import PASSWORD

#: the beat's periodic tasks that remove nothing
NOT_RETENTION = {"webhooks.sweep", "integrations.release_held_orders", "dispatch.auto_dispatch"}


def test_every_retention_task_of_the_beat_is_run_and_nothing_else(settings):
    beat = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}

    assert set(retention.services()) == beat - NOT_RETENTION


@pytest.mark.django_db
def test_on_a_database_with_nothing_due_each_runs_once_and_sees_the_end():
    for task, service in retention.services().items():
        removed, along, finished = retention.until_done(service, time.monotonic() + 30)

        assert (removed, along, finished) == (0, 0, True), task


@pytest.mark.django_db
def test_a_backlog_is_removed_to_the_end_and_counted(settings):
    settings.RETENTION_BATCH_SIZE = 2
    user = User.objects.create_user(email="tokens@example.com", password=PASSWORD)
    now = timezone.now()
    for n, expires_in in enumerate([-1, -2, -3, -4, -5, 1]):  # hours: five expired, one valid
        AuthToken.objects.create(
            user=user, digest=f"{n:064d}", expires_at=now + timedelta(hours=expires_in)
        )
    service = retention.services()["tenants.delete_expired_auth_tokens"]

    assert retention.until_done(service, time.monotonic() + 30) == (5, 0, True)
    assert AuthToken.objects.count() == 1
