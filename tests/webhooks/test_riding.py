"""New deliveries ride on a queued task of their destination (webhooks/queueing.py "riding"):
while a message of the destination waits in the queue, a new delivery publishes none and waits
for a slot; the task, once started, claims it with its own. A task that leaves others waiting
queues one more, so a backlog still goes out on up to the in-flight limit at once."""

import base64
import json
import uuid
from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from tests import builders
from webhooks import queueing, tasks
from webhooks.models import Delivery

pytestmark = pytest.mark.django_db

T0 = datetime(2030, 3, 4, 10, 15, 30, tzinfo=UTC)


def published(broker) -> list[list[str]]:
    """The delivery ids of each message waiting in the test broker, in publishing order."""
    with broker.connection_for_write() as conn:
        messages = conn.default_channel.client.lrange("celery", 0, -1)
    bodies = [json.loads(base64.b64decode(json.loads(m)["body"])) for m in reversed(messages)]
    return [args for args, _, _ in bodies]


def committed_event(organization, ref: str, capture) -> Delivery:
    with capture(execute=True):
        builders.order_event(organization, ref, order_id=str(uuid.uuid4()))
    return Delivery.objects.get(event__payload__externalRef=ref)


def refs(receiver) -> list[str]:
    return [r.json["payload"]["externalRef"] for r in receiver.requests]


def test_deliveries_made_while_a_task_is_queued_ride_on_it(
    organization, receiver, test_broker, django_capture_on_commit_callbacks
):
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    with time_machine.travel(T0, tick=False) as clock:
        first = committed_event(organization, "R-0", django_capture_on_commit_callbacks)
        clock.shift(1)
        riders = [
            committed_event(organization, f"R-{n}", django_capture_on_commit_callbacks)
            for n in (1, 2)
        ]

    assert published(test_broker) == [[str(first.id)]]
    assert first.queued_at == T0
    assert [d.queued_at for d in riders] == [None, None]  # waiting for a slot
    with time_machine.travel(T0 + timedelta(seconds=2), tick=False):
        assert tasks.deliver(str(first.id)) is True
    assert refs(receiver) == ["R-0", "R-1", "R-2"]
    assert set(Delivery.objects.values_list("status", "attempts")) == {("delivered", 1)}


def test_once_the_task_started_a_new_delivery_publishes_its_own(
    organization, receiver, test_broker, django_capture_on_commit_callbacks
):
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    with time_machine.travel(T0, tick=False) as clock:
        first = committed_event(organization, "R-0", django_capture_on_commit_callbacks)
        assert tasks.deliver(str(first.id)) is True
        clock.shift(1)
        second = committed_event(organization, "R-1", django_capture_on_commit_callbacks)

    assert published(test_broker)[-1] == [str(second.id)]
    assert second.queued_at is not None


def test_a_rider_whose_task_started_before_it_committed_publishes_its_own(
    organization, receiver, test_broker, django_capture_on_commit_callbacks
):
    """Its task's claims may have run before it was visible: it must not wait on them."""
    key = builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    with time_machine.travel(T0, tick=False):
        first = committed_event(organization, "R-0", django_capture_on_commit_callbacks)
        with django_capture_on_commit_callbacks(execute=True):
            builders.order_event(organization, "R-1", order_id=str(uuid.uuid4()))
            queueing.ride_end(key.api_key.id)  # the task starts while this transaction is open
    rider = Delivery.objects.get(event__payload__externalRef="R-1")

    assert rider.queued_at is None
    assert published(test_broker) == [[str(first.id)], [str(rider.id)]]


def test_a_claim_that_leaves_others_waiting_queues_one_more_task(
    organization, receiver, test_broker, settings
):
    settings.WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION = 2
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    with time_machine.travel(T0, tick=False) as clock:
        for n in range(6):
            clock.move_to(T0 + timedelta(seconds=n))
            builders.order_event(organization, f"R-{n}", order_id=str(uuid.uuid4()))
    Delivery.objects.update(queued_at=None)  # all waiting for a slot
    oldest = Delivery.objects.order_by("next_attempt_at").first()
    receiver.statuses = [503]  # the first attempt fails: the batch ends, the rest wait

    with time_machine.travel(T0 + timedelta(seconds=10), tick=False):
        assert tasks.deliver(str(oldest.id)) is True

    # One helper for the first claim that left others waiting; later claims find it queued.
    assert len(published(test_broker)) == 1
    assert refs(receiver)[0] == "R-0"
    assert set(refs(receiver)) == {f"R-{n}" for n in range(6)}
