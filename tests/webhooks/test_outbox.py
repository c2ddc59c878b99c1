"""The outbox: events written in the caller's transaction, destinations, ids, coalescing."""

import time
import uuid
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from tenants.services import api_key_revoke, api_key_update
from tests import builders
from webhooks import events as webhook_events
from webhooks import queueing, services, tasks
from webhooks.models import Delivery, Event
from zones import services as zone_services

pytestmark = pytest.mark.django_db

T0 = datetime(2030, 3, 4, 10, 15, 30, tzinfo=UTC)


def emit_partner(organization, platform="partner_a", event="order.created", extra=None):
    builders.order_event(organization, order_id="o-1", platform=platform, event=event, extra=extra)


def test_no_webhook_url_records_the_event_without_a_delivery(organization):
    builders.api_key(organization, "partner_a")  # no webhookUrl
    emit_partner(organization)
    event = Event.objects.get(organization=organization)
    assert (event.family, event.name) == ("partner", "order.created")
    assert event.payload == {"id": "o-1", "status": "pending", "externalRef": "SO-1"}
    assert not Delivery.objects.filter(organization=organization).exists()


def test_no_key_of_the_platform_records_the_event_without_a_delivery(organization):
    builders.api_key(organization, "partner_b", webhook_url="http://127.0.0.1:9/b")
    emit_partner(organization, platform="partner_a")
    assert Event.objects.filter(organization=organization).count() == 1
    assert not Delivery.objects.filter(organization=organization).exists()


def test_erp_events_go_to_the_erp_key(organization):
    builders.api_key(organization, "partner_a", webhook_url="http://127.0.0.1:9/partner")
    erp_key = builders.api_key(organization, "erp", webhook_url="http://127.0.0.1:9/erp")
    webhook_events.polygon_updated_emit(zone=builders.zone_row(organization, "North"))
    delivery = Delivery.objects.get(organization=organization)
    assert (delivery.url, delivery.api_key_id) == ("http://127.0.0.1:9/erp", erp_key.api_key.id)


def test_revoked_key_receives_nothing(organization):
    issued = builders.api_key(organization, "partner_a", webhook_url="http://127.0.0.1:9/a")
    api_key_revoke(api_key=issued.api_key)
    emit_partner(organization)
    assert not Delivery.objects.filter(organization=organization).exists()


def test_the_destination_is_read_from_the_keys_once_while_no_key_changes(organization):
    builders.api_key(organization, "partner_a", webhook_url="http://127.0.0.1:9/a")
    emit_partner(organization)
    with CaptureQueriesContext(connection) as queries:
        emit_partner(organization)
    assert not [q for q in queries.captured_queries if "tenants_apikey" in q["sql"]]
    assert Delivery.objects.filter(organization=organization).count() == 2


def test_a_new_key_a_new_url_and_a_revoke_reach_the_next_event(organization):
    builders.api_key(organization, "partner_b", webhook_url="http://127.0.0.1:9/b")
    emit_partner(organization)  # no key of partner_a yet: no delivery, and that is cached
    issued = builders.api_key(organization, "partner_a", webhook_url="http://127.0.0.1:9/a")
    emit_partner(organization)
    api_key_update(api_key=issued.api_key, webhook_url="http://127.0.0.1:9/a2")
    emit_partner(organization)
    api_key_revoke(api_key=issued.api_key)
    emit_partner(organization)
    urls = Delivery.objects.filter(organization=organization).order_by("created_at")
    assert list(urls.values_list("url", flat=True)) == [
        "http://127.0.0.1:9/a",
        "http://127.0.0.1:9/a2",
    ]


def test_partner_payload_carries_extra_fields_and_a_unique_id(organization):
    builders.api_key(organization, "partner_a", webhook_url="http://127.0.0.1:9/a")
    emit_partner(organization, event="order.assigned", extra={"driver": {"name": "Ada"}})
    emit_partner(organization, event="order.assigned")
    first, second = Event.objects.filter(organization=organization).order_by("created_at")
    assert first.payload == {
        "id": "o-1",
        "status": "pending",
        "externalRef": "SO-1",
        "driver": {"name": "Ada"},
    }
    assert first.event_id != second.event_id
    assert first.event_id.startswith("evt_")
    assert Delivery.objects.filter(organization=organization).count() == 2


def test_unknown_partner_event_name_is_a_programming_error(organization):
    with pytest.raises(ValueError, match=r"order\.teleported"):
        emit_partner(organization, event="order.teleported")


def test_rolled_back_transaction_leaves_no_event_and_queues_nothing(
    organization, django_capture_on_commit_callbacks
):
    builders.api_key(organization, "partner_a", webhook_url="http://127.0.0.1:9/a")
    with (
        django_capture_on_commit_callbacks() as queued,
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        emit_partner(organization)
        raise RuntimeError("the order could not be saved")
    assert queued == []
    assert not Event.objects.filter(organization=organization).exists()
    assert not Delivery.objects.filter(organization=organization).exists()


def test_delivery_task_is_queued_only_on_commit(organization, django_capture_on_commit_callbacks):
    builders.api_key(organization, "partner_a", webhook_url="http://127.0.0.1:9/a")
    with django_capture_on_commit_callbacks() as queued:
        emit_partner(organization)
    assert len(queued) == 1


def emit_slot_booked(organization, event_id: str, payload: dict) -> Event:
    return webhook_events.event_emit(
        organization_id=organization.id,
        family="erp",
        event="erp.slot.booked",
        event_id=event_id,
        payload=payload,
    )


def test_explicit_event_id_names_one_event(organization):
    builders.api_key(organization, "erp", webhook_url="http://127.0.0.1:9/erp")
    first = emit_slot_booked(organization, "erp.slot.booked:o-1", {"n": 1})
    again = emit_slot_booked(organization, "erp.slot.booked:o-1", {"n": 2})
    assert again.pk == first.pk
    assert Event.objects.get(pk=first.pk).payload == {"n": 1}
    assert Delivery.objects.filter(organization=organization).count() == 1


def test_event_ids_are_unique_per_organization_only(organization):
    for org in (organization, builders.organization()):
        emit_slot_booked(org, "erp.slot.booked:same", {})
    assert Event.objects.filter(event_id="erp.slot.booked:same").count() == 2


def test_polygon_event_has_the_interface_payload_and_hour_bucket_id(organization):
    zone = builders.zone_row(organization, "North Side", purpose="slot")
    with time_machine.travel(T0, tick=False):
        webhook_events.polygon_updated_emit(zone=zone)
    event = Event.objects.get(organization=organization)
    assert event.name == "erp.polygon.updated"
    assert event.event_id == f"erp.polygon.updated:{zone.id}:2030-03-04T10"
    assert event.payload == {
        "polygon_id": str(zone.id),
        "polygon_name": "North Side",
        "geodata": zone.geodata,
        "enabled": True,
        "zone_purpose": "slot",
        "updatedAt": zone.updated_at.isoformat().replace("+00:00", "Z"),
    }


def test_deleted_zone_event_says_so(organization):
    zone = builders.zone_row(organization, "North")
    webhook_events.polygon_updated_emit(zone=zone, deleted=True)
    assert Event.objects.get(organization=organization).payload["deleted"] is True


def test_hour_bucket_is_utc(organization):
    zone = builders.zone_row(organization, "North")
    local_evening = datetime.fromisoformat("2030-03-04T23:30:00-05:00")  # 04:30 UTC next day
    with time_machine.travel(local_evening, tick=False):
        webhook_events.polygon_updated_emit(zone=zone)
    assert Event.objects.get().event_id == f"erp.polygon.updated:{zone.id}:2030-03-05T04"


def test_slots_updated_payload_and_id(organization):
    zone = builders.zone_row(organization, "South")
    slots = [
        {
            "id": "t-1",
            "startTime": "08:00",
            "endTime": "12:00",
            "durationMinutes": 240,
            "cutoffMinutes": 120,
            "vehicleCapacity": [{"vehicleType": "van", "count": 1, "maxOrdersPerVehicle": 10}],
            "capacity": 10,
        }
    ]
    availability = [
        {"date": "2030-03-05", "templateId": "t-1", "capacity": 10, "booked": 2, "available": 8}
    ]
    with time_machine.travel(T0, tick=False):
        webhook_events.slots_updated_emit(zone=zone, slots=slots, availability=availability)
    event = Event.objects.get(organization=organization)
    assert event.event_id == f"erp.slots.updated:{zone.id}:2030-03-04T10"
    assert event.payload == {
        "polygon_id": str(zone.id),
        "polygon_name": "South",
        "zone_purpose": "both",
        "geodata": zone.geodata,
        "slots": slots,
        "availability": availability,
        "updatedAt": "2030-03-04T10:15:30Z",
    }


def test_unsent_hour_bucket_event_takes_the_newer_payload(organization):
    builders.api_key(organization, "erp", webhook_url="http://127.0.0.1:9/erp")
    zone = builders.zone_row(organization, "North")
    with time_machine.travel(T0, tick=False) as clock:
        webhook_events.polygon_updated_emit(zone=zone)
        zone.name = "Renamed"
        zone.save()
        clock.move_to(T0 + timedelta(minutes=40))
        webhook_events.polygon_updated_emit(zone=zone)
    event = Event.objects.get(organization=organization)
    assert event.payload["polygon_name"] == "Renamed"
    assert Delivery.objects.filter(organization=organization).count() == 1


def test_next_hour_is_a_new_event(organization):
    builders.api_key(organization, "erp", webhook_url="http://127.0.0.1:9/erp")
    zone = builders.zone_row(organization, "North")
    with time_machine.travel(T0, tick=False) as clock:
        webhook_events.polygon_updated_emit(zone=zone)
        clock.move_to(T0 + timedelta(minutes=45))  # 11:00:30
        webhook_events.polygon_updated_emit(zone=zone)
    assert sorted(Event.objects.values_list("event_id", flat=True)) == [
        f"erp.polygon.updated:{zone.id}:2030-03-04T10",
        f"erp.polygon.updated:{zone.id}:2030-03-04T11",
    ]
    assert Delivery.objects.filter(organization=organization).count() == 2


def test_a_change_after_sending_starts_a_new_event_with_the_same_id(organization, receiver):
    builders.api_key(organization, "erp", webhook_url=receiver.url)
    zone = builders.zone_row(organization, "North")
    with time_machine.travel(T0, tick=False):
        webhook_events.polygon_updated_emit(zone=zone)
        first = Delivery.objects.get(organization=organization)
        assert tasks.deliver(str(first.id)) is True
        zone.enabled = False
        webhook_events.polygon_updated_emit(zone=zone)
    events = Event.objects.filter(organization=organization)
    assert events.count() == 2
    sent, newer = events.get(is_open=False), events.get(is_open=True)
    assert sent.event_id == newer.event_id
    assert sent.payload["enabled"] is True  # what was sent stays as sent
    assert newer.payload["enabled"] is False
    assert receiver.requests[0].json["payload"]["enabled"] is True


def test_coalesced_events_of_different_zones_stay_apart(organization):
    north, south = (
        builders.zone_row(organization, "North"),
        builders.zone_row(organization, "South"),
    )
    with time_machine.travel(T0, tick=False):
        webhook_events.polygon_updated_emit(zone=north)
        webhook_events.polygon_updated_emit(zone=south)
    assert Event.objects.filter(organization=organization).count() == 2


def test_broker_down_at_commit_is_logged_not_raised(
    organization, dead_broker, django_capture_on_commit_callbacks, caplog
):
    builders.api_key(organization, "partner_a", webhook_url="http://127.0.0.1:9/a")
    with django_capture_on_commit_callbacks(execute=True):
        emit_partner(organization)
    delivery = Delivery.objects.get(organization=organization)
    assert f"webhook delivery {delivery.id} not queued" in caplog.text

    # While the broker is known to be down, commits do not wait for it again.
    started = time.monotonic()
    with django_capture_on_commit_callbacks(execute=True):
        emit_partner(organization)
    assert time.monotonic() - started < 0.5
    # Both are pending, found by the sweep once their message is presumed lost.
    later = timezone.now() + timedelta(seconds=queueing.REQUEUE_AFTER_SECONDS + 1)
    assert services.deliveries_sweep(now=later) == 2


def test_zone_edit_through_the_zones_service_emits_polygon_updated(organization):
    builders.api_key(organization, "erp", webhook_url="http://127.0.0.1:9/erp")
    with time_machine.travel(T0, tick=False) as clock:
        zone = builders.zone(
            organization, "Harbour", builders.SQUARE, timezone_name=None, purpose="slot"
        )
        clock.move_to(T0 + timedelta(hours=1))
        zone_services.zone_update(zone=zone, name="Harbour East")
        zone_services.zone_update(zone=zone, enabled=False)
    events = Event.objects.filter(organization=organization).order_by("event_id")
    assert [(e.name, e.event_id) for e in events] == [
        ("erp.polygon.updated", f"erp.polygon.updated:{zone.id}:2030-03-04T10"),
        ("erp.polygon.updated", f"erp.polygon.updated:{zone.id}:2030-03-04T11"),
    ]
    # Both edits of 11:xx coalesced into one unsent event with the latest state.
    latest = events[1].payload
    assert (latest["polygon_name"], latest["enabled"]) == ("Harbour East", False)
    assert Delivery.objects.filter(organization=organization).count() == 2


def test_zone_delete_through_the_zones_service_emits_a_deleted_polygon(organization):
    zone = builders.zone(organization, "Gone", builders.SQUARE, timezone_name=None)
    zone_id = zone.id
    zone_services.zone_delete(zone=zone)
    event = Event.objects.get(organization=organization)  # create and delete coalesced
    assert event.payload["polygon_id"] == str(zone_id)
    assert event.payload["deleted"] is True


def test_payload_values_are_json_like_api_responses(organization):
    order_id = uuid.UUID("5f0c6a52-1d8e-4a8e-9a59-6f1f0f7c1a11")
    builders.order_event(
        organization,
        "SO-9",
        order_id=order_id,
        event="order.delivered",
        status="delivered",
        extra={"deliveredAt": T0, "driverId": order_id},
    )
    assert Event.objects.get(organization=organization).payload == {
        "id": str(order_id),
        "status": "delivered",
        "externalRef": "SO-9",
        "deliveredAt": "2030-03-04T10:15:30Z",
        "driverId": str(order_id),
    }


def test_emit_returns_the_recorded_event(organization):
    builders.api_key(organization, "partner_a", webhook_url="http://127.0.0.1:9/a")
    event = webhook_events.event_emit(
        organization_id=organization.id,
        family="partner",
        event="order.created",
        platform="partner_a",
        payload={"id": "o-1"},
    )
    stored = Event.objects.get(pk=event.pk)
    assert (stored.event_id, stored.name, stored.payload) == (
        event.event_id,
        "order.created",
        {"id": "o-1"},
    )
    assert Delivery.objects.get(event=stored).url == "http://127.0.0.1:9/a"
