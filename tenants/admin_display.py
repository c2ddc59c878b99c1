"""How Django admin shows values to people: times with the name of their time zone, minutes with
their unit, long text shortened to fit a laptop screen.

A time tied to a zone (an order's delivery window, a blackout, a slot's holds) is shown in the
zone's own time, as the people of that zone read it; any other time (a webhook attempt, a key's
last use) in UTC, saying so. Django's own rendering ("Nov. 29, 2026, 1 p.m.") names no zone.
"""

import datetime as dt
import zoneinfo
from collections.abc import Callable

from django.contrib import admin
from django.utils.html import format_html

UTC_NAME = "UTC"
TIME_FORMAT = "%Y-%m-%d %H:%M"
#: Python's weekday numbers (0 Monday), not the contract's `dayOfWeek` (0 Sunday)
WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _zone_info(timezone_name: str | None) -> dt.tzinfo:
    try:
        return zoneinfo.ZoneInfo(timezone_name) if timezone_name else dt.UTC
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return dt.UTC  # a name the zone form would refuse: say UTC rather than fail the page


def _zone_name(timezone_name: str | None) -> str:
    return timezone_name if _zone_info(timezone_name) is not dt.UTC else UTC_NAME


def zone_time(value: dt.datetime | None, timezone_name: str | None) -> str | None:
    """`2026-11-26 14:00 Europe/Berlin`: `value` in the zone's time, with its name (UTC without a
    zone). None for no time: admin shows its empty value."""
    if value is None:
        return None
    local = value.astimezone(_zone_info(timezone_name))
    return f"{local:{TIME_FORMAT}} {_zone_name(timezone_name)}"


def zone_period(
    start: dt.datetime | None, end: dt.datetime | None, timezone_name: str | None
) -> str | None:
    """`2026-11-29 14:00-18:00 Europe/Berlin` (an en dash between); the end's date is written out
    when it differs."""
    if start is None:
        return None
    if end is None:
        return zone_time(start, timezone_name)
    zone = _zone_info(timezone_name)
    local_start, local_end = start.astimezone(zone), end.astimezone(zone)
    same_day = local_end.date() == local_start.date()
    until = f"{local_end:%H:%M}" if same_day else f"{local_end:{TIME_FORMAT}}"
    return f"{local_start:{TIME_FORMAT}}\u2013{until} {_zone_name(timezone_name)}"


def utc_time(value: dt.datetime | None) -> str | None:
    """`2026-11-26 13:00 UTC`: a time tied to no zone."""
    return zone_time(value, None)


def calendar_day(value: dt.date) -> str:
    """`2026-12-25 Friday`: a calendar date (of a zone), with its weekday, as people plan by."""
    return f"{value:%Y-%m-%d} {WEEKDAY_NAMES[value.weekday()]}"


def minutes(value: int | None) -> str | None:
    """`120 min`."""
    return None if value is None else f"{value} min"


def shortened(text: str, limit: int):
    """`text` cut to `limit` characters with an ellipsis; the whole text is its tooltip."""
    if len(text) <= limit:
        return text
    return format_html('<span title="{}">{}\u2026</span>', text, text[: limit - 1])


def or_empty(model_admin, text):
    """`text`, or admin's empty value ("-") for None: a read-only field would show "None"."""
    return model_admin.get_empty_value_display() if text is None else text


def time_field(
    field_name: str,
    description: str,
    timezone_of: Callable[[object], str | None] | None = None,
):
    """A list column or read-only field showing the datetime `field_name` of a row: in the time
    zone `timezone_of(row)` names (its zone's), or in UTC without one. Sorts by the field."""

    @admin.display(description=description, ordering=field_name)
    def shown(model_admin, obj):
        timezone_name = timezone_of(obj) if timezone_of is not None else None
        return or_empty(model_admin, zone_time(getattr(obj, field_name), timezone_name))

    shown.__name__ = f"{field_name}_shown"
    return shown
