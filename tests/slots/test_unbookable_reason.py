"""`unbookableReason` on every availability entry: why a slot is not bookable, null when it is,
and which reason wins when several apply (past, template_inactive, blackout, cutoff_passed,
full, in that order)."""

from datetime import UTC, date, datetime, timedelta

import pytest
import time_machine

from tests import builders
from zones import services as zone_services
from zones.models import ZoneBlackout

pytestmark = pytest.mark.django_db

MONDAY = date(2030, 1, 7)
#: Sunday 6 January 2030, 10:00 in Berlin (09:00 UTC)
NOW = datetime(2030, 1, 6, 9, 0, tzinfo=UTC)
BEFORE = datetime(2030, 1, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def templates(zone):
    """Sunday 08:00 (started), 12:00 closing 3 h before (closed), 16:00 (open); Monday 08:00
    with one place."""
    return {
        "past": builders.slot_template(zone, day_of_week=0, start="08:00", duration=120),
        "closed": builders.slot_template(
            zone, day_of_week=0, start="12:00", duration=120, cutoff=180
        ),
        "open": builders.slot_template(zone, day_of_week=0, start="16:00", duration=120, cutoff=60),
        "monday": builders.slot_template(zone, day_of_week=1, start="08:00", capacity=1),
    }


@pytest.fixture
def public(organization):
    return builders.standard_client(organization)


def reasons(public, zone, at=NOW) -> dict:
    """{(date, startTime): (bookable, unbookableReason)} for Sunday and Monday."""
    with time_machine.travel(at, tick=False):
        response = public.get(
            "/api/public/delivery-slots/availability/bulk",
            {"zoneId": str(zone.id), "startDate": "2030-01-06", "endDate": "2030-01-07"},
        )
    assert response.status_code == 200, response.content
    return {
        (day["date"], slot["startTime"]): (slot["bookable"], slot["unbookableReason"])
        for day in response.json()["dates"]
        for slot in day["slots"]
    }


def fill_monday(organization, template) -> None:
    with time_machine.travel(BEFORE, tick=False):
        assert builders.book(builders.erp_client(organization), template, MONDAY).status_code == 201


def test_each_reason_and_null_when_bookable(organization, public, zone, templates):
    fill_monday(organization, templates["monday"])

    assert reasons(public, zone) == {
        ("2030-01-06", "08:00"): (False, "past"),
        ("2030-01-06", "12:00"): (False, "cutoff_passed"),
        ("2030-01-06", "16:00"): (True, None),
        ("2030-01-07", "08:00"): (False, "full"),
    }


def test_blackout_and_template_inactive(organization, public, zone, templates):
    ZoneBlackout.objects.create(zone=zone, date=MONDAY, reason="Holiday")
    assert reasons(public, zone)[("2030-01-07", "08:00")] == (False, "blackout")

    zone_services.zone_update(zone=zone, enabled=False)
    assert reasons(public, zone) == {
        ("2030-01-06", "08:00"): (False, "past"),
        ("2030-01-06", "12:00"): (False, "template_inactive"),
        ("2030-01-06", "16:00"): (False, "template_inactive"),
        ("2030-01-07", "08:00"): (False, "template_inactive"),
    }


def test_past_starts_exactly_at_the_window_start(organization, public, zone, templates):
    # 12:00 Berlin = 11:00 UTC: closed by its cutoff before, past from that instant on.
    start = datetime(2030, 1, 6, 11, 0, tzinfo=UTC)
    before = reasons(public, zone, at=start - timedelta(seconds=1))
    assert before[("2030-01-06", "12:00")] == (False, "cutoff_passed")
    assert reasons(public, zone, at=start)[("2030-01-06", "12:00")] == (False, "past")


def test_precedence_past_over_blackout_over_cutoff(organization, public, zone, templates):
    ZoneBlackout.objects.create(zone=zone, date=builders.SUNDAY, reason="Holiday")
    sunday = reasons(public, zone)
    assert sunday[("2030-01-06", "08:00")] == (False, "past")
    assert sunday[("2030-01-06", "12:00")] == (False, "blackout")
    assert sunday[("2030-01-06", "16:00")] == (False, "blackout")


def test_precedence_blackout_over_full_and_cutoff_over_full(organization, public, zone, templates):
    fill_monday(organization, templates["monday"])
    ZoneBlackout.objects.create(zone=zone, date=MONDAY, reason="Holiday")
    assert reasons(public, zone)[("2030-01-07", "08:00")] == (False, "blackout")

    ZoneBlackout.objects.all().delete()
    # Monday 08:00 Berlin with a 120-minute cutoff closes at 05:00 UTC.
    after_cutoff = datetime(2030, 1, 7, 5, 0, tzinfo=UTC)
    assert reasons(public, zone, at=after_cutoff)[("2030-01-07", "08:00")] == (
        False,
        "cutoff_passed",
    )


def test_precedence_template_inactive_over_blackout_and_full(organization, public, zone, templates):
    fill_monday(organization, templates["monday"])
    ZoneBlackout.objects.create(zone=zone, date=MONDAY, reason="Holiday")
    zone_services.zone_update(zone=zone, enabled=False)
    assert reasons(public, zone)[("2030-01-07", "08:00")] == (False, "template_inactive")


def test_the_single_date_form_carries_it_too(organization, public, zone, templates):
    with time_machine.travel(NOW, tick=False):
        response = public.get(
            "/api/public/delivery-slots/availability",
            {"zoneId": str(zone.id), "date": "2030-01-06"},
        )
    assert [slot["unbookableReason"] for slot in response.json()["slots"]] == [
        "past",
        "cutoff_passed",
        None,
    ]
