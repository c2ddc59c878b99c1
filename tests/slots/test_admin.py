"""Django admin for slot policies and templates: scoped per organization, writes through the
services (events included), and the seed action (contract "Management API")."""

import datetime
import json
import re
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from slots.models import SlotDay, SlotHold, SlotPolicy, SlotTemplate
from slots.services import templates as template_services
from tests import builders

pytestmark = pytest.mark.django_db

VAN = [{"vehicleType": "van", "count": 2, "maxOrdersPerVehicle": 6}]


def _template_form(zone, **overrides) -> dict:
    form = {
        "zone": str(zone.id),
        "day_of_week": "1",
        "start_time": "08:00",
        "duration_minutes": "240",
        "cutoff_minutes": "60",
        "vehicle_capacity": json.dumps(VAN),
    }
    form.update(overrides)
    return form


def test_org_admin_sees_only_their_templates(organization, other_organization):
    ours = builders.slot_template(builders.slot_zone(organization, "Ours"), start="08:00")
    theirs = builders.slot_template(builders.slot_zone(other_organization, "Theirs"), start="09:00")
    client = builders.admin_site_client(organization)

    listing = client.get("/admin/slots/slottemplate/")
    assert listing.status_code == 200
    assert b"Ours" in listing.content
    assert b"Theirs" not in listing.content
    assert client.get(f"/admin/slots/slottemplate/{ours.pk}/change/").status_code == 200
    response = client.get(f"/admin/slots/slottemplate/{theirs.pk}/change/")
    assert response.status_code in (302, 403, 404)


def test_adding_a_template_goes_through_the_service(organization):
    zone = builders.slot_zone(organization)
    client = builders.admin_site_client(organization)

    response = client.post("/admin/slots/slottemplate/add/", _template_form(zone))

    assert response.status_code == 302, response.content.decode()[:2000]
    template = SlotTemplate.objects.get()
    assert (template.organization_id, template.capacity, template.cutoff_minutes) == (
        organization.id,
        12,
        60,
    )
    assert len(builders.events_named("erp.slots.updated", organization)) == 1


@pytest.mark.parametrize(
    ("overrides", "error"),
    [
        ({"duration_minutes": "600", "start_time": "20:00"}, b"a slot must end by midnight"),
        ({"day_of_week": "7"}, b"0 (Sunday) to 6 (Saturday)"),
        ({"vehicle_capacity": '[{"vehicleType": "van"}]'}, b"vehicle capacity is not valid"),
    ],
)
def test_admin_refuses_bad_templates(organization, overrides, error):
    zone = builders.slot_zone(organization)
    response = builders.admin_site_client(organization).post(
        "/admin/slots/slottemplate/add/", _template_form(zone, **overrides)
    )
    assert response.status_code == 200
    assert error in response.content
    assert not SlotTemplate.objects.exists()


def test_admin_offers_only_slot_zones_of_the_admins_organizations(organization, other_organization):
    builders.slot_zone(organization, "Depot", purpose="dispatch")
    ours = builders.slot_zone(organization, "Ours", geodata=builders.ALEX_GEODATA)
    builders.slot_zone(other_organization, "Theirs")
    page = builders.admin_site_client(organization).get("/admin/slots/slottemplate/add/").content
    assert str(ours.id).encode() in page
    assert b"Depot" not in page
    assert b"Theirs" not in page


def test_admin_refuses_a_duplicate_start(organization):
    zone = builders.slot_zone(organization)
    builders.slot_template(zone, day_of_week=1, start="08:00")
    response = builders.admin_site_client(organization).post(
        "/admin/slots/slottemplate/add/", _template_form(zone)
    )
    assert response.status_code == 200
    assert b"already starts then" in response.content
    assert SlotTemplate.objects.count() == 1


def test_editing_a_template_in_admin_emits_the_event(organization):
    zone = builders.slot_zone(organization)
    template = builders.slot_template(zone, day_of_week=1, start="08:00")
    client = builders.admin_site_client(organization)
    response = client.post(
        f"/admin/slots/slottemplate/{template.pk}/change/",
        _template_form(zone, start_time="09:00"),
    )
    assert response.status_code == 302
    template.refresh_from_db()
    assert template.start_time.hour == 9
    (event,) = builders.events_named("erp.slots.updated", organization)
    assert event.payload["slots"][0]["startTime"] == "09:00"


def test_deleting_a_template_in_admin_takes_it_out_of_use(organization):
    zone = builders.slot_zone(organization)
    template = builders.slot_template(zone)
    client = builders.admin_site_client(organization)
    response = client.post(f"/admin/slots/slottemplate/{template.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    template.refresh_from_db()
    assert template.deleted_at is not None
    assert builders.events_named("erp.slots.updated", organization)[-1].payload["slots"] == []


def test_seed_action_creates_templates_for_the_policys_organization(organization):
    builders.slot_zone(organization)
    policy = template_services.slot_policy_get_or_create(organization_id=organization.id)
    client = builders.admin_site_client(organization)

    response = client.post(
        "/admin/slots/slotpolicy/",
        {"action": "seed_templates", "_selected_action": [str(policy.pk)]},
        follow=True,
    )

    assert response.status_code == 200
    assert b"15 slot template(s) created" in response.content
    assert SlotTemplate.objects.filter(organization=organization).count() == 15


def test_org_admin_edits_only_their_policy(organization, other_organization):
    ours = template_services.slot_policy_get_or_create(organization_id=organization.id)
    theirs = template_services.slot_policy_get_or_create(organization_id=other_organization.id)
    client = builders.admin_site_client(organization)
    assert client.get(f"/admin/slots/slotpolicy/{theirs.pk}/change/").status_code in (302, 403, 404)
    response = client.post(
        f"/admin/slots/slotpolicy/{ours.pk}/change/",
        {
            "timezone": "Europe/Berlin",
            "default_duration_minutes": "120",
            "default_cutoff_minutes": "30",
            "default_vehicle_capacity": json.dumps(VAN),
            "default_pickup_address": "Depot 1",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    ours.refresh_from_db()
    assert (ours.timezone, ours.default_duration_minutes, ours.default_pickup_address) == (
        "Europe/Berlin",
        120,
        "Depot 1",
    )
    assert SlotPolicy.objects.count() == 2


def test_policy_admin_refuses_a_time_zone_that_is_no_iana_name(organization):
    policy = template_services.slot_policy_get_or_create(organization_id=organization.id)
    client = builders.admin_site_client(organization)
    response = client.post(
        f"/admin/slots/slotpolicy/{policy.pk}/change/",
        {
            "timezone": "Mars/Olympus",
            "default_duration_minutes": "120",
            "default_cutoff_minutes": "30",
            "default_vehicle_capacity": json.dumps(VAN),
            "default_pickup_address": "",
        },
    )
    assert response.status_code == 200
    assert "timezone Mars/Olympus is not an IANA time zone name" in response.content.decode()
    policy.refresh_from_db()
    assert policy.timezone != "Mars/Olympus"


# ----- for people: weekdays by name, minutes with their unit, times with their zone -----


def test_template_list_names_the_weekday_and_says_minutes(organization):
    """The contract numbers weekdays from 0 = Sunday: 1 is Monday."""
    zone = builders.slot_zone(organization, "Mitte", timezone_name="Europe/Berlin")
    builders.slot_template(zone, day_of_week=1, start="08:00", duration=120, cutoff=90)
    builders.slot_template(zone, day_of_week=0, start="09:00", duration=60, cutoff=30)
    listing = builders.admin_site_client(organization).get("/admin/slots/slottemplate/")

    rows = [
        re.sub(r"<[^>]+>", "|", row)
        for row in re.findall(r"<tr>.*?</tr>", listing.content.decode(), re.S)[1:]
    ]
    cells = [[cell for cell in row.split("|") if cell.strip()] for row in rows]
    assert cells == [
        [
            "Mitte",
            "Sunday",
            "09:00\u201310:00 Europe/Berlin",
            "60 min",
            "30 min before start",
            "10",
        ],
        [
            "Mitte",
            "Monday",
            "08:00\u201310:00 Europe/Berlin",
            "120 min",
            "90 min before start",
            "10",
        ],
    ]


def test_template_list_filters_by_weekday_name(organization):
    zone = builders.slot_zone(organization)
    builders.slot_template(zone, day_of_week=1, start="08:00")
    builders.slot_template(zone, day_of_week=5, start="10:00")
    client = builders.admin_site_client(organization)

    friday = client.get("/admin/slots/slottemplate/", {"day_of_week": "5"}).content.decode()

    assert "Friday" in friday
    assert "10:00\u201314:00" in friday
    assert "08:00\u201312:00" not in friday
    filters = re.search(r'id="changelist-filter".*?</nav>', friday, re.S).group(0)
    assert re.findall(r'day_of_week=(\d)">(\w+)<', filters) == [
        ("1", "Monday"),
        ("2", "Tuesday"),
        ("3", "Wednesday"),
        ("4", "Thursday"),
        ("5", "Friday"),
        ("6", "Saturday"),
        ("0", "Sunday"),
    ]


def test_template_form_picks_weekdays_by_name_and_says_minutes(organization):
    zone = builders.slot_zone(organization)
    client = builders.admin_site_client(organization)

    form = client.get("/admin/slots/slottemplate/add/").content.decode()

    weekday = re.search(r'<select name="day_of_week".*?</select>', form, re.S).group(0)
    assert re.findall(r'<option value="(\d)"[^>]*>(\w+)</option>', weekday) == [
        ("1", "Monday"),
        ("2", "Tuesday"),
        ("3", "Wednesday"),
        ("4", "Thursday"),
        ("5", "Friday"),
        ("6", "Saturday"),
        ("0", "Sunday"),
    ]
    assert "Duration (minutes)" in form
    assert "How long the slot lasts, in minutes" in form
    assert "Booking closes this many minutes before the start" in form
    # Saving "Monday" stores the contract's 1.
    response = client.post("/admin/slots/slottemplate/add/", _template_form(zone, day_of_week="1"))
    assert response.status_code == 302
    assert SlotTemplate.objects.get().day_of_week == 1


def test_policy_list_says_minutes(organization):
    template_services.slot_policy_update(
        organization_id=organization.id,
        timezone_name="Europe/Berlin",
        default_duration_minutes=120,
        default_cutoff_minutes=45,
        default_vehicle_capacity=VAN,
        default_pickup_address="",
    )
    client = builders.admin_site_client(organization)

    listing = client.get("/admin/slots/slotpolicy/").content.decode()
    form = client.get(f"/admin/slots/slotpolicy/{SlotPolicy.objects.get().pk}/change/")

    assert "120 min" in listing
    assert "45 min before start" in listing
    assert "in minutes" in form.content.decode()


def test_slot_day_shows_its_slot_and_live_holds_in_zone_time(organization):
    zone = builders.slot_zone(organization, timezone_name="Europe/Berlin")
    template = builders.slot_template(zone, day_of_week=4, start="12:00", duration=240)
    live = timezone.now() + datetime.timedelta(days=3)
    expired = timezone.now() - datetime.timedelta(minutes=5)
    day = SlotDay.objects.create(template=template, date=datetime.date(2031, 1, 16), capacity=10)
    key = builders.api_key(organization, "erp").api_key
    for expires_at in (live, expired):
        SlotHold.objects.create(
            organization=organization,
            api_key=key,
            template=template,
            date=day.date,
            expires_at=expires_at,
        )
    client = builders.admin_site_client(organization)

    listing = client.get("/admin/slots/slotday/").content.decode()
    page = client.get(f"/admin/slots/slotday/{day.pk}/change/").content.decode()

    assert "2031-01-16 Thursday" in listing
    assert "12:00\u201316:00 Europe/Berlin" in listing
    berlin = ZoneInfo("Europe/Berlin")
    assert f"{live.astimezone(berlin):%Y-%m-%d %H:%M} Europe/Berlin" in page
    assert f"{expired.astimezone(berlin):%Y-%m-%d %H:%M}" not in page  # it counts for nothing


def test_template_and_slot_day_pages_are_headed_by_what_they_are(organization):
    zone = builders.slot_zone(organization, "Mitte", timezone_name="Europe/Berlin")
    template = builders.slot_template(zone, day_of_week=1, start="08:00", duration=120)
    day = SlotDay.objects.create(template=template, date=datetime.date(2031, 1, 13), capacity=10)
    client = builders.admin_site_client(organization)

    template_page = client.get(f"/admin/slots/slottemplate/{template.pk}/change/").content.decode()
    day_page = client.get(f"/admin/slots/slotday/{day.pk}/change/").content.decode()

    assert "<h2>Mitte, Monday 08:00\u201310:00 Europe/Berlin</h2>" in template_page
    assert "<h2>Mitte, Monday 08:00\u201310:00 Europe/Berlin on 2031-01-13 Monday</h2>" in day_page
