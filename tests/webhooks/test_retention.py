"""Retention of the webhook outbox (docs/operations.md "Retention"): delivered deliveries go after
30 days, failed ones 90 days after their last attempt, with their attempts; pending ones never;
an event goes once no delivery of it is kept. In batches, safe twice and in parallel; the
delivery log and `recover` work over what is kept, and `recover` refuses a `since` beyond it."""

import logging
import re
import threading
import uuid
from datetime import timedelta

import pytest
from django.db import connections

from tests import builders
from tests.conftest import assert_error
from tests.core.test_metrics import scrape, value
from tests.core.test_openapi_fuzz import RULES_OPENAPI_CANNOT_STATE
from webhooks import retention, services, tasks
from webhooks.errors import DeliveryNotFound
from webhooks.models import Delivery, DeliveryAttempt, DeliveryStatus, Event

NOW = builders.NOW
DAY = timedelta(days=1)
SECOND = timedelta(seconds=1)


@pytest.fixture
def key(organization):
    return builders.api_key(organization, "partner_a", webhook_url="http://127.0.0.1:9/hook")


def event_row(organization, *, created) -> Event:
    return Event.objects.create(
        organization=organization,
        family="partner",
        name="order.created",
        event_id=f"evt_{uuid.uuid4().hex}",
        payload={"externalRef": "SO-1"},
        created_at=created,
        updated_at=created,
    )


def delivery_row(
    organization, key, *, status: str, attempts_at=(), event: Event | None = None, round_start=None
) -> Delivery:
    """A delivery of a new event (or `event`) with an attempt at each of `attempts_at`: the last
    one decides `status`; the round starts at `round_start` (default: the first attempt)."""
    started = round_start or (attempts_at[0] if attempts_at else NOW)
    event = event or event_row(organization, created=started)
    delivery = Delivery.objects.create(
        organization=organization,
        event=event,
        api_key=key.api_key,
        url="http://127.0.0.1:9/hook",
        status=status,
        attempts=len(attempts_at),
        schedule_start=started,
        next_attempt_at=started if status == DeliveryStatus.PENDING else None,
        delivered_at=attempts_at[-1] if status == DeliveryStatus.DELIVERED else None,
        created_at=event.created_at,
    )
    for number, at in enumerate(attempts_at, start=1):
        DeliveryAttempt.objects.create(
            delivery=delivery,
            number=number,
            started_at=at,
            status_code=200 if status == DeliveryStatus.DELIVERED else 503,
            succeeded=status == DeliveryStatus.DELIVERED and number == len(attempts_at),
        )
    return delivery


def delivered(organization, key, ago: timedelta) -> Delivery:
    return delivery_row(organization, key, status=DeliveryStatus.DELIVERED, attempts_at=[NOW - ago])


def failed(organization, key, ago: timedelta) -> Delivery:
    """Failed after two attempts an hour apart, the last `ago` before NOW."""
    last = NOW - ago
    return delivery_row(
        organization,
        key,
        status=DeliveryStatus.FAILED,
        attempts_at=[last - timedelta(hours=1), last],
    )


def kept(*deliveries: Delivery) -> set[uuid.UUID]:
    return set(
        Delivery.objects.filter(pk__in=[d.pk for d in deliveries]).values_list("pk", flat=True)
    )


def ids(*deliveries: Delivery) -> set[uuid.UUID]:
    return {d.pk for d in deliveries}


# ----- what is due goes, what is not stays -----


@pytest.mark.django_db
@pytest.mark.usefixtures("traveller")
def test_delivered_go_after_30_days_and_failed_90_days_after_their_last_attempt(organization, key):
    delivered_due = delivered(organization, key, 30 * DAY + SECOND)
    delivered_young = delivered(organization, key, 30 * DAY - SECOND)
    failed_due = failed(organization, key, 90 * DAY + SECOND)
    failed_young = failed(organization, key, 90 * DAY - SECOND)
    failed_after_31_days = failed(organization, key, 31 * DAY)
    pending_for_ages = delivery_row(
        organization, key, status=DeliveryStatus.PENDING, attempts_at=[NOW - 400 * DAY]
    )
    all_of_them = (
        delivered_due,
        delivered_young,
        failed_due,
        failed_young,
        failed_after_31_days,
        pending_for_ages,
    )

    pruned = retention.deliveries_expired_delete()

    assert (pruned.run.removed, pruned.run.finished) == (2, True)
    assert kept(*all_of_them) == ids(*all_of_them) - ids(delivered_due, failed_due)
    # Their attempts and events went with them; the others' stay.
    assert not DeliveryAttempt.objects.filter(delivery_id__in=ids(delivered_due, failed_due))
    assert DeliveryAttempt.objects.count() == 1 + 2 + 2 + 1
    assert pruned.events == 2
    assert set(Event.objects.values_list("pk", flat=True)) == {
        d.event_id for d in all_of_them if d not in (delivered_due, failed_due)
    }


@pytest.mark.django_db
@pytest.mark.usefixtures("traveller")
def test_a_failed_delivery_counts_from_its_last_attempt_not_its_round_start(organization, key):
    # Its round started 90 days and 2 hours ago; its last retry failed 90 days less an hour ago.
    late_retry = delivery_row(
        organization,
        key,
        status=DeliveryStatus.FAILED,
        round_start=NOW - 90 * DAY - timedelta(hours=2),
        attempts_at=[NOW - 90 * DAY - timedelta(hours=2), NOW - 90 * DAY + timedelta(hours=1)],
    )
    # Redelivered and failed again yesterday: the old first round does not count.
    redelivered = delivery_row(
        organization,
        key,
        status=DeliveryStatus.FAILED,
        round_start=NOW - DAY,
        attempts_at=[NOW - 200 * DAY, NOW - DAY],
        event=event_row(organization, created=NOW - 200 * DAY),
    )

    assert retention.deliveries_expired_delete().run.removed == 0
    assert kept(late_retry, redelivered) == ids(late_retry, redelivered)


@pytest.mark.django_db
def test_the_settings_set_the_retention(organization, key, settings, traveller):
    settings.WEBHOOK_DELIVERED_RETENTION_DAYS = 7
    settings.WEBHOOK_FAILED_RETENTION_DAYS = 14
    week_old = delivered(organization, key, 7 * DAY + SECOND)
    fortnight_old = failed(organization, key, 14 * DAY + SECOND)
    younger = failed(organization, key, 14 * DAY - SECOND)

    assert retention.deliveries_expired_delete().run.removed == 2
    assert kept(week_old, fortnight_old, younger) == ids(younger)


@pytest.mark.django_db
@pytest.mark.usefixtures("traveller")
def test_an_event_is_kept_while_any_of_its_deliveries_is(organization, key):
    shared = event_row(organization, created=NOW - 40 * DAY)
    delivery_row(
        organization,
        key,
        status=DeliveryStatus.DELIVERED,
        attempts_at=[NOW - 40 * DAY],
        event=shared,
    )
    other_key = builders.api_key(organization, "partner_b", webhook_url="http://127.0.0.1:9/b")
    still_failing = delivery_row(
        organization,
        other_key,
        status=DeliveryStatus.FAILED,
        attempts_at=[NOW - 40 * DAY],
        event=shared,
    )
    # Never had a delivery (no URL, or a key that does not take it): goes after 90 days, the
    # longer retention.
    event_row(organization, created=NOW - 90 * DAY - SECOND)
    never_sent_young = event_row(organization, created=NOW - 90 * DAY + SECOND)

    pruned = retention.deliveries_expired_delete()
    assert (pruned.run.removed, pruned.events) == (1, 0)
    assert retention.events_unreferenced_delete() == 1
    assert set(Event.objects.values_list("pk", flat=True)) == {shared.pk, never_sent_young.pk}

    # Once its last delivery is gone, the event goes with it.
    Delivery.objects.filter(pk=still_failing.pk).update(schedule_start=NOW - 100 * DAY)
    DeliveryAttempt.objects.filter(delivery=still_failing).update(started_at=NOW - 100 * DAY)
    pruned = retention.deliveries_expired_delete()
    assert (pruned.run.removed, pruned.events) == (1, 1)
    assert retention.events_unreferenced_delete() == 0
    assert list(Event.objects.values_list("pk", flat=True)) == [never_sent_young.pk]


# ----- batches, runs, tasks -----


@pytest.mark.django_db
@pytest.mark.usefixtures("traveller")
def test_a_run_deletes_in_batches_until_nothing_is_left(organization, key):
    due = [delivered(organization, key, 40 * DAY + n * SECOND) for n in range(5)]
    young = delivered(organization, key, DAY)

    run = retention.deliveries_expired_delete(batch_size=2).run

    # Delivered: 2 + 2 + 1; failed: one empty look.
    assert (run.removed, run.batches, run.finished) == (5, 3, True)
    assert kept(*due, young) == ids(young)


@pytest.mark.django_db
@pytest.mark.usefixtures("traveller")
def test_a_run_stops_when_its_time_budget_is_spent_and_the_next_goes_on(
    organization, key, settings
):
    settings.RETENTION_TIME_BUDGET_SECONDS = 0
    for n in range(5):
        delivered(organization, key, 40 * DAY + n * SECOND)

    first = retention.deliveries_expired_delete(batch_size=2).run

    # One batch, then the budget is spent: the failed ones wait for the next run as well.
    assert (first.removed, first.batches, first.finished) == (2, 1, False)
    assert Delivery.objects.count() == 3
    assert retention.deliveries_expired_delete(batch_size=2).run.removed == 2
    assert retention.deliveries_expired_delete(batch_size=2).run.removed == 1
    assert not Delivery.objects.exists()


@pytest.mark.django_db
def test_the_tasks_log_one_line_and_count_what_they_removed(organization, key, traveller, caplog):
    before = scrape()
    delivered(organization, key, 31 * DAY)
    failed(organization, key, 91 * DAY)
    event_row(organization, created=NOW - 100 * DAY)  # never had a delivery
    caplog.set_level(logging.INFO)

    assert tasks.delete_old_deliveries() == 2
    assert tasks.delete_old_events() == 1
    assert tasks.delete_old_deliveries() == 0  # safe to run again: nothing left to do
    assert tasks.delete_old_events() == 0

    assert [(r.getMessage(), r.fields) for r in caplog.records if r.name == "webhooks.tasks"] == [
        (
            "webhooks.delete_old_deliveries deleted 2 webhook deliveries and 2 of their events",
            {"task": "webhooks.delete_old_deliveries", "deleted": 2, "webhook_events": 2},
        ),
        (
            "webhooks.delete_old_events deleted 1 webhook events",
            {"task": "webhooks.delete_old_events", "deleted": 1},
        ),
    ]
    after = scrape()
    for kind, removed in (("webhook_deliveries", 2), ("webhook_events", 3)):
        was = value(before, "retention_removed_total", kind=kind, default=0)
        assert value(after, "retention_removed_total", kind=kind) == was + removed


def test_the_beat_runs_the_retention_tasks_hourly(settings):
    schedule = {entry["task"]: entry for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    for task in ("webhooks.delete_old_deliveries", "webhooks.delete_old_events"):
        assert schedule[task]["schedule"] == 3600.0
        assert schedule[task]["options"] == {"expires": 3600.0}


@pytest.mark.django_db(transaction=True)
def test_two_runs_at_once_delete_everything_once(organization, key):
    """Two workers running the task at the same moment, each on its own database connection:
    disjoint batches (SKIP LOCKED), no error, every delivery deleted and counted once."""
    count = 40
    for n in range(count):
        delivered(organization, key, 40 * DAY + n * SECOND)
    barrier = threading.Barrier(2)
    removed: list[int] = []
    events: list[int] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            barrier.wait()
            pruned = retention.deliveries_expired_delete(now=NOW, batch_size=2)
            removed.append(pruned.run.removed)
            events.append(pruned.events)
        except BaseException as error:  # reported below
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert sum(removed) == sum(events) == count
    assert not Delivery.objects.exists()
    assert not DeliveryAttempt.objects.exists()
    assert not Event.objects.exists()


# ----- the delivery log and recover over what is kept -----


@pytest.fixture
def manager(organization, traveller):
    """An admin's bearer-token client, logged in at NOW (the token lasts 12 hours from there)."""
    return builders.manager_client(organization, "ops@example.com")


def recover(manager, organization, since):
    return manager.post(
        f"/api/manage/organizations/{organization.id}/webhook-deliveries/recover",
        {"since": since.isoformat().replace("+00:00", "Z")},
        format="json",
    )


@pytest.mark.django_db
def test_the_delivery_log_lists_what_is_kept(organization, key, manager, traveller):
    young = delivered(organization, key, 29 * DAY)
    still_failed = failed(organization, key, 89 * DAY)
    delivered(organization, key, 31 * DAY)
    failed(organization, key, 91 * DAY)

    retention.deliveries_expired_delete()

    page = manager.get(f"/api/manage/organizations/{organization.id}/webhook-deliveries").json()
    assert page["total"] == 2
    assert {item["id"] for item in page["items"]} == {str(young.pk), str(still_failed.pk)}


@pytest.mark.django_db
def test_recover_works_within_the_retention_and_refuses_a_since_beyond_it(
    organization, key, manager, traveller
):
    kept_failure = failed(organization, key, 89 * DAY)
    retention.deliveries_expired_delete()

    response = recover(manager, organization, NOW - 90 * DAY)
    assert response.status_code == 202, response.content
    assert response.json() == {"queued": 1}
    kept_failure.refresh_from_db()
    assert kept_failure.status == DeliveryStatus.PENDING

    body = assert_error(
        recover(manager, organization, NOW - 90 * DAY - SECOND),
        400,
        ["since must not be more than 90 days ago: failed deliveries are kept 90 days"],
        code="recover_since_beyond_retention",
    )
    # A rule of the service's clock: named among those OpenAPI cannot state (the fuzz test).
    assert any(re.fullmatch(rule, body["message"][0]) for rule in RULES_OPENAPI_CANNOT_STATE)


@pytest.mark.django_db
def test_the_refusal_follows_the_setting(organization, key, manager, traveller, settings):
    settings.WEBHOOK_FAILED_RETENTION_DAYS = 30

    assert recover(manager, organization, NOW - 30 * DAY).status_code == 202
    assert_error(
        recover(manager, organization, NOW - 31 * DAY),
        400,
        ["since must not be more than 30 days ago: failed deliveries are kept 30 days"],
        code="recover_since_beyond_retention",
    )


@pytest.mark.django_db
@pytest.mark.usefixtures("traveller")
def test_redelivering_a_delivery_retention_just_deleted_is_a_404(organization, key):
    gone = delivered(organization, key, 31 * DAY)
    retention.deliveries_expired_delete()

    with pytest.raises(DeliveryNotFound):
        services.delivery_redeliver(delivery=gone)


@pytest.mark.django_db
def test_recover_needs_no_since_in_the_admin_action(organization, key, traveller):
    """The deliveries' admin action names deliveries, not an interval: no refusal there."""
    old = failed(organization, key, 89 * DAY)

    assert services.deliveries_recover(organization_id=organization.id, delivery_ids=[old.pk]) == 1
