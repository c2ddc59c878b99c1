"""events_emit: many events recorded at once (a plan's commit), each as event_emit records it;
a destination's burst gets a message per slot it may use, the rest wait for a slot and are sent
by the tasks that end their batches (contract "Webhooks")."""

import gc
import time

import pytest
from django.db import transaction

from tests import builders
from tests.webhooks.conftest import independent_hmac_hex
from webhooks import events as webhook_events
from webhooks import queueing
from webhooks.models import Delivery, DeliveryStatus, Event

HOOK = "http://127.0.0.1:9/in"


def emits(organization, count: int, *, platform: str = "partner_a", event="order.assigned"):
    return [
        webhook_events.EventToEmit(
            organization_id=organization.id,
            family="partner",
            event=event,
            payload={"id": f"order-{n}", "status": "assigned", "externalRef": f"B-{n}"},
            platform=platform,
        )
        for n in range(count)
    ]


@pytest.mark.django_db
def test_each_event_is_recorded_as_one_emitted_alone(organization):
    builders.api_key(organization, "partner_a", webhook_url=HOOK)
    builders.order_event(organization, "ALONE", event="order.assigned", status="assigned")
    alone = Event.objects.get(payload__externalRef="ALONE")

    (recorded,) = webhook_events.events_emit(emits=emits(organization, 1))

    fields = ("organization_id", "family", "name", "coalescible", "is_open")
    assert [getattr(recorded, name) for name in fields] == [getattr(alone, name) for name in fields]
    assert recorded.event_id.startswith("evt_") and recorded.event_id != alone.event_id
    recorded.refresh_from_db()
    assert recorded.payload == {"id": "order-0", "status": "assigned", "externalRef": "B-0"}
    delivery = Delivery.objects.get(event=recorded)
    single = Delivery.objects.get(event=alone)
    assert (delivery.url, delivery.api_key_id, delivery.status) == (
        single.url,
        single.api_key_id,
        DeliveryStatus.PENDING,
    )
    assert delivery.next_attempt_at == delivery.schedule_start == recorded.created_at


@pytest.mark.django_db
def test_deliveries_are_due_in_the_order_emitted_with_one_message_per_hundred(
    organization, django_capture_on_commit_callbacks, monkeypatch
):
    builders.api_key(organization, "partner_a", webhook_url=HOOK)
    published: list[tuple] = []
    monkeypatch.setattr(queueing, "delivery_enqueue", lambda *ids, **options: published.append(ids))
    # An earlier test's rolled-back group goes once nothing refers to it (queueing's weak ref).
    gc.collect()

    with django_capture_on_commit_callbacks(execute=True):
        recorded = webhook_events.events_emit(emits=emits(organization, 145))

    deliveries = list(Delivery.objects.select_related("event").order_by("next_attempt_at"))
    assert [d.event.payload["externalRef"] for d in deliveries] == [f"B-{n}" for n in range(145)]
    assert [d.event_id for d in deliveries] == [event.id for event in recorded]
    assert all(d.queued_at is not None for d in deliveries)
    # One destination: its new deliveries in messages of DELIVERY_BATCH ids, oldest first.
    assert [len(ids) for ids in published] == [queueing.DELIVERY_BATCH, 45]
    assert [i for ids in published for i in ids] == [d.id for d in deliveries]


@pytest.mark.django_db
def test_a_new_deliverys_message_names_its_destination(
    organization, django_capture_on_commit_callbacks, monkeypatch
):
    """The worker then claims it at once, without reading it first (test_delivery.py)."""
    issued = builders.api_key(organization, "partner_a", webhook_url=HOOK)
    published: list[tuple] = []
    monkeypatch.setattr(
        queueing, "delivery_enqueue", lambda *ids, **options: published.append((ids, options))
    )
    gc.collect()

    with django_capture_on_commit_callbacks(execute=True):
        builders.order_event(organization, "SO-1")

    ((ids, options),) = published
    assert ids == (Delivery.objects.get().id,)
    assert options == {"key_id": issued.api_key.id}


@pytest.mark.django_db
def test_each_event_goes_where_event_emit_sends_it(organization):
    builders.api_key(organization, "partner_a", webhook_url=HOOK)
    builders.api_key(organization, "partner_b", webhook_url=HOOK, webhook_events=["order.created"])
    builders.api_key(organization, "erp", webhook_url=HOOK)
    erp = webhook_events.EventToEmit(
        organization_id=organization.id, family="erp", event="erp.slot.booked", payload={}
    )

    webhook_events.events_emit(
        emits=[
            *emits(organization, 1),  # partner_a takes every event
            *emits(organization, 1, platform="partner_b"),  # not a webhook event it names
            *emits(organization, 1, platform="partner_c"),  # no key
            *emits(organization, 1, event="order.eta_updated"),  # opt-in, not named
            erp,
        ]
    )

    assert Event.objects.filter(family="partner").count() == 4
    assert sorted(
        Delivery.objects.values_list("event__name", "api_key__platform", "event__family")
    ) == [("erp.slot.booked", "erp", "erp"), ("order.assigned", "partner_a", "partner")]


def wait_until(predicate, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


def test_a_burst_reaches_the_receiver_once_each_without_the_sweep(celery_worker, receiver):
    """45 deliveries, 3 messages: the tasks that end their batches send the waiting ones."""
    organization = builders.organization()
    issued = builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    with transaction.atomic():
        webhook_events.events_emit(emits=emits(organization, 45))

    requests = receiver.wait_for(45)
    assert sorted(r.json["payload"]["externalRef"] for r in requests) == sorted(
        f"B-{n}" for n in range(45)
    )
    for request in requests:
        assert request.headers["X-Service-Signature"] == (
            f"sha256={independent_hmac_hex(issued.webhook_secret, request.body)}"
        )
    wait_until(
        lambda: set(Delivery.objects.values_list("status", flat=True)) == {DeliveryStatus.DELIVERED}
    )
    time.sleep(0.3)
    assert len(receiver.requests) == 45
