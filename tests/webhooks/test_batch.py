"""A delivery task sends its share of its destination's due backlog in one claim (sending
delivery_send): a burst costs the worker one claim and one record per batch, and the messages
of the deliveries a batch took find nothing to do."""

import uuid
from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from tests import builders
from webhooks import sending, tasks
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
