"""Serializer fields that refuse what DRF would silently coerce (a number as a string, ...)."""

import functools
import math
import re
import uuid
import zoneinfo
from collections.abc import Callable, Iterable, Sequence
from datetime import date, datetime

from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import EmailValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers


def declare(field: serializers.Field, **constraints) -> serializers.Field:
    """`field`, stating in the OpenAPI document the limits it enforces in code (`pattern`,
    `enum`, `minimum`, ...): drf-spectacular reads only DRF's own kwargs, and
    delivery.schema.AutoSchema adds these to the field's schema. The field becomes an instance
    of a subclass that carries them, so the copy each serializer makes of its fields (DRF builds
    it from the field's class and arguments) keeps them too."""
    merged = {**getattr(field, "openapi_constraints", {}), **constraints}
    base = type(field)
    field.__class__ = type(base.__name__, (base,), {"openapi_constraints": merged})
    return field


def state_constraints(field: serializers.Field, **constraints) -> None:
    """Like declare, from a field's own __init__ (which runs again for every copy)."""
    field.openapi_constraints = {**getattr(field, "openapi_constraints", {}), **constraints}


def field_messages(field: str, **extra) -> dict:
    """The messages of a text field that names itself in each (contract "Errors"):
    `externalRef required`, `notes must be a string`."""
    return {
        "required": f"{field} required",
        "null": f"{field} required",
        "blank": f"{field} must not be empty",
        "invalid": f"{field} must be a string",
        **extra,
    }


def required_messages(message: str, **extra) -> dict:
    """One message for a value that is missing, null or blank (`name is required`)."""
    return {"required": message, "blank": message, "null": message, **extra}


def is_json_number(data) -> bool:
    """An int or a float, as JSON numbers arrive; not a boolean (which Python counts as an int)."""
    return isinstance(data, int | float) and not isinstance(data, bool)


def one_of_message(field: str, choices: Iterable[str]) -> str:
    return f"{field} must be one of: {', '.join(choices)}"


def choice_field(
    field: str, choices: Sequence[str], *, missing: str | None = None, **kwargs
) -> serializers.ChoiceField:
    """A choice among `choices` whose messages name the field; `missing` is the message of an
    absent or null value (DRF's own otherwise)."""
    messages = {"invalid_choice": one_of_message(field, choices)}
    if missing is not None:
        messages.update(required=missing, null=missing)
    return serializers.ChoiceField(choices=choices, error_messages=messages, **kwargs)


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
        if not is_json_number(data):
            self.fail("invalid")
        return super().to_internal_value(data)


#: What Django's EmailValidator takes, as a pattern (its dot-atom form; a quoted local part or
#: an address literal, which it also takes, left unstated)
EMAIL_PATTERN = (
    r"^[-!#$%&'*+/=?^_`{}|~0-9A-Za-z]+(?:\.[-!#$%&'*+/=?^_`{}|~0-9A-Za-z]+)*"
    r"@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z0-9-]{1,62}[A-Za-z0-9]$"
)


class StrictEmailField(StrictCharField):
    default_error_messages = {
        "invalid": "must be a string",
        "email": "must be a valid e-mail address",
    }

    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", 254)
        super().__init__(**kwargs)
        state_constraints(self, format="email", pattern=EMAIL_PATTERN)

    def to_internal_value(self, data):
        value = super().to_internal_value(data).strip().lower()
        try:
            EmailValidator()(value)
        except DjangoValidationError:
            self.fail("email")
        return value


class NamedTextField(StrictCharField):
    """A JSON string of at most `max_length` characters, trimmed; every message names the field.
    An optional one (`required=False`) may also be null or blank."""

    def __init__(self, field: str, max_length: int | None, *, required: bool = True, **kwargs):
        self.field_label = field
        length_message = {"max_length": f"{field} must be at most {max_length} characters"}
        messages = field_messages(
            field, **(length_message if max_length else {}), **kwargs.pop("error_messages", {})
        )
        kwargs.setdefault("allow_null", not required)
        kwargs.setdefault("allow_blank", not required)
        super().__init__(
            max_length=max_length, required=required, error_messages=messages, **kwargs
        )


#: What breaks a line of text: every control character (Unicode category Cc: C0 with tab, CR and
#: LF, DEL, C1 with NEL) and the line and paragraph separators. A name with one cannot go into an
#: e-mail header (Django raises BadHeaderError) and means nothing in a one-line label.
LINE_BREAKING = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


#: LINE_BREAKING's refusal as an OpenAPI pattern (ECMA-262 and Python read it alike)
SINGLE_LINE_PATTERN = "^[^\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029]*$"


def has_line_breaking(text: str) -> bool:
    return LINE_BREAKING.search(text) is not None


def single_line_message(field: str) -> str:
    return f"{field} must not contain control characters or line breaks"


def one_line(text: str) -> str:
    """`text` with each line-breaking character made a space: for a name stored before names
    were checked, on its way into a header."""
    return LINE_BREAKING.sub(" ", text)


class SingleLineTextField(StrictCharField):
    """A JSON string on one line (no LINE_BREAKING character), trimmed, at most `max_length`
    characters. For names that reach e-mail headers and labels; that message names the field."""

    def __init__(self, field: str, max_length: int, **kwargs):
        self.field_label = field
        messages = {"single_line": single_line_message(field), **kwargs.pop("error_messages", {})}
        super().__init__(max_length=max_length, error_messages=messages, **kwargs)
        state_constraints(self, pattern=SINGLE_LINE_PATTERN)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if has_line_breaking(value):
            self.fail("single_line")
        return value


class TextChoiceField(NamedTextField):
    """A JSON string among `choices` (optional and nullable unless told otherwise)."""

    def __init__(self, field: str, choices: list[str], *, max_length=None, **kwargs):
        self.choices = choices
        self.choices_message = one_of_message(field, choices)
        kwargs.setdefault("required", False)
        kwargs.setdefault("allow_null", True)
        kwargs.setdefault("allow_blank", False)
        super().__init__(field, max_length, **kwargs)
        state_constraints(self, enum=[*choices, None] if self.allow_null else list(choices))

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if value not in self.choices:
            raise serializers.ValidationError(self.choices_message)
        return value


PHONE_MESSAGE = "must be a phone number: + optional, then 7 to 15 digits"
_PHONE_SEPARATORS = re.compile(r"[\s\-()]")
_PHONE = re.compile(r"^\+?[0-9]{7,15}$")
#: What normalize_phone takes, as one pattern: separators anywhere, `+` before the first digit.
PHONE_PATTERN = r"^[\s\-()]*\+?(?:[\s\-()]*[0-9]){7,15}[\s\-()]*$"


def normalize_phone(value: str) -> str | None:
    """contract "Orders": `+` optional, then 7 to 15 digits; spaces, dashes, parentheses
    stripped."""
    stripped = _PHONE_SEPARATORS.sub("", value)
    return stripped if _PHONE.match(stripped) else None


class PhoneField(StrictCharField):
    """A phone number, normalized (normalize_phone). Given `field`, every message names it
    (`recipientPhone required`), as NamedTextField's do."""

    default_error_messages = {"invalid": "must be a string", "phone": PHONE_MESSAGE}

    def __init__(self, field: str | None = None, **kwargs):
        kwargs.setdefault("max_length", 32)
        if field is not None:
            kwargs["error_messages"] = field_messages(
                field,
                max_length=f"{field} must be at most {kwargs['max_length']} characters",
                phone=f"{field} {PHONE_MESSAGE}",
                **kwargs.get("error_messages", {}),
            )
        super().__init__(**kwargs)
        # the length is checked on the normalized number: separators are not counted
        state_constraints(self, pattern=PHONE_PATTERN, maxLength=None)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        normalized = normalize_phone(value)
        if normalized is None:
            self.fail("phone")
        return normalized


class CoordinateField(StrictFloatField):
    """A latitude (`bound` 90) or longitude (`bound` 180): a JSON number within [-bound, bound]
    (contract "Orders"). An optional one may be null."""

    def __init__(self, field: str, bound: int, *, required: bool = True, **kwargs):
        self.field_label = field
        self.bound = bound
        kwargs.setdefault("allow_null", not required)
        super().__init__(
            required=required,
            error_messages=field_messages(field, invalid=f"{field} must be a number"),
            **kwargs,
        )
        state_constraints(self, minimum=-bound, maximum=bound)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if not -self.bound <= value <= self.bound:
            raise serializers.ValidationError(
                f"{self.field_label} must be between -{self.bound} and {self.bound}"
            )
        return value


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer: not a string, not a boolean, not a fraction."""

    default_error_messages = {"invalid": "must be an integer"}

    def to_internal_value(self, data):
        whole = is_json_number(data) and (
            isinstance(data, int) or (math.isfinite(data) and data.is_integer())
        )
        if not whole:
            self.fail("invalid")
        return super().to_internal_value(int(data))


class BoundedIntegerField(StrictIntegerField):
    """A StrictIntegerField within [min, max]; the range message names both bounds."""

    def __init__(self, *, min_value: int, max_value: int, **kwargs):
        range_message = f"must be between {min_value} and {max_value}"
        kwargs["error_messages"] = {
            "max_value": range_message,
            "min_value": range_message,
            **kwargs.get("error_messages", {}),
        }
        super().__init__(min_value=min_value, max_value=max_value, **kwargs)


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


#: The years of the accepted calendar, MIN_DATE (1900) to MAX_DATE (9000, up to December 31),
#: as a pattern's start
_YEAR_PATTERN = "(?:19[0-9]{2}|[2-8][0-9]{3}|9000)"
#: parse_date's text as an OpenAPI pattern (with `format: date` for the day itself)
DATE_PATTERN = f"^{_YEAR_PATTERN}-[0-9]{{2}}-[0-9]{{2}}$"
#: parse_datetime's text as an OpenAPI pattern
DATE_TIME_PATTERN = f"^{_YEAR_PATTERN}-{_DATE_TIME.pattern[len('[0-9]{4}-') :]}$"


def date_message(field: str) -> str:
    """The one message of a date that is present but not valid, whatever the field."""
    return f"{field} must be a valid date (format: YYYY-MM-DD)"


def datetime_message(field: str) -> str:
    return f"{field} must be an ISO 8601 date-time"


class _ParsedTextField(StrictCharField):
    """A JSON string read by `parse` (None when not valid) into a `value_type`; every message
    names the field, `message` the one of a value present but not valid."""

    value_type: type
    parse: Callable[[object], object]
    message: Callable[[str], str]

    def __init__(self, field: str, **kwargs):
        self.field_label = field
        invalid = type(self).message(field)
        messages = field_messages(
            field, blank=invalid, invalid=invalid, **kwargs.pop("error_messages", {})
        )
        # " 2030-01-06" is not the format: no trimming before the pattern.
        super().__init__(error_messages=messages, trim_whitespace=False, **kwargs)

    def to_internal_value(self, data):
        value = type(self).parse(super().to_internal_value(data))
        if value is None:
            self.fail("invalid")
        return value

    def run_validators(self, value):
        # The value is parsed by now; the text was checked by the pattern.
        return None

    def to_representation(self, value):
        return value.isoformat() if isinstance(value, self.value_type) else value


@extend_schema_field({"type": "string", "format": "date", "pattern": DATE_PATTERN})
class DateTextField(_ParsedTextField):
    """A JSON string `YYYY-MM-DD` read with parse_date; the field's messages name it."""

    value_type = date
    parse = staticmethod(parse_date)
    message = staticmethod(date_message)


@extend_schema_field({"type": "string", "format": "date-time", "pattern": DATE_TIME_PATTERN})
class DateTimeTextField(_ParsedTextField):
    """A JSON string read with parse_datetime (an offset optional: naive when missing)."""

    value_type = datetime
    parse = staticmethod(parse_datetime)
    message = staticmethod(datetime_message)


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


def iana_timezone_validate(value) -> None:
    """The models' validator of a time zone column (their forms: Django admin), with the rule and
    message of TimezoneField (the API)."""
    if not is_iana_timezone(value):
        raise DjangoValidationError(timezone_message(value))


class TimezoneField(StrictCharField):
    """An IANA time zone name (`Europe/Berlin`)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", 64)
        super().__init__(**kwargs)

    def run_validators(self, value):
        # After the length check, as a `validate_timezone` would run: its message stays first.
        super().run_validators(value)
        if not is_iana_timezone(value):
            raise serializers.ValidationError(timezone_message(value))


# ----- numbers in query strings -----

#: A whole number as a query string writes it: ASCII digits only. Python's int() would also take
#: `1_000`, ` 12 `, `+5`, `١٢` (other scripts' digits) and DRF's IntegerField `12.0`.
_QUERY_INTEGER = re.compile(r"[0-9]+")
#: More digits than this is beyond any limit a parameter has (and than PostgreSQL's bigint).
_QUERY_INTEGER_MAX_DIGITS = 18
#: A decimal number: an optional minus, ASCII digits, an optional fraction. float() would also
#: take `1_0`, `1e2`, `inf`, `nan` and surrounding whitespace.
_QUERY_NUMBER = re.compile(r"-?[0-9]{1,18}(?:\.[0-9]{1,18})?")


def parse_query_integer(text) -> int | None:
    """A query or path parameter's text as a non-negative integer; None unless it is ASCII
    digits only. Beyond 18 digits, 10**18 (a number too large for any parameter, read without
    reading every digit)."""
    if not isinstance(text, str) or not _QUERY_INTEGER.fullmatch(text):
        return None
    if len(text.lstrip("0")) > _QUERY_INTEGER_MAX_DIGITS:
        return 10**_QUERY_INTEGER_MAX_DIGITS
    return int(text)


def parse_query_number(text) -> float | None:
    """A query parameter's text as a decimal number (`52.52`, `-13.4`); None unless it is
    written as one in ASCII."""
    if not isinstance(text, str) or not _QUERY_NUMBER.fullmatch(text):
        return None
    return float(text)


@extend_schema_field({"type": "integer"})
class QueryIntegerField(serializers.Field):
    """An integer query parameter from `min_value` to `max_value`, read by parse_query_integer;
    one message (`message`) for every way it can be wrong."""

    def __init__(self, *, message: str, min_value: int, max_value: int, **kwargs):
        self.min_value, self.max_value = min_value, max_value
        kwargs["error_messages"] = {"invalid": message, **kwargs.get("error_messages", {})}
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        value = parse_query_integer(data)
        if value is None:
            self.fail("invalid")
        if value < self.min_value:
            self.fail("invalid")
        if value > self.max_value:
            self.fail("max_value" if "max_value" in self.error_messages else "invalid")
        return value

    def to_representation(self, value):
        return value


#: The highest page number asked for: beyond it the row offset would leave PostgreSQL's bigint.
MAX_PAGE = 1_000_000


def page_field(**kwargs) -> QueryIntegerField:
    """`page` of a paginated list: a positive integer in ASCII digits, at most MAX_PAGE."""
    return QueryIntegerField(
        message="page must be a positive integer",
        min_value=1,
        max_value=MAX_PAGE,
        required=False,
        default=1,
        error_messages={"max_value": f"page must be at most {MAX_PAGE}"},
        **kwargs,
    )


def page_size_field(*, maximum: int, default: int) -> QueryIntegerField:
    """`pageSize` of a paginated list: an integer from 1 to `maximum`, in ASCII digits."""
    return QueryIntegerField(
        message=f"pageSize must be an integer from 1 to {maximum}",
        min_value=1,
        max_value=maximum,
        required=False,
        default=default,
    )


def parse_uuid(value) -> uuid.UUID | None:
    """An id from a path, query or body as a UUID; None for anything malformed, so a lookup can
    answer a malformed id exactly as an unknown one (contract "Errors")."""
    try:
        return uuid.UUID(str(value))
    except (TypeError, ValueError, AttributeError):
        return None
