"""Serializer fields that refuse what DRF would silently coerce (a number as a string, ...)."""

import functools
import re
import uuid
import zoneinfo
from datetime import date, datetime

from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import EmailValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers


class StrictCharField(serializers.CharField):
    default_error_messages = {"invalid": "must be a string"}

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    default_error_messages = {"invalid": "must be a boolean"}

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class StrictFloatField(serializers.FloatField):
    """A JSON number (not a string, not a boolean), finite."""

    default_error_messages = {"invalid": "must be a number"}

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictEmailField(StrictCharField):
    default_error_messages = {
        "invalid": "must be a string",
        "email": "must be a valid e-mail address",
    }

    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", 254)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data).strip().lower()
        try:
            EmailValidator()(value)
        except DjangoValidationError:
            self.fail("email")
        return value


_PHONE_SEPARATORS = re.compile(r"[\s\-()]")
_PHONE = re.compile(r"^\+?[0-9]{7,15}$")


def normalize_phone(value: str) -> str | None:
    """contract "Orders": `+` optional, then 7 to 15 digits; spaces, dashes, parentheses
    stripped."""
    stripped = _PHONE_SEPARATORS.sub("", value)
    return stripped if _PHONE.match(stripped) else None


class PhoneField(StrictCharField):
    default_error_messages = {
        "invalid": "must be a string",
        "phone": "must be a phone number: + optional, then 7 to 15 digits",
    }

    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", 32)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        normalized = normalize_phone(value)
        if normalized is None:
            self.fail("phone")
        return normalized


# ----- dates, date-times and time zones: one reading for every field that takes them -----

#: The calendar the service accepts. Python's date stops at year 9999 and a date-time near either
#: end overflows once an offset or a day is added (an OverflowError, a 500); no delivery is
#: planned centuries away, so anything outside these bounds is refused as invalid.
MIN_DATE = date(1900, 1, 1)
MAX_DATE = date(9000, 12, 31)

# ASCII digits only (`\d` would take other scripts' digits); no padding, no whitespace.
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DATE_TIME = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,6})?)?"
    r"(?:Z|[+-][0-9]{2}:[0-9]{2})?"
)


def parse_date(text) -> date | None:
    """`YYYY-MM-DD` exactly, a real day between MIN_DATE and MAX_DATE; None otherwise."""
    if not isinstance(text, str) or not _DATE.fullmatch(text):
        return None
    try:
        day = date.fromisoformat(text)
    except ValueError:
        return None
    return day if MIN_DATE <= day <= MAX_DATE else None


def parse_datetime(text) -> datetime | None:
    """ISO 8601 `YYYY-MM-DDTHH:MM[:SS[.ffffff]][Z|±HH:MM]` within the accepted calendar; naive
    when it has no offset. None for anything else."""
    if not isinstance(text, str) or not _DATE_TIME.fullmatch(text):
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if MIN_DATE <= moment.date() <= MAX_DATE else None


def date_message(field: str) -> str:
    """The one message of a date that is present but not valid, whatever the field."""
    return f"{field} must be a valid date (format: YYYY-MM-DD)"


def datetime_message(field: str) -> str:
    return f"{field} must be an ISO 8601 date-time"


@extend_schema_field({"type": "string", "format": "date"})
class DateTextField(StrictCharField):
    """A JSON string `YYYY-MM-DD` read with parse_date; the field's messages name it."""

    def __init__(self, field: str, **kwargs):
        self.field_label = field
        messages = {
            "required": f"{field} required",
            "null": f"{field} required",
            "blank": date_message(field),
            "invalid": date_message(field),
            **kwargs.pop("error_messages", {}),
        }
        # " 2030-01-06" is not the format: no trimming before the pattern.
        super().__init__(error_messages=messages, trim_whitespace=False, **kwargs)

    def to_internal_value(self, data):
        day = parse_date(super().to_internal_value(data))
        if day is None:
            self.fail("invalid")
        return day

    def run_validators(self, value):
        # The value is a date by now; the text was checked by the pattern.
        return None

    def to_representation(self, value):
        return value.isoformat() if isinstance(value, date) else value


@extend_schema_field({"type": "string", "format": "date-time"})
class DateTimeTextField(StrictCharField):
    """A JSON string read with parse_date_time (an offset optional: naive when missing)."""

    def __init__(self, field: str, **kwargs):
        self.field_label = field
        messages = {
            "required": f"{field} required",
            "null": f"{field} required",
            "blank": datetime_message(field),
            "invalid": datetime_message(field),
            **kwargs.pop("error_messages", {}),
        }
        # " 2030-01-06" is not the format: no trimming before the pattern.
        super().__init__(error_messages=messages, trim_whitespace=False, **kwargs)

    def to_internal_value(self, data):
        moment = parse_datetime(super().to_internal_value(data))
        if moment is None:
            self.fail("invalid")
        return moment

    def run_validators(self, value):
        return None

    def to_representation(self, value):
        return value.isoformat() if isinstance(value, datetime) else value


#: IANA names, canonical and backward (links), as the system's database lists them, without the
#: files that are not zones of the world: `localtime` (this host's setting), `Factory` (a
#: placeholder "local time zone must be set"), `posixrules` (a template for POSIX TZ strings).
NOT_IANA_ZONES = frozenset({"localtime", "Factory", "posixrules"})


@functools.cache
def iana_timezones() -> frozenset[str]:
    return frozenset(
        name
        for name in zoneinfo.available_timezones()
        if name not in NOT_IANA_ZONES and not name.startswith(("posix/", "right/"))
    )


def is_iana_timezone(name) -> bool:
    return isinstance(name, str) and name in iana_timezones()


def timezone_message(name: str) -> str:
    return f"timezone {name} is not an IANA time zone name"


# ----- integers in query strings -----

#: The highest page number asked for: beyond it the row offset would leave PostgreSQL's bigint.
MAX_PAGE = 1_000_000


def page_field(**kwargs) -> serializers.IntegerField:
    """`page` of a paginated list: a positive integer, at most MAX_PAGE."""
    message = "page must be a positive integer"
    return serializers.IntegerField(
        min_value=1,
        max_value=MAX_PAGE,
        required=False,
        default=1,
        error_messages={
            "invalid": message,
            "min_value": message,
            "max_value": f"page must be at most {MAX_PAGE}",
            "max_string_length": message,
        },
        **kwargs,
    )


def parse_uuid(value) -> uuid.UUID | None:
    """An id from a path, query or body as a UUID; None for anything malformed, so a lookup can
    answer a malformed id exactly as an unknown one (contract "Errors")."""
    try:
        return uuid.UUID(str(value))
    except (TypeError, ValueError, AttributeError):
        return None
