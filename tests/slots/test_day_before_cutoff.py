"""Day-before cutoffs: a template closes at `cutoffDayBeforeAt` (zone time) on the day before
the slot instead of `cutoffMinutes` before its start. The exact boundaries (one second before,
at), across both DST changes of Europe/Berlin, in availability and in ERP bookings."""

from datetime import UTC, date, datetime, time, timedelta

import pytest
import time_machine

from slots.models import SlotTemplate
from tests import builders
from tests.conftest import assert_error

pytestmark = pytest.mark.django_db

CUTOFF_PASSED = "Booking cutoff has passed for this slot"


def day_before_template(
    zone, *, day_of_week: int, at: time, start: time = time(8, 0), duration: int = 240
):
    return builders.slot_template(
        zone,
        day_of_week=day_of_week,
        start=start,
        duration=duration,
        cutoff=None,
        capacity=None,
        cutoff_day_before_at=at,
    )


def entry(client, zone, day: date) -> dict:
    response = client.get(
        "/api/public/delivery-slots/availability",
        {"zoneId": str(zone.id), "date": day.isoformat()},
    )
    assert response.status_code == 200, response.content
    (slot,) = response.json()["slots"]
    return slot


def assert_boundary(organization, zone, template, day: date, cutoff_utc: datetime) -> None:
    """Bookable and booked one second before `cutoff_utc`; closed from that instant on."""
    public, erp = builders.standard_client(organization), builders.erp_client(organization)
    with time_machine.travel(cutoff_utc - timedelta(seconds=1), tick=False):
        slot = entry(public, zone, day)
        assert slot["cutoffAt"] == cutoff_utc.isoformat().replace("+00:00", "Z")
        assert (slot["bookable"], slot["unbookableReason"]) == (True, None)
        assert builders.book(erp, template, day, ref=f"B-{day}").status_code == 201
    with time_machine.travel(cutoff_utc, tick=False):
        slot = entry(public, zone, day)
        assert (slot["bookable"], slot["unbookableReason"]) == (False, "cutoff_passed")
        assert_error(builders.book(erp, template, day, ref=f"A-{day}"), 400, CUTOFF_PASSED)


# ----- management API -----


@pytest.fixture
def templates_url(organization):
    return f"/api/manage/organizations/{organization.id}/slot-templates"


def test_create_with_cutoff_day_before_at_shows_the_rule(manager, templates_url, zone):
    response = manager.post(
        templates_url,
        {
            "zoneId": str(zone.id),
            "dayOfWeek": 0,
            "startTime": "08:00",
            "cutoffDayBeforeAt": "18:00",
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["cutoffMinutes"], body["cutoffDayBeforeAt"], body["cutoffRule"]) == (
        None,
        "18:00",
        "day_before_at",
    )
    template = SlotTemplate.objects.get()
    assert (template.cutoff_minutes, template.cutoff_day_before_at) == (None, time(18, 0))
    listed = manager.get(templates_url).json()
    assert [(t["cutoffDayBeforeAt"], t["cutoffRule"]) for t in listed] == [
        ("18:00", "day_before_at")
    ]
    # erp.slots.updated says which rule the template uses.
    (event,) = builders.events_named("erp.slots.updated", zone.organization)
    (item,) = event.payload["slots"]
    assert (item["cutoffMinutes"], item["cutoffDayBeforeAt"]) == (None, "18:00")


def test_a_template_without_either_takes_the_policy_minutes(manager, templates_url, zone):
    body = manager.post(
        templates_url,
        {"zoneId": str(zone.id), "dayOfWeek": 0, "startTime": "08:00"},
        format="json",
    ).json()
    assert (body["cutoffMinutes"], body["cutoffDayBeforeAt"], body["cutoffRule"]) == (
        120,
        None,
        "minutes_before_start",
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            {"cutoffMinutes": 60, "cutoffDayBeforeAt": "18:00"},
            "Provide either cutoffMinutes or cutoffDayBeforeAt, not both",
        ),
        (
            {"cutoffDayBeforeAt": "24:00"},
            "cutoffDayBeforeAt: must be a time HH:MM (00:00 to 23:59)",
        ),
        ({"cutoffDayBeforeAt": "6pm"}, "cutoffDayBeforeAt: must be a time HH:MM (00:00 to 23:59)"),
        ({"cutoffDayBeforeAt": 18}, "cutoffDayBeforeAt: must be a string"),
    ],
)
def test_create_validation(manager, templates_url, zone, extra, message):
    body = {"zoneId": str(zone.id), "dayOfWeek": 0, "startTime": "08:00", **extra}
    assert_error(manager.post(templates_url, body, format="json"), 400, message)
    assert not SlotTemplate.objects.exists()


def test_patch_switches_between_the_two_rules(manager, templates_url, zone):
    template_id = manager.post(
        templates_url,
        {"zoneId": str(zone.id), "dayOfWeek": 0, "startTime": "08:00", "cutoffMinutes": 90},
        format="json",
    ).json()["id"]
    url = f"{templates_url}/{template_id}"

    to_day_before = manager.patch(url, {"cutoffDayBeforeAt": "17:30"}, format="json").json()
    assert (to_day_before["cutoffMinutes"], to_day_before["cutoffDayBeforeAt"]) == (None, "17:30")
    assert to_day_before["cutoffRule"] == "day_before_at"

    unrelated = manager.patch(url, {"durationMinutes": 120}, format="json").json()
    assert unrelated["cutoffDayBeforeAt"] == "17:30"  # other changes keep the rule

    assert_error(
        manager.patch(url, {"cutoffMinutes": 30, "cutoffDayBeforeAt": "17:00"}, format="json"),
        400,
        "Provide either cutoffMinutes or cutoffDayBeforeAt, not both",
    )
    to_minutes = manager.patch(url, {"cutoffMinutes": 45}, format="json").json()
    assert (to_minutes["cutoffMinutes"], to_minutes["cutoffDayBeforeAt"]) == (45, None)
    assert to_minutes["cutoffRule"] == "minutes_before_start"


# ----- the exact boundaries -----


@pytest.mark.parametrize(
    ("slot_day", "cutoff_time", "cutoff_at"),
    [
        # Sunday 6 January 08:00 (+01:00), closing Saturday 5 January 18:00 +01:00 = 17:00Z.
        pytest.param("2030-01-06", "18:00", "2030-01-05T17:00:00Z", id="winter"),
        # Clocks go forward on Sunday 31 March 2030 at 02:00. A Monday 1 April slot closing the
        # day before at 18:00 closes at 18:00+02:00 = 16:00Z (not 17:00Z as in winter).
        pytest.param("2030-04-01", "18:00", "2030-03-31T16:00:00Z", id="spring_forward_monday"),
        # Sunday 31 March slot: its day before (Saturday 30 March) is still winter time, +01:00.
        pytest.param("2030-03-31", "18:00", "2030-03-30T17:00:00Z", id="spring_forward_sunday"),
        # 02:30 does not exist on 31 March 2030 in Berlin: the cutoff is 03:30+02:00 = 01:30Z.
        pytest.param("2030-04-01", "02:30", "2030-03-31T01:30:00Z", id="skipped_time"),
        # Clocks go back on Sunday 27 October 2030 at 03:00: 02:30 happens twice; the first one,
        # 02:30+02:00 = 00:30Z, closes a Monday 28 October slot.
        pytest.param("2030-10-28", "02:30", "2030-10-27T00:30:00Z", id="fall_back_repeated_time"),
        # An evening cutoff on the day the clocks went back is on winter time, +01:00.
        pytest.param("2030-10-28", "18:00", "2030-10-27T17:00:00Z", id="fall_back_evening"),
    ],
)
def test_the_slot_closes_at_that_time_on_the_previous_day(
    organization, zone, slot_day, cutoff_time, cutoff_at
):
    day = date.fromisoformat(slot_day)
    # Templates number the weekdays 0 = Sunday ... 6 = Saturday (contract "Slots and windows").
    template = day_before_template(
        zone, day_of_week=day.isoweekday() % 7, at=time.fromisoformat(cutoff_time)
    )
    assert_boundary(organization, zone, template, day, datetime.fromisoformat(cutoff_at))


def test_the_cutoff_day_is_the_previous_calendar_day_even_for_a_late_slot(organization, zone):
    # A 23:00 slot with a 23:30 day-before cutoff closes 23.5 hours before its start.
    template = day_before_template(
        zone, day_of_week=0, at=time(23, 30), start=time(23, 0), duration=60
    )
    assert_boundary(
        organization, zone, template, builders.SUNDAY, datetime(2030, 1, 5, 22, 30, tzinfo=UTC)
    )


def test_moving_an_order_onto_a_closed_day_before_slot_is_refused(organization, zone):
    open_template = builders.slot_template(
        zone, day_of_week=0, start="14:00", duration=240, cutoff=0, capacity=None
    )
    closed = day_before_template(zone, day_of_week=0, at=time(18, 0))
    client = builders.erp_client(organization)
    with time_machine.travel(datetime(2030, 1, 5, 17, 0, tzinfo=UTC), tick=False):
        assert builders.book(client, open_template, builders.SUNDAY).status_code == 201
        response = client.put(
            "/api/integrations/erp/orders/SO-1001/delivery-slot",
            {
                "deliverySlotTemplateId": str(closed.id),
                "deliverySlotDate": builders.SUNDAY.isoformat(),
            },
            format="json",
        )
    assert_error(response, 400, CUTOFF_PASSED)


# ----- Django admin -----


def template_form(zone, **overrides) -> dict:
    return {
        "zone": str(zone.id),
        "day_of_week": "0",
        "start_time": "08:00",
        "duration_minutes": "240",
        "cutoff_minutes": "",
        "cutoff_day_before_at": "18:00",
        "vehicle_capacity": '[{"vehicleType": "van", "count": 1, "maxOrdersPerVehicle": 10}]',
        **overrides,
    }


def test_admin_creates_a_day_before_template_and_lists_its_rule(organization, zone):
    client = builders.admin_site_client(organization)

    response = client.post("/admin/slots/slottemplate/add/", template_form(zone))
    assert response.status_code == 302, response.content
    template = SlotTemplate.objects.get()
    assert (template.cutoff_minutes, template.cutoff_day_before_at) == (None, time(18, 0))
    assert b"Day before at 18:00" in client.get("/admin/slots/slottemplate/").content


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"cutoff_minutes": "60"}, b"not both"),
        ({"cutoff_day_before_at": ""}, b"Set the cutoff minutes or the day-before cutoff time"),
    ],
)
def test_admin_wants_exactly_one_rule(organization, zone, overrides, message):
    client = builders.admin_site_client(organization)

    response = client.post("/admin/slots/slottemplate/add/", template_form(zone, **overrides))
    assert response.status_code == 200
    assert message in response.content
    assert not SlotTemplate.objects.exists()
