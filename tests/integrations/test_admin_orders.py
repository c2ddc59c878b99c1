"""Orders in Django admin: scoped per organization, history inline, transitions by actions."""

import datetime
import re
from zoneinfo import ZoneInfo

import pytest

from integrations.models import Order, OrderStatusEvent
from tests import builders
from webhooks.models import Event

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/integrations/order/"


@pytest.fixture
def orders(organization, other_organization):
    builders.zone(organization)
    builders.zone(other_organization)
    builders.create_order(builders.partner_client(organization), externalRef="OURS-1")
    builders.create_order(builders.partner_client(other_organization), externalRef="THEIRS-1")
    return Order.objects.get(external_ref="OURS-1"), Order.objects.get(external_ref="THEIRS-1")


def act(client, action: str, orders, **extra):
    return client.post(
        CHANGELIST,
        {"action": action, "_selected_action": [str(o.pk) for o in orders], **extra},
        follow=True,
    )


def test_org_admin_sees_only_their_orders(organization, orders):
    _, theirs = orders
    client = builders.admin_site_client(organization)

    listing = client.get(CHANGELIST)

    assert listing.status_code == 200
    assert b"OURS-1" in listing.content
    assert b"THEIRS-1" not in listing.content
    assert client.get(f"{CHANGELIST}{theirs.pk}/change/").status_code in (302, 403, 404)


def test_change_page_shows_the_status_history(organization, orders):
    ours, _ = orders
    client = builders.admin_site_client(organization)

    page = client.get(f"{CHANGELIST}{ours.pk}/change/")

    assert page.status_code == 200
    assert b"Order status events" in page.content
    assert b"orderstatusevent" in page.content.lower() or b"status_events" in page.content


def test_status_is_not_editable_and_orders_are_not_added_in_admin(organization, orders):
    ours, _ = orders
    client = builders.admin_site_client(organization)

    page = client.get(f"{CHANGELIST}{ours.pk}/change/")

    assert b'name="status"' not in page.content
    assert client.get(f"{CHANGELIST}add/").status_code == 403


def test_cancel_action_goes_through_the_status_machine(organization, orders):
    ours, _ = orders
    user = builders.admin(organization)
    client = builders.admin_site_login(user.email)

    response = act(client, "transition_to_cancelled", [ours], reason="Duplicate")

    assert response.status_code == 200
    ours.refresh_from_db()
    assert ours.status == "cancelled"
    event = OrderStatusEvent.objects.get(order=ours, to_status="cancelled")
    assert (event.actor, event.reason) == (user.email, "Duplicate")
    assert Event.objects.filter(name="order.cancelled", organization=organization).count() == 1


def test_assign_action_takes_a_driver_id(organization, orders):
    ours, _ = orders
    driver = organization.drivers.create(name="Dora")
    client = builders.admin_site_client(organization)

    act(client, "transition_to_assigned", [ours], driver_id=str(driver.id))

    ours.refresh_from_db()
    assert (ours.status, ours.driver) == ("assigned", driver)


def test_assign_action_refuses_another_organizations_driver(
    organization, other_organization, orders
):
    ours, _ = orders
    theirs = other_organization.drivers.create(name="Not Ours")
    client = builders.admin_site_client(organization)

    response = act(client, "transition_to_assigned", [ours], driver_id=str(theirs.id))

    ours.refresh_from_db()
    assert ours.status == "pending"
    assert b"Driver not found" in response.content


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ("transition_to_assigned", b"DriverId is required for status assigned"),
        ("transition_to_delivered", b"Order OURS-1 cannot be delivered in status pending"),
    ],
)
def test_a_refused_transition_is_reported_not_raised(organization, orders, action, message):
    ours, _ = orders

    response = act(builders.admin_site_client(organization), action, [ours])

    assert response.status_code == 200
    assert message in response.content
    ours.refresh_from_db()
    assert ours.status == "pending"


def test_org_admin_cannot_act_on_another_organizations_order(organization, orders):
    _, theirs = orders
    client = builders.admin_site_client(organization)

    act(client, "transition_to_cancelled", [theirs])

    theirs.refresh_from_db()
    assert theirs.status == "pending"


# ----- times for people: the zone's time with its name -----

#: 13:00 UTC on 15 January is 14:00 in Berlin (CET, UTC+1)
WINDOW = (
    datetime.datetime(2031, 1, 15, 13, 0, tzinfo=datetime.UTC),
    datetime.datetime(2031, 1, 15, 15, 0, tzinfo=datetime.UTC),
)


def test_order_times_are_shown_in_the_zone_time_with_its_name(organization):
    zone = builders.zone(organization, timezone_name="Europe/Berlin")
    order = builders.order_row(organization, zone=zone, window=WINDOW, external_ref="BER-1")
    client = builders.admin_site_client(organization)

    listing = client.get(CHANGELIST).content.decode()
    page = client.get(f"{CHANGELIST}{order.pk}/change/").content.decode()

    assert "2031-01-15 14:00\u201316:00 Europe/Berlin" in listing
    assert "2031-01-15 14:00 Europe/Berlin" in page  # the window's start
    assert "2031-01-15 16:00 Europe/Berlin" in page  # and end
    assert "2031-01-15 13:00" not in listing + page  # nowhere in UTC
    # Its history too, in the same zone's time.
    history = OrderStatusEvent.objects.get(order=order).at
    assert f"{history.astimezone(ZoneInfo('Europe/Berlin')):%Y-%m-%d %H:%M} Europe/Berlin" in page


def test_an_order_without_a_zone_says_its_times_are_utc(organization):
    order = builders.order_row(organization, window=WINDOW, external_ref="NOZONE-1")
    client = builders.admin_site_client(organization)

    listing = client.get(CHANGELIST).content.decode()
    page = client.get(f"{CHANGELIST}{order.pk}/change/").content.decode()

    assert "2031-01-15 13:00\u201315:00 UTC" in listing
    assert "2031-01-15 13:00 UTC" in page
    # An empty time reads as admin's empty value, not as Python's None.
    assert ">None<" not in page.replace(" ", "").replace("\n", "")


def test_order_list_fits_a_laptop_screen(organization):
    """Family and platform are filters, not columns; a long reference is cut, its whole text the
    tooltip; an admin of one organization is not shown a column naming it."""
    builders.zone(organization)
    long_ref = "LONG-REFERENCE-NUMBER-WITH-MANY-CHARACTERS-2026-1"
    builders.order_row(organization, external_ref=long_ref)
    client = builders.admin_site_client(organization)

    listing = client.get(CHANGELIST).content.decode()

    headers = re.findall(r'<th scope="col" class="[^"]*column-(\w+)', listing)
    assert headers == [
        "reference",
        "status",
        "zone",
        "delivery_window",
        "driver",
        "created_at_shown",
    ]
    assert f'title="{long_ref}"' in listing
    assert f">{long_ref}<" not in listing
    assert "LONG-REFERENCE-NUMBER-WITH-\u2026" in listing
