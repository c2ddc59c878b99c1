"""Hour-bucketed ERP events are snapshots (docs/contract.md "Webhooks"): a change after one was
delivered goes out again under the same `eventId` with a later `updatedAt`, so a receiver that
deduplicates on (eventId, updatedAt), or applies snapshots when newer, never drops it.

The services make the changes; the receiver is a real local HTTP server."""

from datetime import UTC, datetime, time

import pytest
import time_machine

from tests import builders
from webhooks import tasks
from webhooks.models import Delivery, DeliveryStatus
from zones import services as zone_services

pytestmark = pytest.mark.django_db

#: 10:15:30 UTC; the clock runs, and every change of a test falls in the 10:00 hour
T0 = datetime(2030, 3, 4, 10, 15, 30, tzinfo=UTC)


def deliver_pending(organization) -> None:
    for delivery in Delivery.objects.filter(
        organization=organization, status=DeliveryStatus.PENDING
    ):
        assert tasks.deliver(str(delivery.id)) is True


def harbour(organization):
    """A slot zone in the organization's default time zone."""
    return builders.zone(
        organization, "Harbour", builders.SQUARE, timezone_name=None, purpose="slot"
    )


def template_at_8(zone, day_of_week: int):
    """A template at 08:00 on `day_of_week`, the rest from the slot policy's defaults."""
    return builders.slot_template(
        zone, day_of_week=day_of_week, start=time(8), duration=None, cutoff=None, capacity=None
    )


def updated_at(request) -> datetime:
    return datetime.fromisoformat(request.json["payload"]["updatedAt"])


def test_a_newer_slots_change_after_delivery_arrives_with_the_same_id_and_a_later_updated_at(
    organization, receiver
):
    builders.api_key(organization, "erp", webhook_url=receiver.url)
    with time_machine.travel(T0, tick=True):
        zone = harbour(organization)
        template_at_8(zone, 0)
        deliver_pending(organization)
        template_at_8(zone, 1)
        deliver_pending(organization)

    first, second = [r for r in receiver.requests if r.json["event"] == "erp.slots.updated"]
    assert first.json["eventId"] == second.json["eventId"]
    assert first.json["eventId"] == f"erp.slots.updated:{zone.id}:2030-03-04T10"
    assert updated_at(first) < updated_at(second)
    assert [len(r.json["payload"]["slots"]) for r in (first, second)] == [1, 2]
    assert T0 <= updated_at(first) < datetime(2030, 3, 4, 11, tzinfo=UTC)


def test_a_newer_zone_change_after_delivery_arrives_with_the_same_id_and_a_later_updated_at(
    organization, receiver
):
    builders.api_key(organization, "erp", webhook_url=receiver.url)
    with time_machine.travel(T0, tick=True):
        zone = harbour(organization)
        deliver_pending(organization)
        zone_services.zone_update(zone=zone, enabled=False)
        deliver_pending(organization)

    first, second = receiver.requests
    assert first.json["eventId"] == second.json["eventId"]
    assert (first.json["payload"]["enabled"], second.json["payload"]["enabled"]) == (True, False)
    assert updated_at(first) < updated_at(second)


def test_changes_merged_into_an_unsent_snapshot_carry_the_latest_updated_at(organization, receiver):
    builders.api_key(organization, "erp", webhook_url=receiver.url)
    with time_machine.travel(T0, tick=True):
        zone = harbour(organization)
        template_at_8(zone, 0)
        before = datetime.now(UTC)
        template_at_8(zone, 1)
        deliver_pending(organization)

    (snapshot,) = [r for r in receiver.requests if r.json["event"] == "erp.slots.updated"]
    assert len(snapshot.json["payload"]["slots"]) == 2
    assert updated_at(snapshot) >= before
