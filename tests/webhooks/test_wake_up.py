"""One wake-up for the deliveries of many commits (webhooks.queueing.deliveries_wake_up).

A commit that creates deliveries raises a flag in the broker's Redis; only the commit that
raised it publishes `webhooks.deliver_due`, which lowers the flag and then sends every due
delivery. These tests commit for real against the tests' own broker database and run the task
in this thread, so they can count the messages in the queue.
"""

import base64
import json
import uuid

import pytest
from django.conf import settings

from tests import builders
from tests.webhooks.conftest import Receiver
from webhooks import queueing, sending, tasks
from webhooks.models import Delivery, DeliveryStatus

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def other_receiver(httpserver) -> Receiver:
    result = Receiver(url=httpserver.url_for("/other-hook"))
    httpserver.expect_request("/other-hook", method="POST").respond_with_handler(result.handle)
    return result


def queued_messages(broker) -> int:
    with broker.connection_for_write() as connection:
        return connection.default_channel.client.llen("celery")


def flag_ttl_ms(broker) -> int:
    with broker.connection_for_write() as connection:
        return connection.default_channel.client.pttl(queueing.WAKE_UP_KEY)


def test_commits_while_a_wake_up_is_on_its_way_publish_nothing_more(
    test_broker, receiver, settings
):
    settings.WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION = 1  # one claim takes them all
    organization = builders.organization()
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    for n in range(5):
        builders.order_event(organization, f"SO-{n}", order_id=f"order-{n}")

    assert queued_messages(test_broker) == 1
    assert tasks.deliver_due() == 5
    assert len(receiver.wait_for(5)) == 5
    assert set(Delivery.objects.values_list("status", flat=True)) == {DeliveryStatus.DELIVERED}


def test_a_commit_after_the_wake_up_ran_publishes_a_new_one(test_broker, receiver):
    organization = builders.organization()
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    builders.order_event(organization, "SO-1", order_id="order-1")
    tasks.deliver_due()  # lowers the flag before it reads what is due

    builders.order_event(organization, "SO-2", order_id="order-2")

    assert queued_messages(test_broker) == 2
    assert tasks.deliver_due() == 1
    assert [r.json["payload"]["externalRef"] for r in receiver.wait_for(2)] == ["SO-1", "SO-2"]


def test_a_lost_wake_up_silences_commits_only_until_its_flag_lapses(test_broker):
    organization = builders.organization()
    builders.api_key(organization, "partner_a", webhook_url="http://127.0.0.1:9/a")
    builders.order_event(organization, "SO-1", order_id="order-1")

    ttl = settings.WEBHOOK_WAKE_UP_DELAY_SECONDS + queueing.WAKE_UP_TTL_SECONDS
    assert 0 < flag_ttl_ms(test_broker) <= ttl * 1000


def test_each_destination_gets_a_claim_of_its_own(test_broker, receiver, other_receiver, settings):
    """The wake-up sends one destination's batch itself and queues the others, so a receiver
    that hangs holds one thread and delays no other destination."""
    settings.WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION = 1
    for url in (receiver.url, other_receiver.url):
        organization = builders.organization()
        builders.api_key(organization, "partner_a", webhook_url=url)
        builders.order_event(organization, "SO-1", order_id="order-1")
        builders.order_event(organization, "SO-2", order_id="order-2")
    assert queued_messages(test_broker) == 1

    assert tasks.deliver_due() == 2

    assert len(receiver.wait_for(2)) == 2
    assert other_receiver.requests == []
    # The wake-up itself (still in the queue: no worker here) and the other destination's batch.
    assert queued_messages(test_broker) == 2


def test_a_destinations_deliveries_are_dealt_into_as_many_claims_as_it_may_have_in_flight(
    test_broker, receiver, settings
):
    """A claim sends one attempt after the other: a slow receiver gets as many attempts at once
    as its in-flight limit allows, the oldest first, as it did with a message per delivery."""
    settings.WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION = 4
    organization = builders.organization()
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    for n in range(6):
        builders.order_event(organization, f"SO-{n}", order_id=f"order-{n}")

    assert tasks.deliver_due() == 2  # its own claim: the oldest and the fifth

    assert [r.json["payload"]["externalRef"] for r in receiver.wait_for(2)] == ["SO-0", "SO-4"]
    # The wake-up itself (no worker here) and the three other claims, each a message.
    assert queued_messages(test_broker) == 4


def queued_tasks(broker) -> list[tuple[str, list]]:
    """(task name, args) of every message in the queue, oldest first."""
    with broker.connection_for_write() as connection:
        raw = connection.default_channel.client.lrange("celery", 0, -1)
    found = []
    for message in reversed(raw):
        envelope = json.loads(message)
        args = json.loads(base64.b64decode(envelope["body"]))[0]
        found.append((envelope["headers"]["task"], args))
    return found


def test_a_wake_up_that_reads_its_limit_hands_the_rest_to_a_follow_up_reading_on(
    test_broker, receiver, settings, monkeypatch
):
    """A burst larger than one read: each due delivery is read and dispatched once. Reading
    from the start again would find the ones whose claim message is still waiting, and queue
    them again, over and over while the burst lasts."""
    monkeypatch.setattr(sending, "DUE_LIMIT", 3)
    settings.WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION = 2  # two claims a read: one sent, one queued
    organization = builders.organization()
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    for n in range(7):
        builders.order_event(organization, f"SO-{n}", order_id=f"order-{n}")
    assert queued_tasks(test_broker) == [(queueing.DELIVER_DUE_TASK, [])]

    sent = [tasks.deliver_due()]
    while len(
        follow_ups := [
            a for n, a in queued_tasks(test_broker) if n == queueing.DELIVER_DUE_TASK and a
        ]
    ) == len(sent):
        sent.append(tasks.deliver_due(*follow_ups[-1]))

    assert sent == [2, 2, 1]
    received = [r.json["payload"]["externalRef"] for r in receiver.wait_for(5)]
    assert received == ["SO-0", "SO-2", "SO-3", "SO-5", "SO-6"]
    queued_claims = [  # a lone delivery's claim goes as webhooks.deliver, more as deliver_batch
        args if name == queueing.DELIVER_TASK else args[0]
        for name, args in queued_tasks(test_broker)
        if name in (queueing.DELIVER_TASK, queueing.DELIVER_BATCH_TASK)
    ]
    refs = dict(Delivery.objects.values_list("id", "event__payload__externalRef"))
    assert [[refs[uuid.UUID(i)] for i in claim] for claim in queued_claims] == [["SO-1"], ["SO-4"]]
