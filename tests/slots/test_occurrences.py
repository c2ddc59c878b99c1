"""Slot time arithmetic: weekdays, labels, DST gaps and overlaps (contract "Slots and windows")."""

from datetime import date, time

from slots.occurrences import (
    day_of_week,
    hh_mm,
    local_moment,
    occurrence,
    parse_hh_mm,
    zone_tz,
)

BERLIN = zone_tz("Europe/Berlin")


def test_weekdays_count_from_sunday():
    assert [day_of_week(date(2030, 1, d)) for d in range(6, 13)] == [0, 1, 2, 3, 4, 5, 6]


def test_hh_mm_parsing_is_strict():
    assert parse_hh_mm("08:05") == time(8, 5)
    assert parse_hh_mm("23:59") == time(23, 59)
    for text in ("8:05", "24:00", "12:60", "12:5", "noon", "", None, 800):
        assert parse_hh_mm(text) is None


def test_midnight_at_the_end_of_a_day_reads_00_00():
    assert (hh_mm(0), hh_mm(1440), hh_mm(75)) == ("00:00", "00:00", "01:15")


def test_a_wall_time_in_the_spring_gap_moves_forward():
    assert local_moment(date(2030, 3, 31), time(2, 30), BERLIN).isoformat() == (
        "2030-03-31T03:30:00+02:00"
    )


def test_an_ambiguous_autumn_wall_time_is_its_first_occurrence():
    assert local_moment(date(2030, 10, 27), time(2, 30), BERLIN).isoformat() == (
        "2030-10-27T02:30:00+02:00"
    )


def test_occurrence_in_autumn_spans_the_extra_hour():
    slot = occurrence(
        day=date(2030, 10, 27),
        start_time=time(0),
        duration_minutes=240,
        cutoff_minutes=30,
        tz=BERLIN,
    )
    assert (slot.window_start.isoformat(), slot.window_end.isoformat()) == (
        "2030-10-27T00:00:00+02:00",
        "2030-10-27T04:00:00+01:00",
    )
    assert slot.cutoff_at.isoformat() == "2030-10-26T21:30:00+00:00"
    assert slot.label == "Sun 00:00-04:00"


def test_unknown_time_zone_names_fall_back_to_utc():
    assert zone_tz("Nowhere/Special").utcoffset(None).total_seconds() == 0
