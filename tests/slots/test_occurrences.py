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


def _slot(day: date, start: time, duration: int, tz=BERLIN, cutoff: int = 60):
    return occurrence(
        day=day, start_time=start, duration_minutes=duration, cutoff_minutes=cutoff, tz=tz
    )


SPRING_DAY = date(2030, 3, 31)  # Europe/Berlin skips 02:00-03:00
AUTUMN_DAY = date(2030, 10, 27)  # Europe/Berlin repeats 02:00-03:00


def _window(slot) -> tuple[str, str]:
    return slot.window_start.isoformat(), slot.window_end.isoformat()


def test_a_slot_starting_in_the_spring_gap_moves_forward_whole():
    # 02:00-03:00 does not exist that day: it is 03:00-04:00, an hour long, not 03:00-03:00.
    assert _window(_slot(SPRING_DAY, time(2), 60)) == (
        "2030-03-31T03:00:00+02:00",
        "2030-03-31T04:00:00+02:00",
    )
    assert _window(_slot(SPRING_DAY, time(2), 30)) == (
        "2030-03-31T03:00:00+02:00",
        "2030-03-31T03:30:00+02:00",
    )
    # the wall end alone (03:00) would come before the moved start (03:30)
    assert _window(_slot(SPRING_DAY, time(2, 30), 30)) == (
        "2030-03-31T03:30:00+02:00",
        "2030-03-31T04:00:00+02:00",
    )


def test_the_cutoff_of_a_moved_slot_counts_from_its_moved_start():
    slot = _slot(SPRING_DAY, time(2), 60, cutoff=120)
    assert slot.cutoff_at.isoformat() == "2030-03-30T23:00:00+00:00"  # 03:00+02:00 - 2 h
    assert slot.label == "Sun 02:00-03:00"  # the template's own times name it
    assert slot.duration_minutes == 60


def test_a_slot_ending_in_the_spring_gap_keeps_its_start_and_moves_its_end():
    assert _window(_slot(SPRING_DAY, time(1, 30), 60)) == (
        "2030-03-31T01:30:00+01:00",
        "2030-03-31T03:30:00+02:00",
    )


def test_an_autumn_slot_starts_at_the_first_of_the_repeated_hour():
    assert _window(_slot(AUTUMN_DAY, time(2), 60)) == (
        "2030-10-27T02:00:00+02:00",
        "2030-10-27T03:00:00+01:00",  # the hour runs twice: two hours of real time
    )
    assert _window(_slot(AUTUMN_DAY, time(2, 15), 30)) == (
        "2030-10-27T02:15:00+02:00",
        "2030-10-27T02:45:00+02:00",
    )


def test_every_slot_on_a_transition_day_has_a_window_of_positive_length():
    zones = [BERLIN, zone_tz("America/New_York"), zone_tz("Australia/Lord_Howe")]
    days = {
        BERLIN: (SPRING_DAY, AUTUMN_DAY),
        zones[1]: (date(2030, 3, 10), date(2030, 11, 3)),
        zones[2]: (date(2030, 10, 6), date(2030, 4, 7)),  # a 30-minute gap and overlap
    }
    for tz in zones:
        for day in days[tz]:
            for start in range(0, 24 * 60, 15):
                for duration in (15, 30, 60, 90, 240):
                    slot = _slot(day, time(start // 60, start % 60), duration, tz=tz)
                    assert slot.window_end > slot.window_start, (tz, day, start, duration)
