"""Blackout days: dates on which a zone takes no deliveries (management API, Django admin),
refused by ERP bookings and partner orders, left out of partner windows, shown in availability."""

import pytest
from rest_framework.test import APIClient

from integrations.models import Order
from slots.models import SlotBooking
from tests import builders
from tests.conftest import assert_error
from zones.models import ZoneBlackout

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("traveller")]

HOLIDAY = builders.SUNDAY.isoformat()


@pytest.fixture
def zone(organization):
    return builders.slot_zone(organization, purpose="both")


def blackouts_url(organization, zone) -> str:
    return f"/api/manage/organizations/{organization.id}/zones/{zone.id}/blackouts"


def add_blackout(manager, organization, zone, day=HOLIDAY, reason="Public holiday"):
    return manager.post(
        blackouts_url(organization, zone), {"date": day, "reason": reason}, format="json"
    )


# ----- management API -----


def test_post_answers_201_with_id_date_and_reason_and_get_lists_them_by_date(
    manager, organization, zone
):
    later = add_blackout(manager, organization, zone, "2030-12-25", "Christmas")
    response = add_blackout(manager, organization, zone, HOLIDAY, "  Public holiday ")

    assert response.status_code == 201, response.content
    body = response.json()
    assert set(body) == {"id", "date", "reason"}
    assert (body["date"], body["reason"]) == (HOLIDAY, "Public holiday")
    listing = manager.get(blackouts_url(organization, zone))
    assert listing.status_code == 200
    assert listing.json() == [body, later.json()]


def test_delete_answers_204_and_the_blackout_is_gone(manager, organization, zone):
    blackout_id = add_blackout(manager, organization, zone).json()["id"]
    url = f"{blackouts_url(organization, zone)}/{blackout_id}"

    assert manager.delete(url).status_code == 204
    assert manager.get(blackouts_url(organization, zone)).json() == []
    assert_error(manager.delete(url), 404, "Blackout not found")


def test_a_second_blackout_on_the_same_date_is_409(manager, organization, zone):
    assert add_blackout(manager, organization, zone).status_code == 201
    assert_error(
        add_blackout(manager, organization, zone, reason="Again"),
        409,
        f"This zone already has a blackout on {HOLIDAY}",
    )
    assert ZoneBlackout.objects.count() == 1


def test_the_same_date_in_another_zone_is_fine(manager, organization, zone):
    other = builders.slot_zone(organization, name="Other", purpose="both")
    assert add_blackout(manager, organization, zone).status_code == 201
    assert add_blackout(manager, organization, other).status_code == 201


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"reason": "x"}, "date is required"),
        ({"date": "2030-1-6", "reason": "x"}, "date must be a valid date (format: YYYY-MM-DD)"),
        ({"date": "2030-02-30", "reason": "x"}, "date must be a valid date (format: YYYY-MM-DD)"),
        ({"date": 20300106, "reason": "x"}, "date must be a valid date (format: YYYY-MM-DD)"),
        ({"date": HOLIDAY}, "reason is required"),
        ({"date": HOLIDAY, "reason": ""}, "reason must not be empty"),
        ({"date": HOLIDAY, "reason": "   "}, "reason must not be empty"),
        ({"date": HOLIDAY, "reason": "x" * 201}, "reason must be at most 200 characters"),
        ({"date": HOLIDAY, "reason": ["x"]}, "reason: must be a string"),
    ],
)
def test_invalid_bodies_are_400_naming_the_field(manager, organization, zone, body, message):
    response = manager.post(blackouts_url(organization, zone), body, format="json")
    assert_error(response, 400, message)
    assert ZoneBlackout.objects.count() == 0


def test_another_organizations_zone_and_blackouts_are_404(
    manager, organization, other_organization, zone
):
    theirs = builders.slot_zone(other_organization, purpose="both")
    their_manager = builders.manager_client(other_organization, email="their-admin@example.com")
    their_blackout = add_blackout(their_manager, other_organization, theirs).json()["id"]

    # Our organization's URL with their zone, and their organization's URL: both refused.
    assert_error(manager.get(blackouts_url(organization, theirs)), 404, "Zone not found")
    assert manager.get(blackouts_url(other_organization, theirs)).status_code in (403, 404)
    # Their blackout id under our zone.
    assert_error(
        manager.delete(f"{blackouts_url(organization, zone)}/{their_blackout}"),
        404,
        "Blackout not found",
    )
    assert_error(
        manager.delete(f"{blackouts_url(organization, zone)}/not-a-uuid"), 404, "Blackout not found"
    )
    assert ZoneBlackout.objects.filter(pk=their_blackout).exists()


def test_without_a_token_it_is_401(organization, zone):
    response = APIClient().get(blackouts_url(organization, zone))
    assert_error(response, 401)


# ----- what a blackout does -----


def test_an_erp_booking_on_a_blackout_date_is_refused_and_other_dates_are_not(
    manager, organization, zone
):
    template = builders.slot_template(zone, day_of_week=0, start="08:00")
    add_blackout(manager, organization, zone)
    client = builders.erp_client(organization)

    assert_error(
        builders.book(client, template, builders.SUNDAY),
        400,
        f"Zone Mitte takes no deliveries on {HOLIDAY}",
    )
    assert not Order.objects.exists()
    assert (
        builders.book(client, template, builders.SUNDAY.replace(day=13), ref="SO-2").status_code
        == 201
    )


def test_moving_an_erp_order_onto_a_blackout_date_is_refused(manager, organization, zone):
    template = builders.slot_template(zone, day_of_week=0, start="08:00")
    client = builders.erp_client(organization)
    assert builders.book(client, template, builders.SUNDAY.replace(day=13)).status_code == 201
    add_blackout(manager, organization, zone)

    response = client.put(
        "/api/integrations/erp/orders/SO-1001/delivery-slot",
        {"deliverySlotTemplateId": str(template.id), "deliverySlotDate": HOLIDAY},
        format="json",
    )
    assert_error(response, 400, f"Zone Mitte takes no deliveries on {HOLIDAY}")
    assert SlotBooking.objects.get().date == builders.SUNDAY.replace(day=13)


def test_availability_marks_the_date_not_bookable_with_reason_blackout(manager, organization, zone):
    builders.slot_template(zone, day_of_week=0, start="08:00")
    builders.slot_template(zone, day_of_week=1, start="08:00")
    add_blackout(manager, organization, zone)
    client = builders.key_client(builders.api_key(organization, "standard"))

    body = client.get(
        "/api/public/delivery-slots/availability/bulk",
        {"zoneId": str(zone.id), "startDate": HOLIDAY, "endDate": builders.MONDAY.isoformat()},
    ).json()
    sunday, monday = body["dates"]
    assert [(s["bookable"], s["unbookableReason"]) for s in sunday["slots"]] == [
        (False, "blackout")
    ]
    assert sunday["slots"][0]["available"] == 10  # capacity is untouched
    assert [(s["bookable"], s["unbookableReason"]) for s in monday["slots"]] == [(True, None)]


def test_partner_windows_of_a_blackout_date_are_left_out(manager, organization, zone):
    add_blackout(manager, organization, zone)
    client = builders.partner_client(organization)

    on_holiday = client.get(
        "/api/integrations/partner-a/delivery-windows", {"zone": "Mitte", "date": HOLIDAY}
    )
    assert on_holiday.status_code == 200
    assert on_holiday.json()["windows"] == []
    next_day = client.get(
        "/api/integrations/partner-a/delivery-windows",
        {"zone": "Mitte", "date": builders.MONDAY.isoformat()},
    ).json()
    assert len(next_day["windows"]) == 3


def test_a_partner_order_with_a_window_on_a_blackout_date_is_refused(manager, organization, zone):
    add_blackout(manager, organization, zone)
    client = builders.partner_client(organization)

    response = builders.create_order(client, deliveryWindowStart=f"{HOLIDAY}T08:00:00+01:00")
    assert_error(response, 400, f"Zone Mitte takes no deliveries on {HOLIDAY}")
    assert not Order.objects.exists()
    # Without a window the order is not tied to the date: accepted as before.
    assert builders.create_order(client, externalRef="PO-2").status_code == 201


# ----- Django admin -----


def test_org_admin_adds_and_sees_only_their_blackouts(organization, other_organization, zone):
    theirs = builders.slot_zone(other_organization, purpose="both")
    ZoneBlackout.objects.create(zone=theirs, date=builders.SUNDAY, reason="Their holiday")
    client = builders.admin_site_client(organization)

    added = client.post(
        "/admin/zones/zoneblackout/add/",
        {"zone": str(zone.id), "date": HOLIDAY, "reason": "Our holiday"},
    )
    assert added.status_code == 302, added.content
    listing = client.get("/admin/zones/zoneblackout/")
    assert b"Our holiday" in listing.content
    assert b"Their holiday" not in listing.content
    # Their zone cannot be picked.
    refused = client.post(
        "/admin/zones/zoneblackout/add/",
        {"zone": str(theirs.id), "date": "2030-01-07", "reason": "Sneaky"},
    )
    assert refused.status_code == 200
    assert not ZoneBlackout.objects.filter(reason="Sneaky").exists()


def test_admin_refuses_a_second_blackout_on_the_same_date_in_words(organization, zone):
    ZoneBlackout.objects.create(zone=zone, date=builders.SUNDAY, reason="Holiday")
    client = builders.admin_site_client(organization)

    response = client.post(
        "/admin/zones/zoneblackout/add/",
        {"zone": str(zone.id), "date": HOLIDAY, "reason": "Again"},
    )
    assert response.status_code == 200
    assert f"This zone already has a blackout on {HOLIDAY}".encode() in response.content
    assert ZoneBlackout.objects.count() == 1


def test_admin_changes_a_blackout_through_the_same_checks(organization, zone):
    blackout = ZoneBlackout.objects.create(zone=zone, date=builders.SUNDAY, reason="Holiday")
    ZoneBlackout.objects.create(zone=zone, date=builders.MONDAY, reason="Taken")
    client = builders.admin_site_client(organization)
    url = f"/admin/zones/zoneblackout/{blackout.pk}/change/"

    moved = client.post(url, {"zone": str(zone.id), "date": "2030-01-08", "reason": " Moved "})
    assert moved.status_code == 302, moved.content
    blackout.refresh_from_db()
    assert (blackout.date.isoformat(), blackout.reason) == ("2030-01-08", "Moved")

    clash = client.post(
        url, {"zone": str(zone.id), "date": builders.MONDAY.isoformat(), "reason": "x"}
    )
    assert clash.status_code == 200
    assert f"This zone already has a blackout on {builders.MONDAY}".encode() in clash.content
    blackout.refresh_from_db()
    assert blackout.date.isoformat() == "2030-01-08"
