"""Event filters per key (`webhookEvents`): set in provisioning and the management API, shown
in key listings, and honoured when events are emitted (docs/webhooks.md "Choosing events")."""

import re
from pathlib import Path

import pytest

from tenants.services import api_key_update
from tests import builders
from tests.conftest import assert_error
from webhooks import catalog, tasks
from webhooks import events as webhook_events
from webhooks.models import Delivery, Event

pytestmark = pytest.mark.django_db

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "webhooks.md"


def keys_url(organization) -> str:
    return f"/api/provisioning/organizations/{organization.id}/api-keys"


def emit(organization, event: str, status: str, ref: str = "SO-1") -> None:
    builders.order_event(organization, ref, event=event, status=status)


def catalogue_in_the_guide() -> dict[str, tuple[str, ...]]:
    """The event names per family (first word of the second column) of the catalogue table of
    docs/webhooks.md ("Choosing events"), in the order the page lists them."""
    page = GUIDE.read_text()
    table = page[page.index("The catalogue (`delivery/webhook_events.py`") :].split("\n\n")[1]
    rows = re.findall(r"^\| (`.+`) \| (\w+)", table, flags=re.MULTILINE)
    return {family: tuple(re.findall(r"`([^`]+)`", names)) for names, family in rows}


def test_the_catalogue_names_every_event_the_service_emits():
    # The contract's names, in the contract's order (docs/contract.md "Webhooks") ...
    order_statuses = ("created", "assigned", "picked_up", "in_transit", "delivered", "failed")
    contract = (
        *(f"order.{status}" for status in (*order_statuses, "cancelled")),
        *("erp.slot.booked", "erp.slots.updated", "erp.polygon.updated"),
        "order.eta_updated",  # opt-in (docs/contract.md "Couriers")
    )
    assert contract == catalog.SUBSCRIBABLE_EVENTS
    # ... and the guide publishes the same catalogue.
    guide = catalogue_in_the_guide()
    assert guide == {
        "Partner": catalog.ORDER_EVENTS,
        "ERP": catalog.ERP_EVENTS,
        "Opt": catalog.OPT_IN_EVENTS,
        "either": (catalog.TEST_EVENT,),
    }
    assert guide["Partner"] + guide["ERP"] + guide["Opt"] == catalog.SUBSCRIBABLE_EVENTS
    assert webhook_events.ORDER_EVENTS == catalog.ORDER_EVENTS
    assert {
        webhook_events.SLOT_BOOKED,
        webhook_events.SLOTS_UPDATED,
        webhook_events.POLYGON_UPDATED,
    } == set(catalog.ERP_EVENTS)


def test_provisioning_create_and_update_set_the_filter_shown_in_the_listing(
    provisioning_client, organization
):
    created = provisioning_client.post(
        keys_url(organization),
        {
            "name": "A",
            "platform": "partner_a",
            "webhookEvents": ["order.delivered", "order.failed", "order.delivered"],
        },
        format="json",
    )
    assert created.status_code == 201, created.content
    assert created.json()["webhookEvents"] == ["order.delivered", "order.failed"]
    key_id = created.json()["id"]
    (listed,) = provisioning_client.get(keys_url(organization)).json()
    assert listed["webhookEvents"] == ["order.delivered", "order.failed"]

    # Absent leaves it as it is ...
    renamed = provisioning_client.post(
        f"{keys_url(organization)}/{key_id}", {"name": "A2"}, format="json"
    )
    assert renamed.json()["webhookEvents"] == ["order.delivered", "order.failed"]
    # ... a list replaces it, and null means every event again.
    changed = provisioning_client.post(
        f"{keys_url(organization)}/{key_id}", {"webhookEvents": ["order.created"]}, format="json"
    )
    assert changed.json()["webhookEvents"] == ["order.created"]
    cleared = provisioning_client.post(
        f"{keys_url(organization)}/{key_id}", {"webhookEvents": None}, format="json"
    )
    assert cleared.status_code == 200
    assert cleared.json()["webhookEvents"] is None


def test_a_key_created_without_a_filter_lists_null(provisioning_client, organization):
    created = provisioning_client.post(keys_url(organization), {"name": "A"}, format="json")
    assert created.json()["webhookEvents"] is None
    (listed,) = provisioning_client.get(keys_url(organization)).json()
    assert listed["webhookEvents"] is None


def test_an_unknown_event_name_is_a_400_naming_it(provisioning_client, organization):
    body = assert_error(
        provisioning_client.post(
            keys_url(organization),
            {"name": "A", "webhookEvents": ["order.created", "order.shipped", "refund.done"]},
            format="json",
        ),
        400,
    )
    assert [m.split(" (known:")[0] for m in body["message"]] == [
        "webhookEvents has an unknown event: order.shipped",
        "webhookEvents has an unknown event: refund.done",
    ]
    key = builders.api_key(organization, "partner_b")
    body = assert_error(
        provisioning_client.post(
            f"{keys_url(organization)}/{key.api_key.id}",
            {"webhookEvents": ["webhook.test"]},
            format="json",
        ),
        400,
    )
    assert body["message"][0].startswith("webhookEvents has an unknown event: webhook.test")


@pytest.mark.parametrize("value", ["order.created", [1], {"a": 1}, True, [None]])
def test_webhook_events_must_be_an_array_of_names(provisioning_client, organization, value):
    assert_error(
        provisioning_client.post(
            keys_url(organization), {"name": "A", "webhookEvents": value}, format="json"
        ),
        400,
        ["webhookEvents must be an array of event names or null"],
    )


def test_management_api_creates_and_updates_the_filter(organization):
    client = builders.manager_client(organization, "admin@example.com")
    base = f"/api/manage/organizations/{organization.id}/api-keys"
    created = client.post(
        base,
        {"name": "ERP", "platform": "erp", "webhookEvents": ["erp.slot.booked"]},
        format="json",
    )
    assert created.status_code == 201, created.content
    assert created.json()["webhookEvents"] == ["erp.slot.booked"]
    key_id = created.json()["id"]

    updated = client.patch(
        f"{base}/{key_id}", {"webhookEvents": ["erp.polygon.updated"]}, format="json"
    )
    assert updated.status_code == 200, updated.content
    assert updated.json()["webhookEvents"] == ["erp.polygon.updated"]
    assert client.get(base).json()[0]["webhookEvents"] == ["erp.polygon.updated"]
    assert_error(client.patch(f"{base}/{key_id}", {"webhookEvents": ["nope"]}, format="json"), 400)
    assert_error(
        client.patch(f"{base}/not-a-key", {"webhookEvents": None}, format="json"),
        404,
        "API key not found",
    )


def test_events_not_listed_are_neither_delivered_nor_recorded_as_deliveries(organization, receiver):
    builders.api_key(
        organization,
        "partner_a",
        webhook_url=receiver.url,
        webhook_events=["order.delivered"],
    )
    emit(organization, "order.created", "pending")
    emit(organization, "order.delivered", "delivered")

    # Both events are recorded; only the listed one has a delivery.
    assert sorted(
        Event.objects.filter(organization=organization).values_list("name", flat=True)
    ) == [
        "order.created",
        "order.delivered",
    ]
    (delivery,) = Delivery.objects.filter(organization=organization).select_related("event")
    assert delivery.event.name == "order.delivered"
    assert tasks.deliver(str(delivery.id)) is True
    (request,) = receiver.wait_for(1)
    assert request.json["event"] == "order.delivered"


def test_a_filter_applies_to_erp_keys_and_an_empty_list_receives_nothing(organization, receiver):
    erp = builders.api_key(
        organization, "erp", webhook_url=receiver.url, webhook_events=["erp.slot.booked"]
    )
    builders.api_key(organization, "partner_a", webhook_url=receiver.url, webhook_events=[])
    webhook_events.polygon_updated_emit(zone=builders.zone_row(organization, "North"))
    emit(organization, "order.created", "pending")
    assert Event.objects.filter(organization=organization).count() == 2
    assert not Delivery.objects.filter(organization=organization).exists()

    # Null (every event) again: the next polygon change is delivered.
    api_key_update(api_key=erp.api_key, webhook_events=None)
    webhook_events.polygon_updated_emit(zone=builders.zone_row(organization, name="South"))
    assert Delivery.objects.filter(organization=organization).count() == 1


def test_admin_edits_the_filter_with_checkboxes(organization):
    issued = builders.api_key(organization, "partner_a", webhook_url="https://hooks.example.com/a")
    client = builders.admin_site_client(organization)
    url = f"/admin/tenants/apikey/{issued.api_key.pk}/change/"
    page = client.get(url)
    assert b'value="order.delivered"' in page.content

    form = {"name": "Renamed", "webhook_url": "https://hooks.example.com/a"}
    response = client.post(url, {**form, "webhook_events": ["order.delivered", "order.failed"]})
    assert response.status_code == 302, response.content
    issued.api_key.refresh_from_db()
    assert issued.api_key.webhook_events == ["order.delivered", "order.failed"]
    # No box checked: every event again.
    assert client.post(url, form).status_code == 302
    issued.api_key.refresh_from_db()
    assert issued.api_key.webhook_events is None
