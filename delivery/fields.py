"""Serializer fields that refuse what DRF would silently coerce (a number as a string, ...)."""

import re

from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import EmailValidator
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
    """decisions §5: `+` optional, then 7 to 15 digits; spaces, dashes, parentheses stripped."""
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
