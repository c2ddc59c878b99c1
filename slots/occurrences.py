"""A slot template on a date: its delivery window, cutoff and label (contract "Slots and windows").

Pure time arithmetic, no I/O. Times are wall-clock times in the zone's IANA time zone, so the
UTC offsets of a window follow DST: `08:00` is `08:00+01:00` in winter and `08:00+02:00` in
summer in Europe/Berlin. A wall time that does not exist (the hour skipped in spring) is moved
forward by the gap, as a clock would show it. A slot whose start is skipped moves forward by the
gap as a whole, keeping its duration (02:00-03:00 on the spring day in Berlin is 03:00-04:00),
so every slot has a window of positive length; an ambiguous wall time (the hour repeated in
autumn) is its first occurrence.
"""

import functools
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo

from delivery.timezones import zone_tz

MINUTES_PER_DAY = 24 * 60
#: 0 = Sunday ... 6 = Saturday (contract "Slots and windows")
DAY_ABBREVIATIONS = ("Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat")
_HH_MM = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")


def day_of_week(day: date) -> int:
    """The contract's weekday number of `day`: 0 = Sunday ... 6 = Saturday."""
    return day.isoweekday() % 7


def parse_hh_mm(text: str) -> time | None:
    """`HH:MM` (00:00 to 23:59) as a time; None when malformed."""
    match = _HH_MM.match(text) if isinstance(text, str) else None
    return time(int(match.group(1)), int(match.group(2))) if match else None


def minutes_of(moment: time) -> int:
    return moment.hour * 60 + moment.minute


def hh_mm(minutes: int) -> str:
    """`HH:MM` of a minute of the day; minute 1440 (the end of a slot ending at midnight) is
    `00:00`."""
    minutes %= MINUTES_PER_DAY
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def time_of(minutes: int) -> time:
    minutes %= MINUTES_PER_DAY
    return time(minutes // 60, minutes % 60)


def local_moment(day: date, at: time, tz: tzinfo) -> datetime:
    """`day` at wall time `at` in `tz`; a skipped wall time moves forward by the DST gap.

    PEP 495: a time inside a gap (fold=0) is read with the offset before the transition, so the
    round trip through UTC lands on the real instant, shown with the offset after it. An
    ambiguous time (the hour repeated in autumn) is its first occurrence.
    """
    return datetime.combine(day, at, tzinfo=tz).astimezone(UTC).astimezone(tz)


def is_skipped(day: date, at: time, tz: tzinfo) -> bool:
    """Whether wall time `at` does not exist on `day` in `tz` (it falls in a DST gap)."""
    return local_moment(day, at, tz).replace(tzinfo=None) != datetime.combine(day, at)


@dataclass(frozen=True)
class Occurrence:
    """One template on one date."""

    date: date
    start_minutes: int
    duration_minutes: int
    window_start: datetime  # aware, in the zone's time zone
    window_end: datetime
    cutoff_at: datetime  # aware, UTC

    @property
    def start_time(self) -> str:
        return hh_mm(self.start_minutes)

    @property
    def end_time(self) -> str:
        return hh_mm(self.start_minutes + self.duration_minutes)

    @property
    def day_of_week(self) -> int:
        return day_of_week(self.date)

    @property
    def label(self) -> str:
        """contract "Slots and windows": `<Ddd> <HH:MM>-<HH:MM>`, e.g. `Sun 08:00-12:00`."""
        return f"{DAY_ABBREVIATIONS[self.day_of_week]} {self.start_time}-{self.end_time}"

    def cutoff_passed(self, now: datetime) -> bool:
        """Booking closes at `cutoff_at` exactly: from that instant on it has passed."""
        return now >= self.cutoff_at


def occurrence(
    *,
    day: date,
    start_time: time,
    duration_minutes: int,
    cutoff_minutes: int | None,
    tz: tzinfo,
    cutoff_day_before_at: time | None = None,
) -> Occurrence:
    """The window and cutoff of a slot starting at `start_time` on `day` in `tz`.

    The window ends at the wall time start + duration (on the next day for a slot ending at
    midnight). A start skipped by DST moves forward by the gap and the end with it, `duration`
    minutes later in elapsed time: the wall end alone would make the window empty (02:00-03:00
    on the spring day) or reversed (02:30-03:00). The cutoff is `cutoff_minutes` before the
    window's start (elapsed time, in UTC) or, when `cutoff_day_before_at` is given, that wall
    time on the previous day in `tz` (a wall time skipped by DST moves forward by the gap; a
    repeated one is its first occurrence, as for every local moment here).
    """
    start_minutes = minutes_of(start_time)
    end_minutes = start_minutes + duration_minutes
    window_start = local_moment(day, start_time, tz)
    if is_skipped(day, start_time, tz):
        window_end = (
            window_start.astimezone(UTC) + timedelta(minutes=duration_minutes)
        ).astimezone(tz)
    else:
        window_end = local_moment(
            day + timedelta(days=end_minutes // MINUTES_PER_DAY), time_of(end_minutes), tz
        )
    if cutoff_day_before_at is not None:
        cutoff_at = local_moment(day - timedelta(days=1), cutoff_day_before_at, tz).astimezone(UTC)
    else:
        cutoff_at = window_start.astimezone(UTC) - timedelta(minutes=cutoff_minutes)
    return Occurrence(
        date=day,
        start_minutes=start_minutes,
        duration_minutes=duration_minutes,
        window_start=window_start,
        window_end=window_end,
        cutoff_at=cutoff_at,
    )


def utc_timestamp(moment: datetime) -> str:
    """ISO 8601 in UTC with `Z`, as DRF writes timestamps (`2030-01-06T05:00:00Z`)."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


@functools.lru_cache(maxsize=65_536)
def occurrence_cached(  # noqa: PLR0917 - positional on purpose: the hot path's cache key
    day: date,
    start_time: time,
    duration_minutes: int,
    cutoff_minutes: int | None,
    tz_name: str,
    cutoff_day_before_at: time | None = None,
) -> Occurrence:
    """`occurrence` memoized: a pure function of its arguments, and availability asks for
    the same slots over and over (a few hundred a day per zone)."""
    return occurrence(
        day=day,
        start_time=start_time,
        duration_minutes=duration_minutes,
        cutoff_minutes=cutoff_minutes,
        tz=zone_tz(tz_name),
        cutoff_day_before_at=cutoff_day_before_at,
    )


@functools.lru_cache(maxsize=65_536)
def occurrence_texts(slot: Occurrence) -> tuple[str, str, str, str, int]:
    """(date, deliveryWindowStart, deliveryWindowEnd, cutoffAt, dayOfWeek) as rendered."""
    return (
        slot.date.isoformat(),
        slot.window_start.isoformat(),
        slot.window_end.isoformat(),
        utc_timestamp(slot.cutoff_at),
        slot.day_of_week,
    )


def dates_between(first: date, last: date) -> list[date]:
    """Every date from `first` to `last`, both included."""
    return [first + timedelta(days=n) for n in range((last - first).days + 1)]
