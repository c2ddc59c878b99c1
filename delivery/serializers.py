"""The base of every input serializer with rules across fields.

DRF runs `validate()` only once every field is valid, so a caller who sends a body with a missing
field and a cross-field problem learns of the second only after fixing the first. The contract
wants every problem of a body in one 400 (docs/contract.md "Errors"): this base checks the
cross-field rules over the fields that are valid, also when others are not, and lists both.

It also holds the one rule between the contract's camelCase field names and the snake_case names
of the models and services (`pickupLat` is `pickup_lat`).
"""

import copy
import re
from collections.abc import Collection, Mapping
from typing import TypeVar

from rest_framework import serializers
from rest_framework.fields import SkipField
from rest_framework.settings import api_settings

S = TypeVar("S", bound=serializers.Serializer)


class LeafFieldsCopied:
    # (A comment, not a docstring: drf-spectacular would show a docstring on every serializer
    # built on it.) DRF deep-copies every declared field for every serializer instance, which
    # re-runs each field's __init__: half of validating an order body, a third of rendering
    # one. A field without fields of its own keeps no state but what bind() sets on the copy,
    # so a shallow copy serves; nested ones are deep-copied as DRF does.

    def get_fields(self):
        return {
            name: copy.copy(field) if _is_leaf(field) else copy.deepcopy(field)
            for name, field in self._declared_fields.items()
        }


class OutputSerializer(LeafFieldsCopied, serializers.Serializer):
    # The base of the answers rendered on every hot request (an order created, read, booked).
    pass


class CrossFieldSerializer(LeafFieldsCopied, serializers.Serializer):
    """Subclasses write `cross_field_problems(attrs, failed)` instead of `validate()`.

    `attrs` holds the values of the fields that are valid (under their sources); `failed` names
    the fields that are not (as sent), so a rule can stay silent about a field already reported.
    `clean(attrs)` may reshape the attrs of a fully valid body.
    """

    def cross_field_problems(self, attrs: dict, failed: set[str]) -> list[str]:
        return []

    def clean(self, attrs: dict) -> dict:
        return attrs

    def to_internal_value(self, data):
        try:
            return super().to_internal_value(data)
        except serializers.ValidationError as exc:
            if not isinstance(data, Mapping) or not isinstance(exc.detail, Mapping):
                raise
            failed = set(exc.detail)
            problems = self.cross_field_problems(self._valid_part(data, failed), failed)
            if not problems:
                raise
            detail = dict(exc.detail)
            detail[api_settings.NON_FIELD_ERRORS_KEY] = [
                *detail.get(api_settings.NON_FIELD_ERRORS_KEY, []),
                *problems,
            ]
            raise serializers.ValidationError(detail) from None

    def validate(self, attrs):
        problems = self.cross_field_problems(attrs, set())
        if problems:
            raise serializers.ValidationError(problems)
        return self.clean(attrs)

    def _valid_part(self, data: Mapping, failed: set[str]) -> dict:
        """The validated values of the fields that passed (each field run again on its own)."""
        attrs: dict = {}
        for field in self._writable_fields:
            if field.field_name in failed:
                continue
            try:
                value = field.run_validation(field.get_value(data))
            except (serializers.ValidationError, SkipField):
                continue
            self.set_value(attrs, field.source_attrs, value)
        return attrs


def _is_leaf(field: serializers.Field) -> bool:
    # The fields that hold fields of their own (a nested serializer, a list's or a dict's child).
    return not isinstance(
        field, serializers.BaseSerializer | serializers.ListField | serializers.DictField
    )


def snake_case(name: str) -> str:
    """`pickupLat` → `pickup_lat`: the model attribute or service argument of a contract field."""
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name)


def snake_source(name: str) -> dict:
    """`{"source": "pickup_lat"}` for `pickupLat`; nothing for a name that is its own attribute
    (DRF refuses a `source` equal to the field name)."""
    snake = snake_case(name)
    return {"source": snake} if snake != name else {}


def snake_case_arguments(
    validated_data: Mapping,
    *,
    renamed: Mapping[str, str] | None = None,
    leave_out: Collection[str] = (),
) -> dict:
    """`validated_data` as the keywords of a service: each field under its snake_case name
    (`dayOfWeek` → `day_of_week`) or the one `renamed` gives it; the `leave_out` fields (those
    the view resolves itself) are not passed."""
    renamed = renamed or {}
    return {
        renamed.get(key) or snake_case(key): value
        for key, value in validated_data.items()
        if key not in leave_out
    }


def page_output(item: type[serializers.Serializer]) -> type[serializers.Serializer]:
    """The base of a paginated list's answer (contract "Management API"): `items`, then `page`,
    `pageSize` and `total`. Subclassed to name the answer in the schema:
    `class OrderPageOutput(page_output(ManagedOrderOutput))`."""

    class PageOutput(serializers.Serializer):
        items = item(many=True)
        page = serializers.IntegerField()
        pageSize = serializers.IntegerField(source="page_size")
        total = serializers.IntegerField()

    return PageOutput


def optional_body(data):
    """An optional JSON body as a serializer takes it: none, or `null`, is `{}`; anything else (an
    array, a number, a string) is validated as sent, so it is a 400 like any body not an object."""
    return {} if data is None else data


def valid_serializer(serializer_class: type[S], data, **kwargs) -> S:
    """`serializer_class` over `data` (a body or query parameters), validated: a view's input in
    one call, a 400 naming every problem when it is not valid."""
    serializer = serializer_class(data=data, **kwargs)
    serializer.is_valid(raise_exception=True)
    return serializer
