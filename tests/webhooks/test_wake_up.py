"""One wake-up for the deliveries of many commits (webhooks.queueing.deliveries_wake_up).

A commit that creates deliveries raises a flag in the broker's Redis; only the commit that
raised it publishes `webhooks.deliver_due`, which lowers the flag and then sends every due
delivery. These tests commit for real against the tests' own broker database and run the task
in this thread, so they can count the messages in the queue.
"""

import pytest
from django.conf import settings

from tests import builders
from tests.webhooks.conftest import Receiver
from webhooks import queueing, tasks
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
