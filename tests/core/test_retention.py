"""The retention helper (delivery/retention.py): batches of a set size, each its own transaction
taking its rows with FOR UPDATE SKIP LOCKED in the order of an indexed column, a time budget per
run, and the retention tasks' one line and metric (docs/operations.md "Retention"). The apps'
rules are tested beside them (tests/<app>/test_retention.py); here the rows are management
tokens, the simplest table with a due time."""

import logging
import threading
from datetime import timedelta

import pytest
from django.db import connection, connections, transaction
from django.db.models import QuerySet
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from delivery import retention
from tenants.models import AuthToken, User
from tests import builders
from tests.core.test_metrics import scrape, value

pytestmark = pytest.mark.django_db


def tokens(count: int, *, expired_ago: timedelta = timedelta(hours=1)) -> list[AuthToken]:
    user = User.objects.filter(email="tokens@example.com").first() or User.objects.create_user(
        email="tokens@example.com", password=builders.PASSWORD
    )
    now = timezone.now()
    return [
        AuthToken.objects.create(
            user=user,
            digest=f"{n:064d}",
            expires_at=now - expired_ago - timedelta(seconds=n),
        )
        for n in range(count)
    ]


def expired() -> QuerySet:
    return AuthToken.objects.filter(expires_at__lte=timezone.now())


def test_a_batch_size_of_2_deletes_5_rows_in_3_batches_of_their_own():
    tokens(5)

    with CaptureQueriesContext(connection) as queries:
        run = retention.delete_in_batches(expired(), order_by="expires_at", batch_size=2)

    assert run == retention.BatchRun(removed=5, batches=3, finished=True)
    assert not AuthToken.objects.exists()
    selects = [q["sql"] for q in queries if q["sql"].startswith("SELECT")]
    assert len(selects) == 3
    assert all(
        sql.endswith('LIMIT 2 FOR UPDATE OF "tenants_authtoken" SKIP LOCKED')
        and "ORDER BY 1 ASC, 2 ASC" in sql
        for sql in selects
    ), selects
    # Each batch in a transaction of its own (savepoints inside the test's own transaction).
    assert sum(q["sql"].startswith("SAVEPOINT") for q in queries) == 3


def test_each_batch_starts_after_the_last_row_of_the_one_before():
    """Rows the rule keeps are walked once per run: the next batch starts where the last ended
    (keyset order), not at the oldest row again."""
    tokens(4)

    with CaptureQueriesContext(connection) as queries:
        retention.in_batches(expired(), len, order_by="expires_at", batch_size=2)

    selects = [q["sql"] for q in queries if q["sql"].startswith("SELECT")]
    assert len(selects) == 3  # 2, 2, then nothing after the fourth
    assert '"expires_at" >=' not in selects[0]
    assert all('"expires_at" >=' in sql for sql in selects[1:])


def test_a_run_stops_after_the_batch_that_spends_its_budget():
    tokens(5)

    first = retention.delete_in_batches(
        expired(), order_by="expires_at", batch_size=2, until=retention.deadline(0)
    )

    assert first == retention.BatchRun(removed=2, batches=1, finished=False)
    assert AuthToken.objects.count() == 3
    assert retention.delete_in_batches(expired(), order_by="expires_at").removed == 3


def test_the_defaults_come_from_the_settings(settings):
    settings.RETENTION_BATCH_SIZE = 3
    settings.RETENTION_TIME_BUDGET_SECONDS = 0
    tokens(7)

    run = retention.delete_in_batches(expired(), order_by="expires_at")

    assert run == retention.BatchRun(removed=3, batches=1, finished=False)


def test_nothing_due_is_one_look_and_no_batch():
    tokens(2, expired_ago=timedelta(hours=-1))  # still valid

    assert retention.delete_in_batches(expired(), order_by="expires_at") == retention.BatchRun()
    assert AuthToken.objects.count() == 2


@pytest.mark.django_db(transaction=True)
def test_a_row_a_request_holds_is_skipped_without_waiting_and_taken_by_the_next_run():
    held = tokens(3)[-1]  # the oldest: the first batch's row
    locked = threading.Event()
    release = threading.Event()

    def request_holding_the_row() -> None:
        try:
            with transaction.atomic():
                AuthToken.objects.select_for_update().get(pk=held.pk)
                locked.set()
                release.wait(timeout=30)
        finally:
            connections.close_all()

    request = threading.Thread(target=request_holding_the_row)
    request.start()
    try:
        assert locked.wait(timeout=30)
        run = retention.delete_in_batches(expired(), order_by="expires_at", batch_size=1)
    finally:
        release.set()
        request.join()

    # It did not wait for the lock: it took the two others and left the held one.
    assert run.removed == 2
    assert list(AuthToken.objects.values_list("pk", flat=True)) == [held.pk]
    assert retention.delete_in_batches(expired(), order_by="expires_at").removed == 1


def test_a_task_logs_one_line_and_counts_a_metric_only_when_it_removed_something(caplog):
    logger = logging.getLogger("tests.retention")
    before = value(scrape(), "retention_removed_total", kind="test_rows", default=0)
    caplog.set_level(logging.INFO)

    assert retention.retention_result(logger, "tests.prune", "test_rows", 0, "rows") == 0
    assert retention.retention_result(logger, "tests.prune", "test_rows", 4, "rows") == 4

    assert [(r.getMessage(), r.fields) for r in caplog.records if r.name == logger.name] == [
        ("tests.prune deleted 4 rows", {"task": "tests.prune", "deleted": 4})
    ]
    assert value(scrape(), "retention_removed_total", kind="test_rows") == before + 4
