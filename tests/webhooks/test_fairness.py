"""A destination that hangs never holds back another destination's first attempt by more than a
second, whatever the worker's concurrency (docs/webhooks.md "For operators"): one destination never
gets every worker thread (queueing.in_flight_limit)."""

import itertools
import time

import pytest
from django.db import transaction

from tests import builders
from webhooks import queueing
from webhooks.models import Delivery, DeliveryStatus

pytestmark = pytest.mark.django_db(transaction=True)

#: B's first attempts must each arrive within this long of their commit
PROMPT_SECONDS = 1.0


def first_attempt_lags(hanging_receiver, receiver, *, hanging_events: int, other_events: int):
    """A's receiver hangs and gets `hanging_events`; then B commits `other_events`, spaced over
    more than one attempt timeout; returns how long after its commit each of B's arrived."""
    hanging, healthy = builders.organization(), builders.organization()
    builders.api_key(hanging, "partner_a", webhook_url=hanging_receiver.url)
    builders.api_key(healthy, "partner_a", webhook_url=receiver.url)
    for n in range(hanging_events):
        builders.order_event(hanging, f"HANG-{n}", order_id=f"hang-{n}")
    deadline = time.monotonic() + 5
    while not hanging_receiver.connections and time.monotonic() < deadline:
        time.sleep(0.02)
    assert hanging_receiver.connections, "the hanging receiver was never called"

    committed_at: dict[str, float] = {}
    for n in range(other_events):
        ref = f"OK-{n}"
        with transaction.atomic():
            builders.order_event(healthy, ref, order_id=f"ok-{n}")
        committed_at[ref] = time.time()
        time.sleep(0.5)
    arrived = receiver.wait_for(other_events, timeout=30)
    return {
        r.json["payload"]["externalRef"]: r.at - committed_at[r.json["payload"]["externalRef"]]
        for r in arrived
    }


def test_a_hanging_destination_leaves_a_thread_to_others_with_two_worker_threads(
    two_thread_worker, hanging_receiver, receiver, settings
):
    settings.WEBHOOK_TIMEOUT_SECONDS = 3
    lags = first_attempt_lags(hanging_receiver, receiver, hanging_events=6, other_events=9)

    assert max(lags.values()) < PROMPT_SECONDS, lags
    # A's receiver never had both threads: one attempt on the wire at a time.
    starts = sorted(at for _, at in hanging_receiver.connections)
    assert all(later - earlier > 2.5 for earlier, later in itertools.pairwise(starts)), starts
    assert Delivery.objects.filter(status=DeliveryStatus.DELIVERED).count() == 9


def test_with_the_shipped_limit_a_hanging_destination_holds_fewer_than_all_threads(
    celery_worker, hanging_receiver, receiver, settings
):
    settings.WEBHOOK_TIMEOUT_SECONDS = 3
    settings.WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION = 8  # more than the worker's 4 threads
    lags = first_attempt_lags(hanging_receiver, receiver, hanging_events=12, other_events=8)

    assert max(lags.values()) < PROMPT_SECONDS, lags
    first_wave = [
        at
        for _, at in hanging_receiver.connections
        if at < hanging_receiver.connections[0][1] + 2.5
    ]
    assert len(first_wave) == 3  # the worker's 4 threads less one


def test_the_in_flight_limit_is_bounded_by_the_worker_threads(two_thread_worker, settings):
    settings.WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION = 4
    assert queueing.in_flight_limit() == 1
    settings.WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION = 0
    assert queueing.in_flight_limit() == 1


def test_outside_a_worker_the_setting_is_the_limit(settings):
    settings.WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION = 4
    assert queueing.in_flight_limit() == 4
