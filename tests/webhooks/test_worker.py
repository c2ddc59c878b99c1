"""The outbox end to end: committed transactions, a real Celery worker, a real receiver.

These tests commit for real (`transactional_db`): the worker runs in other threads with their
own database connections, as it would in production.
"""

import threading
import time
from datetime import timedelta

import pytest
from django.db import connection, transaction

from tests import builders
from tests.webhooks.conftest import independent_hmac_hex
from webhooks import events as webhook_events
from webhooks import queueing, sending, services
from webhooks.models import Delivery, DeliveryAttempt, DeliveryStatus, Event


def emit_order_created(organization, ref: str) -> None:
    builders.order_event(organization, ref, order_id=f"order-{ref}")


def wait_until(predicate, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


def test_committed_event_is_delivered_by_the_worker(celery_worker, receiver):
    organization = builders.organization()
    issued = builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    with transaction.atomic():
        emit_order_created(organization, "SO-1")
        # Nothing leaves before the commit.
        time.sleep(0.3)
        assert receiver.requests == []

    (request,) = receiver.wait_for(1)
    assert request.json["payload"]["externalRef"] == "SO-1"
    assert request.headers["X-Service-Signature"] == (
        f"sha256={independent_hmac_hex(issued.webhook_secret, request.body)}"
    )
    wait_until(
        lambda: Delivery.objects.get(organization=organization).status == DeliveryStatus.DELIVERED
    )


def test_erp_event_from_a_zone_edit_is_delivered_by_the_worker(celery_worker, receiver):
    organization = builders.organization()
    issued = builders.api_key(organization, "erp", webhook_url=receiver.url)
    with transaction.atomic():
        zone = builders.zone_row(organization, "North")
        webhook_events.polygon_updated_emit(zone=zone)

    (request,) = receiver.wait_for(1)
    assert request.headers["X-Webhook-Signature"] == independent_hmac_hex(
        issued.value, request.body
    )
    assert request.json["event"] == "erp.polygon.updated"
    assert request.json["eventId"].startswith(f"erp.polygon.updated:{zone.id}:")


def test_rolled_back_transaction_sends_nothing(celery_worker, receiver):
    organization = builders.organization()
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    with pytest.raises(RuntimeError), transaction.atomic():
        emit_order_created(organization, "SO-rolled-back")
        raise RuntimeError("the change failed")
    # A committed event afterwards proves the worker was running all along.
    emit_order_created(organization, "SO-committed")
    receiver.wait_for(1)
    time.sleep(0.3)
    assert [r.json["payload"]["externalRef"] for r in receiver.requests] == ["SO-committed"]
    assert not Event.objects.filter(payload__externalRef="SO-rolled-back").exists()


def test_sweep_sends_deliveries_whose_message_was_lost(celery_worker, receiver):
    organization = builders.organization()
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    queueing.broker_breaker.trip()  # as if the broker had been down at commit
    try:
        emit_order_created(organization, "SO-lost")
    finally:
        queueing.broker_breaker.reset()
    time.sleep(0.3)
    assert receiver.requests == []

    later = Delivery.objects.get(organization=organization).queued_at
    later += timedelta(seconds=queueing.REQUEUE_AFTER_SECONDS + 1)
    assert services.deliveries_sweep(now=later) == 1
    (request,) = receiver.wait_for(1)
    assert request.json["payload"]["externalRef"] == "SO-lost"


def test_a_delivery_is_never_sent_twice_by_concurrent_workers(transactional_db, receiver):
    organization = builders.organization()
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    receiver.delay_seconds = 0.3  # a slow receiver widens the window for a double send
    emit_order_created(organization, "SO-race")
    delivery_id = Delivery.objects.get(organization=organization).id

    workers = 8
    barrier = threading.Barrier(workers)
    results: list[bool] = []

    def worker() -> None:
        try:
            barrier.wait()
            results.append(sending.delivery_attempt(delivery_id=delivery_id))
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(results) == [False] * (workers - 1) + [True]
    assert len(receiver.requests) == 1
    assert DeliveryAttempt.objects.filter(delivery_id=delivery_id).count() == 1
    delivery = Delivery.objects.get(pk=delivery_id)
    assert (delivery.status, delivery.attempts) == (DeliveryStatus.DELIVERED, 1)


def test_many_events_through_the_worker_each_arrive_once(celery_worker, receiver):
    organization = builders.organization()
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    for n in range(40):
        emit_order_created(organization, f"SO-{n}")
    receiver.wait_for(40)
    time.sleep(0.3)
    ids = [r.json["id"] for r in receiver.requests]
    assert len(ids) == len(set(ids)) == 40


def test_change_during_sending_is_not_lost(transactional_db, receiver):
    """A coalesced payload written while the event is being claimed is either sent, or
    becomes a new event: never silently dropped."""
    organization = builders.organization()
    builders.api_key(organization, "erp", webhook_url=receiver.url)
    zone = builders.zone_row(organization, "North")
    webhook_events.polygon_updated_emit(zone=zone)
    delivery_id = Delivery.objects.get(organization=organization).id

    zone.name = "Changed while sending"
    started = threading.Event()

    def edit() -> None:
        try:
            with transaction.atomic():
                webhook_events.polygon_updated_emit(zone=zone)
                started.set()
                time.sleep(0.3)  # the sender's claim waits for this transaction
        finally:
            connection.close()

    editor = threading.Thread(target=edit)
    editor.start()
    started.wait(5)
    sending.delivery_attempt(delivery_id=delivery_id)
    editor.join()

    (request,) = receiver.wait_for(1)
    assert request.json["payload"]["polygon_name"] == "Changed while sending"
    assert Event.objects.filter(organization=organization).count() == 1


def test_concurrent_changes_coalesce_into_one_open_event(transactional_db):
    """Two transactions changing the same zone at once: one unsent event, the last payload."""
    organization = builders.organization()
    builders.api_key(organization, "erp", webhook_url="http://127.0.0.1:9/erp")
    zone = builders.zone_row(organization, "North")
    barrier = threading.Barrier(2)
    errors: list[Exception] = []

    def change(name: str) -> None:
        try:
            with transaction.atomic():
                barrier.wait()
                zone_copy = type(zone).objects.get(pk=zone.pk)
                zone_copy.name = name
                webhook_events.polygon_updated_emit(zone=zone_copy)
                time.sleep(0.2)
        except Exception as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=change, args=(n,)) for n in ("First", "Second")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    event = Event.objects.get(organization=organization)
    assert event.is_open
    assert event.payload["polygon_name"] in ("First", "Second")
    assert Delivery.objects.filter(event=event).count() == 1
