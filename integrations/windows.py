"""The partner family's standard delivery windows (contract "Orders", contract "Orders", "Slots and
windows").

Pure time arithmetic, no I/O: windows are 08:00-12:00, 12:00-16:00 and 16:00-20:00 wall-clock
time in the zone's timezone (so their UTC offsets follow DST), none on Friday and Saturday.
"""

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo

from delivery.timezones import zone_tz  # noqa: F401 - the one home; re-exported here

STANDARD_WINDOWS: tuple[tuple[time, time], ...] = (
    (time(8), time(12)),
    (time(12), time(16)),
    (time(16), time(20)),
)
#: contract: no deliveries on days 5 and 6 (Friday, Saturday); Python counts Monday as 0
NO_DELIVERY_WEEKDAYS = frozenset({4, 5})


@dataclass(frozen=True)
class Window:
    start: datetime
    end: datetime


def windows_for_day(day: date, tz: tzinfo) -> list[Window]:
    """The day's windows as aware datetimes in `tz`, ascending; empty on Friday and Saturday."""
    if day.weekday() in NO_DELIVERY_WEEKDAYS:
        return []
    return [
        Window(datetime.combine(day, start, tzinfo=tz), datetime.combine(day, end, tzinfo=tz))
        for start, end in STANDARD_WINDOWS
    ]


def window_containing(moment: datetime, tz: tzinfo) -> Window | None:
    """The window with start <= moment < end on the moment's local day in `tz`, if any."""
    local_day = moment.astimezone(tz).date()
    for window in windows_for_day(local_day, tz):
        if window.start <= moment < window.end:
            return window
    return None


def day_bounds(day: date, tz: tzinfo) -> tuple[datetime, datetime]:
    """[00:00 of `day`, 00:00 of the next day) in `tz`, as aware datetimes."""
    return (
        datetime.combine(day, time(0), tzinfo=tz),
        datetime.combine(day + timedelta(days=1), time(0), tzinfo=tz),
    )
