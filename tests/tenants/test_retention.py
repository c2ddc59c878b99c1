"""Retention of management tokens (docs/operations.md "Retention"): a token past its 12 hours
answers 401 already; the hourly task deletes its row, in batches, and leaves live tokens be."""

import logging
from datetime import timedelta

import pytest

from tenants import services, tasks
from tenants.models import AuthToken
from tests import builders
from tests.conftest import assert_error

pytestmark = pytest.mark.django_db

NOW = builders.NOW


def drivers(client, organization):
    return client.get(f"/api/manage/organizations/{organization.id}/drivers")


def test_expired_tokens_go_and_live_ones_stay(organization, traveller, fast_password_hashing):
    first = builders.manager_client(organization, "first@example.com")
    traveller.shift(timedelta(hours=1))
    second = builders.manager_client(organization, "second@example.com")

    traveller.move_to(NOW + timedelta(hours=12))  # the first token's expiry: it ends now
    assert services.auth_tokens_expired_delete() == 1

    assert_error(drivers(first, organization), 401, "Invalid or missing token")
    assert drivers(second, organization).status_code == 200
    assert AuthToken.objects.count() == 1
    traveller.move_to(NOW + timedelta(hours=13))
    assert services.auth_tokens_expired_delete() == 1
    assert not AuthToken.objects.exists()


def test_the_task_deletes_in_batches_logs_one_line_and_runs_again_safely(
    organization, traveller, fast_password_hashing, caplog, settings
):
    settings.RETENTION_BATCH_SIZE = 2
    for n in range(5):
        builders.manager_client(organization, f"admin{n}@example.com")
    traveller.shift(timedelta(hours=12, seconds=1))
    caplog.set_level(logging.INFO)

    assert tasks.delete_expired_auth_tokens() == 5
    assert tasks.delete_expired_auth_tokens() == 0

    assert [(r.getMessage(), r.fields) for r in caplog.records if r.name == "tenants.tasks"] == [
        (
            "tenants.delete_expired_auth_tokens deleted 5 expired management tokens",
            {"task": "tenants.delete_expired_auth_tokens", "deleted": 5},
        )
    ]
