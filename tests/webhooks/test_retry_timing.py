"""Retries run on time (docs/contract.md "Webhooks"): every attempt within a second of its due
time, whatever the schedule and the sweep interval. A real Celery worker, a real receiver; the
beat is played by a thread that queues the real sweep task every interval."""

import threading
import time

import pytest

from tests import builders
from webhooks import tasks
from webhooks.models import Delivery, DeliveryAttempt, DeliveryStatus

#: how far from its due time an attempt may reach the receiver
TOLERANCE_SECONDS = 1.0


def emit_order_created(organization) -> Delivery:
    builders.order_event(organization, "SO-late")
    return Delivery.objects.get(organization=organization)


def lateness(delivery: Delivery, received, schedule: list[int]) -> list[float]:
    """Seconds between each attempt's due time and its arrival at the receiver."""
    start = delivery.schedule_start.timestamp()
    return [round(r.at - (start + offset), 2) for r, offset in zip(received, schedule, strict=True)]


@pytest.fixture
def beat(settings):
    """Queues `webhooks.sweep` every WEBHOOK_SWEEP_INTERVAL_SECONDS, as celery beat does."""
    stop = threading.Event()

    def run(first_after: float) -> threading.Thread:
        def loop() -> None:
            if stop.wait(first_after):
                return
            while True:
                tasks.sweep.apply_async()
                if stop.wait(settings.WEBHOOK_SWEEP_INTERVAL_SECONDS):
                    return

        thread = threading.Thread(target=loop, daemon=True)
        thread.start()
        return thread

    started: list[threading.Thread] = []
    yield lambda first_after=0.0: started.append(run(first_after))
    stop.set()
    for thread in started:
        thread.join(10)


def test_a_schedule_shorter_than_the_sweep_runs_every_attempt_on_time(
    celery_worker, receiver, settings, beat
):
    schedule = [0, 2, 4, 6, 8]
    settings.WEBHOOK_RETRY_SCHEDULE = schedule  # shorter than the 5 s sweep interval
    beat()
    organization = builders.organization()
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    receiver.statuses = [500, 500, 500, 500]
    delivery = emit_order_created(organization)

    received = receiver.wait_for(5, timeout=20)

    late = lateness(delivery, received, schedule)
    assert all(-0.05 <= s <= TOLERANCE_SECONDS for s in late), late
    assert len(received) == 5
    time.sleep(0.5)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == (DeliveryStatus.DELIVERED, 5)
    assert DeliveryAttempt.objects.filter(delivery=delivery).count() == 5


def test_a_retry_due_between_two_sweeps_is_queued_by_the_sweep_before_it(
    celery_worker, receiver, settings, beat
):
    """The retry is due 7 s in, later than the failed attempt queues ahead (interval + 1 s);
    the sweeps run at 0.5, 2.5, 4.5, 6.5, 8.5 s: the one at 4.5 s queues it for 7 s."""
    schedule = [0, 7]
    settings.WEBHOOK_RETRY_SCHEDULE = schedule
    settings.WEBHOOK_SWEEP_INTERVAL_SECONDS = 2
    organization = builders.organization()
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    receiver.statuses = [500]
    delivery = emit_order_created(organization)
    beat(first_after=0.5)

    received = receiver.wait_for(2, timeout=20)

    late = lateness(delivery, received, schedule)
    assert all(-0.05 <= s <= TOLERANCE_SECONDS for s in late), late
