"""Delivery records in Django admin: scoped per organization, read-only, redeliver action."""

import datetime

import pytest

from tests import builders
from webhooks import tasks
from webhooks.models import Delivery, DeliveryAttempt, DeliveryStatus

pytestmark = pytest.mark.django_db


def emit(organization, ref: str) -> Delivery:
    builders.order_event(organization, ref, order_id=f"order-{ref}")
    return Delivery.objects.filter(organization=organization).first()


def test_org_admin_sees_only_their_deliveries(organization, other_organization):
    builders.api_key(organization, "partner_a", webhook_url="http://127.0.0.1:9/ours")
    builders.api_key(other_organization, "partner_a", webhook_url="http://127.0.0.1:9/theirs")
    emit(organization, "A")
    theirs = emit(other_organization, "B")
    client = builders.admin_site_client(organization)

    listing = client.get("/admin/webhooks/delivery/")
    assert listing.status_code == 200
    assert b"127.0.0.1:9/ours" in listing.content
    assert b"127.0.0.1:9/theirs" not in listing.content
    response = client.get(f"/admin/webhooks/delivery/{theirs.pk}/change/")
    assert response.status_code in (302, 403, 404)


def test_delivery_page_shows_its_attempts_read_only(organization, receiver):
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    receiver.statuses = [418]
    delivery = emit(organization, "A")
    tasks.deliver(str(delivery.id))
    client = builders.admin_site_client(organization)

    page = client.get(f"/admin/webhooks/delivery/{delivery.pk}/change/")
    assert page.status_code == 200
    assert b"HTTP 418" in page.content
    assert b'name="_save"' not in page.content  # nothing to edit
    assert client.get("/admin/webhooks/delivery/add/").status_code == 403


def test_redeliver_action_queues_a_new_round(
    organization, receiver, django_capture_on_commit_callbacks
):
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    delivery = emit(organization, "A")
    tasks.deliver(str(delivery.id))
    client = builders.admin_site_client(organization)

    with django_capture_on_commit_callbacks() as queued:
        response = client.post(
            "/admin/webhooks/delivery/",
            {"action": "redeliver", "_selected_action": [str(delivery.pk)]},
        )
    assert response.status_code == 302
    assert len(queued) == 1
    assert Delivery.objects.get(pk=delivery.pk).status == DeliveryStatus.PENDING


def test_delivery_times_say_utc_and_a_long_url_is_shortened(organization):
    url = "http://127.0.0.1:9/hooks/delivery-service/organization-demo/partner-a/events?x=1"
    builders.api_key(organization, "partner_a", webhook_url=url)
    delivery = emit(organization, "A")
    created = datetime.datetime(2031, 1, 15, 13, 5, tzinfo=datetime.UTC)
    # Failed, so it has no next attempt time (a pending delivery always has one) beside these.
    Delivery.objects.filter(pk=delivery.pk).update(
        created_at=created, status=DeliveryStatus.FAILED, next_attempt_at=None
    )
    DeliveryAttempt.objects.create(
        delivery=delivery, number=1, started_at=created, status_code=500, latency_ms=12
    )
    client = builders.admin_site_client(organization)

    listing = client.get("/admin/webhooks/delivery/").content.decode()
    page = client.get(f"/admin/webhooks/delivery/{delivery.pk}/change/").content.decode()

    assert "2031-01-15 13:05 UTC" in listing
    assert "2031-01-15 13:05 UTC" in page  # created, and the attempt's start in the inline
    assert page.count("2031-01-15 13:05 UTC") == 2
    assert f'title="{url}"' in listing.replace("&amp;", "&")
    assert f">{url}<" not in listing.replace("&amp;", "&")
