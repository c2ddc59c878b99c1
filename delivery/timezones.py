"""The one reading of a stored IANA time zone name (contract "Slots and windows")."""

from datetime import tzinfo
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

UTC_ZONE = ZoneInfo("UTC")


@lru_cache(maxsize=1024)
def zone_tz(name: str) -> tzinfo:
    """The IANA zone `name`; UTC for a name this machine does not know (a name stored before
    names were checked against the IANA database)."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, TypeError):
        return UTC_ZONE
