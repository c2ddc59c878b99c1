"""The in-flight limit per destination: a receiver that hangs holds only a few worker threads.

Found by tests/faults/test_hanging_receiver.py: with a burst of events to a receiver that never
answers, every worker thread waited on it for the timeout and other organizations' webhooks
waited behind them (7-9 s late with an 8-thread worker and a 5 s timeout).
"""

import threading
import uuid
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.db import connection

from tests import builders
from webhooks import queueing, sending, services, tasks
from webhooks.models import Delivery, DeliveryStatus

pytestmark = pytest.mark.django_db

T0 = datetime(2030, 3, 4, 10, 15, 30, tzinfo=UTC)


def emit(organization, ref: str) -> Delivery:
    builders.order_event(organization, ref, order_id=str(uuid.uuid4()))
    return Delivery.objects.get(organization=organization, event__payload__externalRef=ref)


def on_the_wire(delivery: Delivery, now: datetime) -> None:
    """As if a worker had claimed this delivery's attempt at `now`."""
    Delivery.objects.filter(pk=delivery.pk).update(
        claim_token=uuid.uuid4(), claimed_until=now + queueing.claim_lease()
    )


@pytest.fixture
def limit_two(settings):
    settings.WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION = 2


def test_destination_at_its_limit_parks_the_next_delivery(organization, receiver, limit_two):
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    with time_machine.travel(T0, tick=False):
        first, second, third = (emit(organization, ref) for ref in ("A", "B", "C"))
        on_the_wire(first, T0)
        on_the_wire(second, T0)

        assert sending.delivery_attempt(delivery_id=third.id) is False

    assert receiver.requests == []
    third.refresh_from_db()
    assert (third.status, third.attempts, third.queued_at) == (DeliveryStatus.PENDING, 0, None)


def test_a_message_naming_the_destination_at_its_limit_parks_its_delivery(
    organization, receiver, limit_two
):
    """The claim finds the delivery still waiting but takes nothing: it is parked for a slot, as
    when the message names no destination."""
    issued = builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    with time_machine.travel(T0, tick=False):
        first, second, third = (emit(organization, ref) for ref in ("A", "B", "C"))
        on_the_wire(first, T0)
        on_the_wire(second, T0)

        assert tasks.deliver(str(third.id), key=str(issued.api_key.id)) is False

    assert receiver.requests == []
    third.refresh_from_db()
    assert (third.status, third.attempts, third.queued_at) == (DeliveryStatus.PENDING, 0, None)


def test_other_destinations_are_not_held_up(organization, receiver, limit_two):
    builders.api_key(organization, "partner_a", webhook_url="http://127.0.0.1:9/hangs")
    other = builders.organization()
    builders.api_key(other, "partner_a", webhook_url=receiver.url)
    with time_machine.travel(T0, tick=False):
        on_the_wire(emit(organization, "A"), T0)
        on_the_wire(emit(organization, "B"), T0)
        elsewhere = emit(other, "X")

        assert sending.delivery_attempt(delivery_id=elsewhere.id) is True

    (request,) = receiver.requests
    assert request.json["payload"]["externalRef"] == "X"


def test_sweep_leaves_a_busy_destination_to_its_hand_overs(
    organization, limit_two, django_capture_on_commit_callbacks
):
    builders.api_key(organization, "partner_a", webhook_url="http://127.0.0.1:9/hangs")
    other = builders.organization()
    builders.api_key(other, "partner_a", webhook_url="http://127.0.0.1:9/other")
    with time_machine.travel(T0, tick=False):
        on_the_wire(emit(organization, "A"), T0)
        on_the_wire(emit(organization, "B"), T0)
        parked = emit(organization, "C")
        lost = emit(other, "X")
        Delivery.objects.filter(pk__in=[parked.pk, lost.pk]).update(queued_at=None)

        with django_capture_on_commit_callbacks() as queued:
            assert services.deliveries_sweep() == 1

    assert len(queued) == 1
    lost.refresh_from_db()
    parked.refresh_from_db()
    assert (lost.queued_at, parked.queued_at) == (T0, None)


def test_a_claim_older_than_the_timeout_frees_its_slot(organization, receiver, limit_two, settings):
    """A worker that died mid-attempt holds its destination's slot only for the timeout (+5 s),
    not for its whole lease (the attempt itself stays its own until the lease lapses)."""
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    timeout = settings.WEBHOOK_TIMEOUT_SECONDS
    with time_machine.travel(T0, tick=False):
        first, second, third = (emit(organization, ref) for ref in ("A", "B", "C"))
        on_the_wire(first, T0)
        on_the_wire(second, T0)
    at_timeout = T0 + timedelta(seconds=timeout + queueing.IN_FLIGHT_GRACE_SECONDS - 1)
    with time_machine.travel(at_timeout, tick=False):
        assert sending.delivery_attempt(delivery_id=third.id) is False
        Delivery.objects.filter(pk=third.pk).update(queued_at=at_timeout)
    after_timeout = T0 + timedelta(seconds=timeout + queueing.IN_FLIGHT_GRACE_SECONDS + 1)
    with time_machine.travel(after_timeout, tick=False):
        assert sending.delivery_attempt(delivery_id=third.id) is True
        assert sending.delivery_attempt(delivery_id=first.id) is False  # still leased
    assert len(receiver.requests) == 1


def test_simultaneous_claims_respect_the_limit(transactional_db, receiver, settings):
    """Eight workers claiming at the same instant: exactly the limit goes out, the rest wait."""
    settings.WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION = 2
    receiver.delay_seconds = 0.5
    organization = builders.organization()
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    deliveries = [emit(organization, f"R-{n}") for n in range(8)]
    barrier = threading.Barrier(len(deliveries))
    results: list[bool] = []

    def worker(delivery_id) -> None:
        try:
            barrier.wait()
            results.append(sending.delivery_attempt(delivery_id=delivery_id))
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(d.id,)) for d in deliveries]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(results) == [False] * 6 + [True] * 2
    assert len(receiver.requests) == 2


def test_the_attempt_that_frees_a_slot_sends_the_waiting_deliveries_oldest_first(
    organization, receiver, settings
):
    """Deliveries refused a slot wait (no message of their own); the task whose attempt frees
    the slot sends them next, in the order the events happened."""
    settings.WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION = 1
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    with time_machine.travel(T0, tick=False) as clock:
        deliveries = []
        for n, ref in enumerate("ABC"):
            clock.move_to(T0 + timedelta(seconds=n))
            deliveries.append(emit(organization, ref))
        first, second, third = deliveries
        on_the_wire(first, T0 + timedelta(seconds=2))
        assert sending.delivery_attempt(delivery_id=third.id) is False  # waits
        assert sending.delivery_attempt(delivery_id=second.id) is False  # waits
        Delivery.objects.filter(pk=first.pk).update(claim_token=None, claimed_until=None)

        assert tasks.deliver(str(first.id)) is True

    assert [r.json["payload"]["externalRef"] for r in receiver.requests] == ["A", "B", "C"]
    assert set(Delivery.objects.values_list("status", flat=True)) == {DeliveryStatus.DELIVERED}
