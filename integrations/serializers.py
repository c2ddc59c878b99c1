"""Input and output shapes of the partner family and the orders management API.

Every validation message names its field (contract "Errors"): `externalRef required`,
`recipientPhone must be a phone number ...`, `dropoffLat/dropoffLng required unless
geocodeOnIngest is true` (contract "Errors").
"""

import re
from decimal import Decimal

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from delivery.fields import (
    DateTextField,
    DateTimeTextField,
    StrictBooleanField,
    StrictCharField,
    StrictFloatField,
    date_message,
    normalize_phone,
    page_field,
    parse_date,
)
from delivery.serializers import CrossFieldSerializer
from integrations import windows
from integrations.external_refs import external_ref_problem
from integrations.models import (
    DeliveryMethod,
    Order,
    OrderStatus,
    PackageSize,
    ServiceType,
    TemperatureClass,
)
from integrations.services import sandbox
from slots.serializers import StrictIntegerField

MAX_WEIGHT_KG = 100_000
MAX_COD_AMOUNT = Decimal("9999999999.99")
MAX_PAGE_SIZE = 100
DEFAULT_PAGE_SIZE = 50

#: contract "Orders": the partner-facing status
MAPPING_STATUS = {OrderStatus.PENDING: "created", OrderStatus.DISPATCHING: "released"}


def current_mapping_status(status: str) -> str:
    return MAPPING_STATUS.get(status, status)


def _messages(field: str, **extra) -> dict:
    return {
        "required": f"{field} required",
        "null": f"{field} required",
        "blank": f"{field} must not be empty",
        "invalid": f"{field} must be a string",
        **extra,
    }


def text(field: str, max_length: int, *, required: bool = True) -> StrictCharField:
    """A JSON string of at most `max_length` characters, trimmed."""
    return StrictCharField(
        **_source(field),
        max_length=max_length,
        required=required,
        allow_null=not required,
        allow_blank=not required,
        error_messages=_messages(
            field, max_length=f"{field} must be at most {max_length} characters"
        ),
    )


def _snake(name: str) -> str | None:
    """`pickupLat` → `pickup_lat`; None when the name needs no `source` (DRF refuses that)."""
    snake = re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name)
    return snake if snake != name else None


def _source(name: str) -> dict:
    snake = _snake(name)
    return {"source": snake} if snake else {}


class CoordinateField(StrictFloatField):
    def __init__(self, field: str, bound: int, **kwargs):
        self.bound = bound
        self.field_label = field
        super().__init__(
            source=_snake(field),
            required=False,
            allow_null=True,
            error_messages=_messages(field, invalid=f"{field} must be a number"),
            **kwargs,
        )

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if not -self.bound <= value <= self.bound:
            raise serializers.ValidationError(
                f"{self.field_label} must be between -{self.bound} and {self.bound}"
            )
        return value


class ChoiceText(StrictCharField):
    def __init__(self, field: str, choices: list[str], **kwargs):
        self.choices = choices
        self.choices_message = f"{field} must be one of: {', '.join(choices)}"
        kwargs.setdefault("required", False)
        kwargs.setdefault("allow_null", True)
        super().__init__(source=_snake(field), error_messages=_messages(field), **kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if value not in self.choices:
            raise serializers.ValidationError(self.choices_message)
        return value


class DecimalNumberField(StrictFloatField):
    """A JSON number read as the Decimal of its shortest form, within bounds and places."""

    def __init__(self, field: str, *, minimum, maximum, places: int, exclusive_min: bool):
        self.field_label = field
        self.minimum = Decimal(str(minimum))
        self.maximum = Decimal(str(maximum))
        self.places = places
        self.exclusive_min = exclusive_min
        super().__init__(
            source=_snake(field),
            required=False,
            allow_null=True,
            error_messages=_messages(field, invalid=f"{field} must be a number"),
        )

    def to_internal_value(self, data):
        value = Decimal(repr(super().to_internal_value(data)))
        label = self.field_label
        if self.exclusive_min and value <= self.minimum:
            raise serializers.ValidationError(f"{label} must be greater than {self.minimum}")
        if not self.exclusive_min and value < self.minimum:
            raise serializers.ValidationError(f"{label} must be at least {self.minimum}")
        if value > self.maximum:
            raise serializers.ValidationError(f"{label} must be at most {self.maximum}")
        if -value.normalize().as_tuple().exponent > self.places:
            raise serializers.ValidationError(
                f"{label} must have at most {self.places} decimal places"
            )
        return value


class IsoDateTimeField(DateTimeTextField):
    """An ISO 8601 date-time; one without an offset is kept naive (read in zone time later)."""

    def __init__(self, field: str):
        super().__init__(field, source=_snake(field), required=False, allow_null=True)


class PhoneText(StrictCharField):
    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        normalized = normalize_phone(value)
        if normalized is None:
            raise serializers.ValidationError(
                "recipientPhone must be a phone number: + optional, then 7 to 15 digits"
            )
        return normalized


class ExternalRefText(StrictCharField):
    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        problem = external_ref_problem(value)
        if problem:
            raise serializers.ValidationError(problem)
        return value


class PartnerOrderInput(CrossFieldSerializer):
    """`POST /integrations/partner-a/orders` (contract "Orders")."""

    externalRef = ExternalRefText(
        source="external_ref",
        max_length=100,
        error_messages=_messages(
            "externalRef", max_length="externalRef must be at most 100 characters"
        ),
    )
    pickupAddress = text("pickupAddress", 500)
    pickupLat = CoordinateField("pickupLat", 90)
    pickupLng = CoordinateField("pickupLng", 180)
    dropoffAddress = text("dropoffAddress", 500)
    dropoffLat = CoordinateField("dropoffLat", 90)
    dropoffLng = CoordinateField("dropoffLng", 180)
    recipientName = text("recipientName", 200)
    recipientPhone = PhoneText(
        source="recipient_phone",
        max_length=32,
        error_messages=_messages(
            "recipientPhone",
            max_length="recipientPhone must be a phone number: + optional, then 7 to 15 digits",
        ),
    )
    packageSize = ChoiceText("packageSize", PackageSize.values)
    weightKg = DecimalNumberField(
        "weightKg", minimum=0, maximum=MAX_WEIGHT_KG, places=3, exclusive_min=True
    )
    temperatureClass = ChoiceText("temperatureClass", TemperatureClass.values)
    deliveryMethod = ChoiceText("deliveryMethod", DeliveryMethod.values)
    deliveryZone = text("deliveryZone", 200, required=False)
    geocodeOnIngest = StrictBooleanField(
        source="geocode_on_ingest",
        required=False,
        allow_null=True,
        error_messages={"invalid": "geocodeOnIngest must be a boolean"},
    )
    notes = text("notes", 2000, required=False)
    deliveryWindowStart = IsoDateTimeField("deliveryWindowStart")
    deliveryWindowEnd = IsoDateTimeField("deliveryWindowEnd")
    codAmount = DecimalNumberField(
        "codAmount", minimum=0, maximum=MAX_COD_AMOUNT, places=2, exclusive_min=False
    )
    expectedBarcode = text("expectedBarcode", 200, required=False)
    serviceType = ChoiceText("serviceType", ServiceType.values)

    def cross_field_problems(self, attrs, failed):
        problems = []
        geocode = bool(attrs.get("geocode_on_ingest"))
        for prefix in ("pickup", "dropoff"):
            if failed & {f"{prefix}Lat", f"{prefix}Lng", "geocodeOnIngest"}:
                continue  # already reported; whether they were needed is moot
            given = (
                attrs.get(f"{prefix}_lat") is not None and attrs.get(f"{prefix}_lng") is not None
            )
            if not given and not geocode:
                problems.append(f"{prefix}Lat/{prefix}Lng required unless geocodeOnIngest is true")
        size_failed = failed & {"packageSize", "weightKg"}
        if not size_failed and not attrs.get("package_size") and attrs.get("weight_kg") is None:
            problems.append("packageSize or weightKg required")
        if not failed & {"deliveryWindowStart", "deliveryWindowEnd"}:
            problems += _window_problems(
                attrs.get("delivery_window_start"), attrs.get("delivery_window_end")
            )
        return problems

    def clean(self, attrs):
        # Absent and null optional fields mean the same: the model's blank value.
        cleaned = {key: value for key, value in attrs.items() if value is not None}
        cleaned["geocode_on_ingest"] = bool(attrs.get("geocode_on_ingest"))
        return cleaned


def _window_problems(start, end) -> list[str]:
    if end is not None and start is None:
        return ["deliveryWindowStart required when deliveryWindowEnd is given"]
    if start is None or end is None:
        return []
    if (start.tzinfo is None) != (end.tzinfo is None):
        return ["deliveryWindowEnd must have an offset exactly when deliveryWindowStart has"]
    if end <= start:
        return ["deliveryWindowEnd must be after deliveryWindowStart"]
    return []


def _zone_tz(order: Order):
    return windows.zone_tz(order.zone.timezone) if order.zone_id else windows.zone_tz("UTC")


@extend_schema_field({"type": "string", "format": "date-time", "nullable": True})
class ZoneTimeField(serializers.Field):
    """A window bound in the order's zone timezone, with its offset (`+02:00`); null without one."""

    def __init__(self, **kwargs):
        super().__init__(source="*", read_only=True, **kwargs)

    def bind(self, field_name, parent):
        super().bind(field_name, parent)
        self.attribute_name = _snake(field_name)

    def to_representation(self, order):
        value = getattr(order, self.attribute_name)
        return value.astimezone(_zone_tz(order)).isoformat() if value else None


class OrderDriverOutput(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    phone = serializers.CharField()


class PartnerOrderCreatedOutput(serializers.Serializer):
    """The 201 of Create Order (contract)."""

    id = serializers.UUIDField()
    status = serializers.CharField()
    pickupAddress = serializers.CharField(source="pickup_address")
    pickupLat = serializers.FloatField(source="pickup_lat")
    pickupLng = serializers.FloatField(source="pickup_lng")
    dropoffAddress = serializers.CharField(source="dropoff_address")
    dropoffLat = serializers.FloatField(source="dropoff_lat")
    dropoffLng = serializers.FloatField(source="dropoff_lng")
    recipientName = serializers.CharField(source="recipient_name")
    recipientPhone = serializers.CharField(source="recipient_phone")
    packageSize = serializers.CharField(source="package_size", allow_null=True)
    externalRef = serializers.CharField(source="external_ref")
    notes = serializers.CharField()
    deliveryWindowStart = ZoneTimeField()
    deliveryWindowEnd = ZoneTimeField()
    trackingToken = serializers.CharField(source="tracking_token")
    createdAt = serializers.DateTimeField(source="created_at")
    updatedAt = serializers.DateTimeField(source="updated_at")

    def to_representation(self, instance):
        data = super().to_representation(instance)
        data["packageSize"] = data["packageSize"] or None
        return data


class PartnerOrderOutput(serializers.Serializer):
    """The partner order (contract "Orders"), as read, cancelled."""

    externalRef = serializers.CharField(source="external_ref")
    serviceOrderId = serializers.UUIDField(source="id")
    status = serializers.CharField()
    driver = OrderDriverOutput(allow_null=True)
    deliveryWindowStart = ZoneTimeField()
    deliveryWindowEnd = ZoneTimeField()
    trackingToken = serializers.CharField(source="tracking_token")
    currentMappingStatus = serializers.SerializerMethodField(method_name="get_mapping_status")

    def get_mapping_status(self, order) -> str:
        return current_mapping_status(order.status)


class PartnerOrderReleasedOutput(serializers.Serializer):
    """contract "Orders": the release response."""

    externalRef = serializers.CharField(source="external_ref")
    serviceOrderId = serializers.UUIDField(source="id")
    status = serializers.CharField()
    currentMappingStatus = serializers.SerializerMethodField(method_name="get_mapping_status")
    releasedAt = serializers.DateTimeField(source="released_at")

    def get_mapping_status(self, order) -> str:
        return current_mapping_status(order.status)


class CancelInput(serializers.Serializer):
    reason = StrictCharField(
        required=False,
        allow_blank=True,
        allow_null=True,
        max_length=500,
        error_messages=_messages("reason", max_length="reason must be at most 500 characters"),
    )


# ----- delivery windows -----


class DeliveryWindowsQuery(CrossFieldSerializer):
    """`GET .../delivery-windows?zone|address&date` (contract, "Errors")."""

    DATE_MESSAGE = "date query parameter is required (format: YYYY-MM-DD)"

    zone = serializers.CharField(required=False, allow_blank=True, max_length=200)
    address = serializers.CharField(required=False, allow_blank=True, max_length=500)
    date = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)

    def cross_field_problems(self, attrs, failed):
        problems = []
        zone, address = attrs.get("zone") or None, attrs.get("address") or None
        if failed & {"zone", "address"}:
            pass
        elif zone and address:
            problems.append("Provide either zone or address, not both")
        elif not zone and not address:
            problems.append("zone or address query parameter is required")
        if "date" not in failed:
            text_date = attrs.get("date") or ""
            if not text_date:
                problems.append(self.DATE_MESSAGE)
            elif parse_date(text_date) is None:
                problems.append(date_message("date"))
        return problems

    def clean(self, attrs):
        return {
            "zone": attrs.get("zone") or None,
            "address": attrs.get("address") or None,
            "date": parse_date(attrs["date"]),
        }


class DeliveryWindowOutput(serializers.Serializer):
    start = serializers.SerializerMethodField()
    end = serializers.SerializerMethodField()
    available = serializers.BooleanField()
    scheduledCount = serializers.IntegerField(source="scheduled_count")
    capacityLimit = serializers.IntegerField(source="capacity_limit")

    def get_start(self, window) -> str:
        return window.start.isoformat()

    def get_end(self, window) -> str:
        return window.end.isoformat()


class ZoneWindowsOutput(serializers.Serializer):
    zone = serializers.CharField(source="zone.name")
    date = serializers.DateField()
    timezone = serializers.CharField()
    windows = DeliveryWindowOutput(many=True)


# ----- management API -----


class OrderListQuery(serializers.Serializer):
    status = serializers.ChoiceField(
        choices=OrderStatus.values,
        required=False,
        error_messages={
            "invalid_choice": f"status must be one of: {', '.join(OrderStatus.values)}"
        },
    )
    date = DateTextField("date", required=False)
    zoneId = serializers.UUIDField(
        required=False, error_messages={"invalid": "zoneId must be a UUID"}
    )
    page = page_field()
    pageSize = serializers.IntegerField(
        min_value=1,
        max_value=MAX_PAGE_SIZE,
        required=False,
        default=DEFAULT_PAGE_SIZE,
        error_messages={
            "invalid": f"pageSize must be an integer from 1 to {MAX_PAGE_SIZE}",
            "min_value": f"pageSize must be an integer from 1 to {MAX_PAGE_SIZE}",
            "max_value": f"pageSize must be an integer from 1 to {MAX_PAGE_SIZE}",
            "max_string_length": f"pageSize must be an integer from 1 to {MAX_PAGE_SIZE}",
        },
    )


class OrderTransitionInput(serializers.Serializer):
    status = serializers.ChoiceField(
        choices=OrderStatus.values,
        error_messages={
            "required": "status required",
            "null": "status required",
            "invalid_choice": f"status must be one of: {', '.join(OrderStatus.values)}",
        },
    )
    driverId = StrictCharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        max_length=64,
        error_messages=_messages("driverId"),
    )
    reason = StrictCharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        max_length=500,
        error_messages=_messages("reason", max_length="reason must be at most 500 characters"),
    )


class OrderStatusEventOutput(serializers.Serializer):
    fromStatus = serializers.SerializerMethodField(method_name="get_from_status")
    toStatus = serializers.CharField(source="to_status")
    at = serializers.DateTimeField()
    actor = serializers.CharField()
    reason = serializers.CharField()

    def get_from_status(self, event) -> str | None:
        return event.from_status or None


class ManagedOrderOutput(serializers.Serializer):
    """An order as the management API shows it (contract "Management API")."""

    id = serializers.UUIDField()
    externalRef = serializers.CharField(source="external_ref")
    family = serializers.CharField()
    platform = serializers.CharField()
    status = serializers.CharField()
    currentMappingStatus = serializers.SerializerMethodField(method_name="get_mapping_status")
    pickupAddress = serializers.CharField(source="pickup_address")
    pickupLat = serializers.FloatField(source="pickup_lat", allow_null=True)
    pickupLng = serializers.FloatField(source="pickup_lng", allow_null=True)
    dropoffAddress = serializers.CharField(source="dropoff_address")
    dropoffLat = serializers.FloatField(source="dropoff_lat", allow_null=True)
    dropoffLng = serializers.FloatField(source="dropoff_lng", allow_null=True)
    recipientName = serializers.CharField(source="recipient_name")
    recipientPhone = serializers.CharField(source="recipient_phone")
    packageSize = serializers.CharField(source="package_size", allow_null=True)
    weightKg = serializers.FloatField(source="weight_kg", allow_null=True)
    temperatureClass = serializers.CharField(source="temperature_class", allow_null=True)
    deliveryMethod = serializers.CharField(source="delivery_method", allow_null=True)
    serviceType = serializers.CharField(source="service_type")
    codAmount = serializers.FloatField(source="cod_amount", allow_null=True)
    expectedBarcode = serializers.CharField(source="expected_barcode", allow_null=True)
    notes = serializers.CharField()
    zoneId = serializers.UUIDField(source="zone_id", allow_null=True)
    zoneName = serializers.CharField(source="zone.name", allow_null=True, default=None)
    deliveryWindowStart = ZoneTimeField()
    deliveryWindowEnd = ZoneTimeField()
    driver = OrderDriverOutput(allow_null=True)
    trackingToken = serializers.CharField(source="tracking_token")
    releasedAt = serializers.DateTimeField(source="released_at", allow_null=True)
    createdAt = serializers.DateTimeField(source="created_at")
    updatedAt = serializers.DateTimeField(source="updated_at")

    def get_mapping_status(self, order) -> str:
        return current_mapping_status(order.status)

    def to_representation(self, instance):
        data = super().to_representation(instance)
        for field in (
            "packageSize",
            "temperatureClass",
            "deliveryMethod",
            "expectedBarcode",
        ):
            data[field] = data[field] or None
        return data


class ManagedOrderDetailOutput(ManagedOrderOutput):
    statusHistory = OrderStatusEventOutput(source="status_events", many=True)


class OrderPageOutput(serializers.Serializer):
    items = ManagedOrderOutput(many=True)
    page = serializers.IntegerField()
    pageSize = serializers.IntegerField(source="page_size")
    total = serializers.IntegerField()


class OrderSimulationInput(serializers.Serializer):
    """The sandbox request (docs/webhooks.md "Sandbox")."""

    outcome = serializers.ChoiceField(
        choices=sandbox.OUTCOMES,
        error_messages={
            "required": "outcome is required",
            "null": "outcome is required",
            "invalid_choice": f"outcome must be one of: {', '.join(sandbox.OUTCOMES)}",
        },
    )
    stepSeconds = StrictIntegerField(
        min_value=sandbox.MIN_STEP_SECONDS,
        max_value=sandbox.MAX_STEP_SECONDS,
        required=False,
        default=sandbox.DEFAULT_STEP_SECONDS,
        help_text="Seconds between two statuses (default 5)",
    )


class OrderSimulationOutput(serializers.Serializer):
    orderId = serializers.UUIDField(source="order.id")
    externalRef = serializers.CharField(source="order.external_ref")
    status = serializers.CharField(source="order.status", help_text="The status it starts from")
    outcome = serializers.CharField()
    stepSeconds = serializers.IntegerField(source="step_seconds")
    steps = serializers.ListField(
        child=serializers.CharField(), help_text="The statuses it will enter, in order"
    )
    driverId = serializers.UUIDField(source="driver.id")
