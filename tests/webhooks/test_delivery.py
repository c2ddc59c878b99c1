"""Sending: envelopes and signatures of both families, retries on the schedule, final states.

The delivery task's function runs directly here; test_worker.py runs it in a real worker.
"""

from datetime import UTC, date, datetime, timedelta

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tenants.services import api_key_revoke, api_key_rotate, api_key_update
from tests import builders
from tests.webhooks.conftest import independent_hmac_hex
from webhooks import events as webhook_events
from webhooks import queueing, sending, services, tasks
from webhooks.models import Delivery, DeliveryAttempt, DeliveryStatus

pytestmark = pytest.mark.django_db

T0 = datetime(2030, 3, 4, 10, 15, 30, tzinfo=UTC)


def emit_order_created(organization, platform="partner_a", ref="SO-1"):
    return builders.order_event(organization, ref, platform=platform)


def only_delivery(organization) -> Delivery:
    return Delivery.objects.select_related("event").get(organization=organization)


def failed_through_the_schedule(organization, clock) -> Delivery:
    """Emits order.created and attempts its delivery at each time of the schedule from T0 (the
    receiver is down or answers 5xx: it ends failed); returns the delivery as first read."""
    emit_order_created(organization)
    delivery = only_delivery(organization)
    for offset in (0, 60, 300, 1800, 7200):
        clock.move_to(T0 + timedelta(seconds=offset))
        tasks.deliver(str(delivery.id))
    return delivery


def test_partner_webhook_is_signed_with_the_webhook_secret(organization, receiver):
    issued = builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    with time_machine.travel(T0, tick=False):
        emit_order_created(organization)
        delivery = only_delivery(organization)
        assert tasks.deliver(str(delivery.id)) is True

    (request,) = receiver.wait_for(1)
    expected = independent_hmac_hex(issued.webhook_secret, request.body)
    assert request.headers["X-Service-Signature"] == f"sha256={expected}"
    assert request.headers["X-Service-Event"] == "order.created"
    assert request.headers["X-Service-Delivery"] == delivery.event.event_id
    assert request.headers["User-Agent"] == "delivery-webhooks/1"
    assert request.headers["Content-Type"] == "application/json"
    assert request.json == {
        "id": delivery.event.event_id,
        "event": "order.created",
        "payload": {
            "id": "5f0c6a52-1d8e-4a8e-9a59-6f1f0f7c1a11",
            "status": "pending",
            "externalRef": "SO-1",
        },
        "at": "2030-03-04T10:15:30Z",
    }
    assert delivery.event.event_id.startswith("evt_")


def test_erp_webhook_is_signed_with_the_api_key_value(organization, receiver):
    zone = builders.zone_row(organization, "North")
    issued = builders.api_key(organization, "erp", webhook_url=receiver.url)
    webhook_events.slot_booked_emit(
        organization_id=organization.id,
        zone=zone,
        order_id="o-1",
        template_id="t-1",
        date=date(2030, 3, 5),
        booked=3,
        capacity=10,
        available=7,
        updated_at=T0,
    )
    tasks.deliver(str(only_delivery(organization).id))

    (request,) = receiver.wait_for(1)
    assert request.headers["X-Webhook-Signature"] == independent_hmac_hex(
        issued.value, request.body
    )
    assert "X-Service-Signature" not in request.headers
    assert request.json == {
        "event": "erp.slot.booked",
        "eventId": "erp.slot.booked:o-1",
        "payload": {
            "polygon_id": str(zone.id),
            "polygon_name": "North",
            "order_id": "o-1",
            "template_id": "t-1",
            "date": "2030-03-05",
            "booked": 3,
            "capacity": 10,
            "available": 7,
            "updatedAt": "2030-03-04T10:15:30Z",
        },
    }


def test_a_rotated_key_signs_with_its_new_secret(organization, receiver):
    issued = builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    emit_order_created(organization)
    rotated = api_key_rotate(api_key=issued.api_key)
    tasks.deliver(str(only_delivery(organization).id))

    (request,) = receiver.wait_for(1)
    assert request.headers["X-Service-Signature"] == (
        f"sha256={independent_hmac_hex(rotated.webhook_secret, request.body)}"
    )


def test_partner_event_goes_to_the_key_of_the_platform_that_created_the_order(
    organization, receiver
):
    builders.api_key(organization, "partner_a", webhook_url="http://127.0.0.1:9/a")
    builders.api_key(organization, "partner_b", webhook_url=receiver.url)
    emit_order_created(organization, platform="partner_b")
    delivery = only_delivery(organization)
    assert delivery.url == receiver.url
    tasks.deliver(str(delivery.id))
    assert len(receiver.wait_for(1)) == 1


def test_any_2xx_is_success(organization, receiver):
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    receiver.statuses = [204]
    emit_order_created(organization)
    tasks.deliver(str(only_delivery(organization).id))
    delivery = only_delivery(organization)
    assert delivery.status == DeliveryStatus.DELIVERED
    assert delivery.attempts == 1
    assert delivery.last_status_code == 204
    assert delivery.next_attempt_at is None
    assert delivery.delivered_at is not None


@pytest.mark.parametrize("status", [301, 400, 404, 500, 503])
def test_anything_but_2xx_is_a_failed_attempt(organization, receiver, status):
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    receiver.statuses = [status]
    emit_order_created(organization)
    tasks.deliver(str(only_delivery(organization).id))
    delivery = only_delivery(organization)
    assert delivery.status == DeliveryStatus.PENDING
    assert (delivery.attempts, delivery.last_status_code) == (1, status)
    assert delivery.last_error == f"HTTP {status}"


def test_retries_follow_the_schedule_and_the_fifth_attempt_delivers(organization, receiver):
    zone = builders.zone_row(organization, "North")
    builders.api_key(organization, "erp", webhook_url=receiver.url)
    receiver.statuses = [500, 502, 503, 500]
    with time_machine.travel(T0, tick=False) as clock:
        webhook_events.slot_booked_emit(
            organization_id=organization.id,
            zone=zone,
            order_id="o-2",
            template_id="t-1",
            date="2030-03-05",
            booked=1,
            capacity=10,
            available=9,
            updated_at=T0,
        )
        delivery_id = str(only_delivery(organization).id)
        expected_due = [60, 300, 1800, 7200]
        assert tasks.deliver(delivery_id) is True  # attempt 1, at once
        for attempt, offset in enumerate(expected_due, start=2):
            delivery = only_delivery(organization)
            assert delivery.next_attempt_at == T0 + timedelta(seconds=offset)
            assert delivery.status == DeliveryStatus.PENDING
            clock.move_to(T0 + timedelta(seconds=offset - 1))
            assert tasks.deliver(delivery_id) is False  # not due yet: nothing sent
            clock.move_to(T0 + timedelta(seconds=offset))
            assert tasks.deliver(delivery_id) is True
            assert len(receiver.requests) == attempt

    delivery = only_delivery(organization)
    assert delivery.status == DeliveryStatus.DELIVERED
    assert delivery.attempts == 5
    assert delivery.delivered_at == T0 + timedelta(seconds=7200)
    attempts = list(DeliveryAttempt.objects.filter(delivery=delivery).order_by("number"))
    assert [a.number for a in attempts] == [1, 2, 3, 4, 5]
    assert [a.status_code for a in attempts] == [500, 502, 503, 500, 200]
    assert [a.started_at - T0 for a in attempts] == [
        timedelta(seconds=s) for s in (0, 60, 300, 1800, 7200)
    ]
    assert [a.succeeded for a in attempts] == [False, False, False, False, True]
    # The same event every time: receivers deduplicate by its id.
    assert len({r.json["eventId"] for r in receiver.requests}) == 1


def test_fifth_failure_marks_the_delivery_failed(organization, receiver):
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    receiver.statuses = [500] * 5
    with time_machine.travel(T0, tick=False) as clock:
        emit_order_created(organization)
        delivery_id = str(only_delivery(organization).id)
        for offset in (0, 60, 300, 1800, 7200):
            clock.move_to(T0 + timedelta(seconds=offset))
            assert tasks.deliver(delivery_id) is True
        clock.move_to(T0 + timedelta(days=1))
        assert tasks.deliver(delivery_id) is False

    delivery = only_delivery(organization)
    assert delivery.status == DeliveryStatus.FAILED
    assert delivery.attempts == 5
    assert delivery.next_attempt_at is None
    assert (delivery.last_status_code, delivery.last_error) == (500, "HTTP 500")
    assert len(receiver.requests) == 5


def test_a_late_attempt_is_due_at_once_and_keeps_the_schedule(organization, receiver):
    """Attempt times count from the first attempt's due time, not from the previous attempt."""
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    receiver.statuses = [500, 500, 500]
    with time_machine.travel(T0, tick=False) as clock:
        emit_order_created(organization)
        delivery_id = str(only_delivery(organization).id)
        tasks.deliver(delivery_id)
        clock.move_to(T0 + timedelta(seconds=400))  # attempt 2 ran late (after attempt 3's time)
        tasks.deliver(delivery_id)
        assert only_delivery(organization).next_attempt_at == T0 + timedelta(seconds=400)
        clock.move_to(T0 + timedelta(seconds=401))
        tasks.deliver(delivery_id)
        assert only_delivery(organization).next_attempt_at == T0 + timedelta(seconds=1800)


def test_shortened_schedule_setting_is_used(organization, receiver, settings):
    settings.WEBHOOK_RETRY_SCHEDULE = [0, 5]
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    receiver.statuses = [500, 500]
    with time_machine.travel(T0, tick=False) as clock:
        emit_order_created(organization)
        delivery_id = str(only_delivery(organization).id)
        tasks.deliver(delivery_id)
        assert only_delivery(organization).next_attempt_at == T0 + timedelta(seconds=5)
        clock.move_to(T0 + timedelta(seconds=5))
        tasks.deliver(delivery_id)
    assert only_delivery(organization).status == DeliveryStatus.FAILED


def test_a_slow_receiver_is_a_timeout(organization, receiver, settings):
    settings.WEBHOOK_TIMEOUT_SECONDS = 0.3
    receiver.delay_seconds = 0.8
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    emit_order_created(organization)
    tasks.deliver(str(only_delivery(organization).id))
    delivery = only_delivery(organization)
    assert delivery.status == DeliveryStatus.PENDING
    assert delivery.last_error == "Timed out after 0.3 s"
    assert delivery.last_status_code is None
    attempt = DeliveryAttempt.objects.get(delivery=delivery)
    assert 250 <= attempt.latency_ms < 800


def test_an_unreachable_receiver_is_a_failed_attempt(organization):
    builders.api_key(organization, "partner_a", webhook_url="http://127.0.0.1:9/hook")
    emit_order_created(organization)
    tasks.deliver(str(only_delivery(organization).id))
    delivery = only_delivery(organization)
    assert delivery.attempts == 1
    assert delivery.last_error.startswith("ConnectionError")


def test_private_url_is_refused_at_send_time(organization, receiver, settings):
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    emit_order_created(organization)
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False  # e.g. production, or DNS changed since
    tasks.deliver(str(only_delivery(organization).id))

    delivery = only_delivery(organization)
    assert receiver.requests == []
    assert delivery.attempts == 1
    assert delivery.status == DeliveryStatus.PENDING
    assert delivery.last_error == (
        "webhookUrl must not point to a private, loopback, link-local or other non-public address"
    )
    attempt = DeliveryAttempt.objects.get(delivery=delivery)
    assert (attempt.succeeded, attempt.error) == (False, delivery.last_error)


def test_revoked_key_fails_the_delivery_without_sending(organization, receiver):
    issued = builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    emit_order_created(organization)
    api_key_revoke(api_key=issued.api_key)
    tasks.deliver(str(only_delivery(organization).id))
    delivery = only_delivery(organization)
    assert receiver.requests == []
    assert (delivery.status, delivery.last_error) == (DeliveryStatus.FAILED, "API key is revoked")


def test_delivered_delivery_is_not_sent_again(organization, receiver):
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    emit_order_created(organization)
    delivery_id = str(only_delivery(organization).id)
    assert tasks.deliver(delivery_id) is True
    assert tasks.deliver(delivery_id) is False  # a duplicate message
    assert tasks.deliver("6b9bc8a0-0000-4000-8000-000000000000") is False  # unknown id
    assert len(receiver.requests) == 1


def test_a_message_naming_its_destination_is_claimed_without_reading_the_delivery_first(
    organization, receiver
):
    """A new delivery's message names its key: the claim alone decides, one query fewer than a
    message without it; a duplicate one sends nothing."""
    key = builders.api_key(organization, "partner_a", webhook_url=receiver.url).api_key
    builders.order_event(organization, "SO-1")
    builders.order_event(organization, "SO-2")
    first, second = (str(d.id) for d in Delivery.objects.order_by("created_at", "id"))
    with CaptureQueriesContext(connection) as without_key:
        assert tasks.deliver(first) is True
    with CaptureQueriesContext(connection) as with_key:
        assert tasks.deliver(second, key=str(key.id)) is True
    assert len(with_key) == len(without_key) - 1
    sql = [q["sql"] for q in with_key.captured_queries]
    statements = [s for s in sql if not s.startswith(("BEGIN", "SAVEPOINT"))]
    assert "FOR NO KEY UPDATE" in statements[0]  # the claim comes first
    assert tasks.deliver(second, key=str(key.id)) is False  # a duplicate message
    assert len(receiver.requests) == 2


def test_a_message_whose_delivery_another_claim_sent_ends_with_the_claim(organization, receiver):
    """Under load a claim takes a share of its destination's backlog, so many messages find their
    delivery sent already: the claim says so, and the delivery is not read again."""
    key = builders.api_key(organization, "partner_a", webhook_url=receiver.url).api_key
    builders.order_event(organization, "SO-1")
    delivery_id = str(Delivery.objects.get().id)
    assert tasks.deliver(delivery_id, key=str(key.id)) is True

    with CaptureQueriesContext(connection) as again:
        assert tasks.deliver(delivery_id, key=str(key.id)) is False

    statements = [q["sql"] for q in again.captured_queries]
    statements = [s for s in statements if not s.startswith(("BEGIN", "SAVEPOINT", "RELEASE"))]
    assert len(statements) == 2, statements  # the key's lock and the claim
    assert "FOR NO KEY UPDATE" in statements[0]
    assert len(receiver.requests) == 1


def test_redeliver_starts_a_new_round_to_the_current_url(organization, receiver, httpserver):
    issued = builders.api_key(organization, "partner_a", webhook_url="http://127.0.0.1:9/old")
    receiver.statuses = [200]
    with time_machine.travel(T0, tick=False) as clock:
        delivery = failed_through_the_schedule(organization, clock)
        assert only_delivery(organization).status == DeliveryStatus.FAILED

        api_key_update(api_key=issued.api_key, webhook_url=receiver.url)
        clock.move_to(T0 + timedelta(days=1))
        services.delivery_redeliver(delivery=delivery)
        delivery = only_delivery(organization)
        assert (delivery.status, delivery.url) == (DeliveryStatus.PENDING, receiver.url)
        assert delivery.next_attempt_at == T0 + timedelta(days=1)
        assert tasks.deliver(str(delivery.id)) is True

    delivery = only_delivery(organization)
    assert delivery.status == DeliveryStatus.DELIVERED
    assert delivery.attempts == 6
    assert DeliveryAttempt.objects.filter(delivery=delivery).count() == 6
    assert len(receiver.requests) == 1


def test_a_redelivered_delivery_gets_the_full_schedule_again(organization):
    builders.api_key(organization, "partner_a", webhook_url="http://127.0.0.1:9/down")
    with time_machine.travel(T0, tick=False) as clock:
        delivery = failed_through_the_schedule(organization, clock)
        start = T0 + timedelta(days=2)
        clock.move_to(start)
        services.delivery_redeliver(delivery=delivery)
        tasks.deliver(str(delivery.id))
        assert only_delivery(organization).next_attempt_at == start + timedelta(seconds=60)
        assert only_delivery(organization).status == DeliveryStatus.PENDING


def test_sweep_queues_only_due_deliveries_without_a_live_message(
    organization, django_capture_on_commit_callbacks
):
    builders.api_key(organization, "partner_a", webhook_url="http://127.0.0.1:9/down")
    with time_machine.travel(T0, tick=False) as clock:
        emit_order_created(organization, ref="A")
        emit_order_created(organization, ref="B")
        # Just emitted: their messages are in the queue; the sweep leaves them alone.
        assert services.deliveries_sweep() == 0
        # A message lost at commit (broker down) is queued again after a while.
        clock.move_to(T0 + timedelta(seconds=queueing.REQUEUE_AFTER_SECONDS + 1))
        with django_capture_on_commit_callbacks() as queued:
            assert services.deliveries_sweep() == 2
        assert len(queued) == 2
        assert services.deliveries_sweep() == 0  # each is queued once per interval
        # A retry due later than the sweep looks ahead is not queued by the failed attempt:
        # the sweep queues it (with a countdown to its due time) once it is that close.
        first = Delivery.objects.filter(organization=organization).order_by("created_at")[0]
        sending.delivery_attempt(delivery_id=first.id)
        first.refresh_from_db()
        assert first.next_attempt_at == T0 + timedelta(seconds=60)
        assert first.queued_at is None
        horizon = queueing.countdown_horizon()
        assert horizon == timedelta(seconds=6)  # the 5 s sweep interval + 1 s
        clock.move_to(T0 + timedelta(seconds=60) - horizon - timedelta(seconds=1))
        assert services.deliveries_sweep() == 0
        clock.move_to(T0 + timedelta(seconds=60) - horizon)
        assert services.deliveries_sweep() == 1
        assert services.deliveries_sweep() == 0  # queued once


def test_a_message_that_comes_early_is_queued_again_for_the_due_time(
    organization, django_capture_on_commit_callbacks
):
    """A countdown that fires a moment before the attempt is due (clocks of two hosts) must
    not leave the attempt to a sweep 30 s later: it is queued again for its due time."""
    builders.api_key(organization, "partner_a", webhook_url="http://127.0.0.1:9/down")
    with time_machine.travel(T0, tick=False) as clock:
        emit_order_created(organization)
        delivery_id = str(only_delivery(organization).id)
        tasks.deliver(delivery_id)  # attempt 1 fails; attempt 2 is due at T0 + 60 s
        clock.move_to(T0 + timedelta(seconds=59.5))
        with django_capture_on_commit_callbacks() as queued:
            assert tasks.deliver(delivery_id) is False
        assert len(queued) == 1
        clock.move_to(T0 + timedelta(seconds=30))  # far from due: nothing to queue
        with django_capture_on_commit_callbacks() as queued:
            assert tasks.deliver(delivery_id) is False
        assert queued == []
