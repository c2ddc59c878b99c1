"""A delivery task sends its share of its destination's due backlog in one claim (sending
delivery_send): a burst costs the worker one claim and one record per batch, and the messages
of the deliveries a batch took find nothing to do. A transaction's new deliveries to one
destination go out in one message (queueing.new_delivery_enqueue_on_commit)."""

import base64
import json
import uuid
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from tests import builders
from webhooks import queueing, sending, tasks
from webhooks.models import Delivery, DeliveryAttempt, DeliveryStatus

pytestmark = pytest.mark.django_db

T0 = datetime(2030, 3, 4, 10, 15, 30, tzinfo=UTC)


def burst(organization, count: int) -> list[Delivery]:
    """`count` events one second apart, oldest first."""
    with time_machine.travel(T0, tick=False) as clock:
        for n in range(count):
            clock.move_to(T0 + timedelta(seconds=n))
            builders.order_event(organization, f"R-{n}", order_id=str(uuid.uuid4()))
    return list(Delivery.objects.filter(organization=organization).order_by("next_attempt_at"))


def refs(receiver) -> list[str]:
    return [r.json["payload"]["externalRef"] for r in receiver.requests]


def test_a_task_sends_its_share_of_the_backlog_oldest_first(organization, receiver, settings):
    """With 2 slots and 8 due deliveries, the task of the newest one sends it, then the 3
    oldest others (half the backlog); the next task takes half of what is left, and so on."""
    settings.WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION = 2
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    deliveries = burst(organization, 8)
    with time_machine.travel(T0 + timedelta(seconds=10), tick=False):
        assert tasks.deliver(str(deliveries[-1].id)) is True
        assert refs(receiver) == ["R-7", "R-0", "R-1", "R-2"]
        # Their messages find them delivered; another's sends the rest.
        assert [tasks.deliver(str(d.id)) for d in deliveries[:3]] == [False] * 3
        assert tasks.deliver(str(deliveries[3].id)) is True
        assert refs(receiver)[4:] == ["R-3", "R-4"]
        assert [tasks.deliver(str(d.id)) for d in deliveries[4:7]] == [False, True, True]

    assert refs(receiver) == ["R-7", "R-0", "R-1", "R-2", "R-3", "R-4", "R-5", "R-6"]
    assert set(Delivery.objects.values_list("status", "attempts", "claim_token")) == {
        (DeliveryStatus.DELIVERED, 1, None)
    }
    assert DeliveryAttempt.objects.filter(succeeded=True, number=1).count() == 8


def test_a_failed_attempt_ends_the_batch_and_the_rest_are_still_sent(
    organization, receiver, settings
):
    """A failure is recorded as a retry of its own; the batch's unsent deliveries are given
    back and the task sends them as waiting deliveries (nothing is lost or sent twice)."""
    settings.WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION = 1
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    deliveries = burst(organization, 4)
    receiver.statuses = [200, 503]
    with time_machine.travel(T0 + timedelta(seconds=10), tick=False):
        assert tasks.deliver(str(deliveries[0].id)) is True

    assert refs(receiver) == ["R-0", "R-1", "R-2", "R-3"]
    states = {
        d.event.payload["externalRef"]: (d.status, d.attempts, d.claim_token)
        for d in Delivery.objects.select_related("event")
    }
    assert states == {
        "R-0": (DeliveryStatus.DELIVERED, 1, None),
        "R-1": (DeliveryStatus.PENDING, 1, None),
        "R-2": (DeliveryStatus.DELIVERED, 1, None),
        "R-3": (DeliveryStatus.DELIVERED, 1, None),
    }


def test_a_single_attempt_takes_no_batch(organization, receiver):
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    deliveries = burst(organization, 3)
    with time_machine.travel(T0 + timedelta(seconds=10), tick=False):
        assert sending.delivery_attempt(delivery_id=deliveries[0].id) is True
    assert refs(receiver) == ["R-0"]


def published(broker) -> list[list[str]]:
    """The delivery ids of each message waiting in the test broker, in publishing order."""
    with broker.connection_for_write() as conn:
        messages = conn.default_channel.client.lrange("celery", 0, -1)
    bodies = [json.loads(base64.b64decode(json.loads(m)["body"])) for m in reversed(messages)]
    return [args for args, _, _ in bodies]


def ids_of(organization, platform: str) -> list[str]:
    deliveries = Delivery.objects.filter(organization=organization, api_key__platform=platform)
    return [str(pk) for pk in deliveries.order_by("created_at").values_list("pk", flat=True)]


def test_a_transactions_new_deliveries_go_in_one_message_per_destination(
    organization, test_broker, django_capture_on_commit_callbacks
):
    builders.api_key(organization, "partner_a", webhook_url="http://127.0.0.1:9/a")
    builders.api_key(organization, "partner_b", webhook_url="http://127.0.0.1:9/b")
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        for n, platform in enumerate(["partner_a", "partner_b", "partner_a", "partner_a"]):
            builders.order_event(
                organization, f"R-{n}", order_id=str(uuid.uuid4()), platform=platform
            )

    assert len(callbacks) == 4  # each delivery's, the first publishing them all
    assert published(test_broker) == [
        ids_of(organization, "partner_a"),
        ids_of(organization, "partner_b"),
    ]


def test_a_rolled_back_delivery_is_not_published_with_the_next_ones(
    organization, test_broker, django_capture_on_commit_callbacks
):
    builders.api_key(organization, "partner_a", webhook_url="http://127.0.0.1:9/a")
    with django_capture_on_commit_callbacks(execute=True):
        with pytest.raises(RuntimeError), transaction.atomic():
            builders.order_event(organization, "R-rolled-back", order_id=str(uuid.uuid4()))
            raise RuntimeError("the change failed")
        builders.order_event(organization, "R-committed", order_id=str(uuid.uuid4()))

    assert published(test_broker) == [ids_of(organization, "partner_a")]
    assert len(ids_of(organization, "partner_a")) == 1


def test_a_message_of_several_deliveries_sends_them_oldest_first(organization, receiver, settings):
    settings.WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION = 1
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    deliveries = burst(organization, 3)
    with time_machine.travel(T0 + timedelta(seconds=10), tick=False):
        assert tasks.deliver(*[str(d.id) for d in reversed(deliveries)]) is True

    assert refs(receiver) == ["R-0", "R-1", "R-2"]
    assert set(Delivery.objects.values_list("status", flat=True)) == {DeliveryStatus.DELIVERED}


def test_a_message_whose_destination_is_busy_leaves_all_its_deliveries_waiting(
    organization, receiver, settings
):
    settings.WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION = 1
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    on_the_wire, *others = burst(organization, 3)
    now = T0 + timedelta(seconds=10)
    with time_machine.travel(now, tick=False):
        Delivery.objects.filter(pk=on_the_wire.pk).update(
            claim_token=uuid.uuid4(), claimed_until=now + queueing.claim_lease()
        )
        assert tasks.deliver(*[str(d.id) for d in others]) is False

    assert receiver.requests == []
    waiting = Delivery.objects.filter(pk__in=[d.id for d in others])
    assert set(waiting.values_list("status", "attempts", "queued_at")) == {
        (DeliveryStatus.PENDING, 0, None)
    }


def test_a_batch_starts_no_attempt_after_its_time_and_the_rest_are_still_sent(
    organization, receiver, settings, monkeypatch
):
    """Past BATCH_SECONDS after its claim a batch stops (its claim would no longer count against
    the destination's limit); the rest are given back and claimed again, none lost."""
    settings.WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION = 1
    monkeypatch.setattr(sending, "BATCH_SECONDS", 0)
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    deliveries = burst(organization, 3)
    with (
        time_machine.travel(T0 + timedelta(seconds=10), tick=False),
        CaptureQueriesContext(connection) as queries,
    ):
        assert tasks.deliver(str(deliveries[0].id)) is True

    assert refs(receiver) == ["R-0", "R-1", "R-2"]
    claims = [q for q in queries.captured_queries if "FOR NO KEY UPDATE" in q["sql"]]
    assert len(claims) >= 3  # one attempt per claim
    assert set(Delivery.objects.values_list("status", "attempts")) == {
        (DeliveryStatus.DELIVERED, 1)
    }
