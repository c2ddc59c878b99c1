"""Input and output shapes of the partner family (`/integrations/partner-a/*` and its partner-b/c
twins; contract "Orders").

Every validation message names its field (contract "Errors"): `externalRef required`,
`recipientPhone must be a phone number ...`, `dropoffLat/dropoffLng required unless
geocodeOnIngest is true` (contract "Errors"). The fields come from the ground floor
(delivery.fields); each takes the model's attribute as its `source` (snake_source).
"""

from decimal import Decimal

from rest_framework import serializers

from delivery.fields import (
    CoordinateField,
    DateTimeTextField,
    NamedTextField,
    PhoneField,
    StrictBooleanField,
    StrictFloatField,
    TextChoiceField,
    date_message,
    field_messages,
    parse_date,
    state_constraints,
)
from delivery.serializers import CrossFieldSerializer, OutputSerializer, snake_source
from integrations.models import DeliveryMethod, PackageSize, ServiceType, TemperatureClass
from integrations.serializers import (
    ExternalRefField,
    OrderDriverOutput,
    TrackingUrlField,
    ZoneTimeField,
    current_mapping_status,
)

MAX_WEIGHT_KG = 100_000
MAX_COD_AMOUNT = Decimal("9999999999.99")


def text(field: str, max_length: int, *, required: bool = True) -> NamedTextField:
    """A JSON string of at most `max_length` characters, trimmed."""
    return NamedTextField(field, max_length, required=required, **snake_source(field))


def coordinate(field: str, bound: int) -> CoordinateField:
    """An optional coordinate: absent ones are geocoded (contract "Orders")."""
    return CoordinateField(field, bound, required=False, **snake_source(field))


def choice(field: str, choices: list[str]) -> TextChoiceField:
    return TextChoiceField(field, choices, **snake_source(field))


class DecimalNumberField(StrictFloatField):
    """A JSON number read as the Decimal of its shortest form, within bounds and places."""

    def __init__(self, field: str, *, minimum, maximum, places: int, exclusive_min: bool):
        self.field_label = field
        self.minimum = Decimal(str(minimum))
        self.maximum = Decimal(str(maximum))
        self.places = places
        self.exclusive_min = exclusive_min
        super().__init__(
            **snake_source(field),
            required=False,
            allow_null=True,
            error_messages=field_messages(field, invalid=f"{field} must be a number"),
        )
        state_constraints(
            self,
            minimum=float(minimum),
            maximum=float(maximum),
            multipleOf=float(Decimal(1).scaleb(-places)),
            **({"exclusiveMinimum": True} if exclusive_min else {}),
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


def window_bound(field: str) -> DateTimeTextField:
    """An ISO 8601 date-time; one without an offset is kept naive (read in zone time later)."""
    return DateTimeTextField(field, required=False, allow_null=True, **snake_source(field))


class PartnerOrderInput(CrossFieldSerializer):
    """`POST /integrations/partner-a/orders` (contract "Orders")."""

    externalRef = ExternalRefField(source="external_ref")
    pickupAddress = text("pickupAddress", 500)
    pickupLat = coordinate("pickupLat", 90)
    pickupLng = coordinate("pickupLng", 180)
    dropoffAddress = text("dropoffAddress", 500)
    dropoffLat = coordinate("dropoffLat", 90)
    dropoffLng = coordinate("dropoffLng", 180)
    recipientName = text("recipientName", 200)
    recipientPhone = PhoneField("recipientPhone", source="recipient_phone")
    packageSize = choice("packageSize", PackageSize.values)
    weightKg = DecimalNumberField(
        "weightKg", minimum=0, maximum=MAX_WEIGHT_KG, places=3, exclusive_min=True
    )
    temperatureClass = choice("temperatureClass", TemperatureClass.values)
    deliveryMethod = choice("deliveryMethod", DeliveryMethod.values)
    deliveryZone = text("deliveryZone", 200, required=False)
    geocodeOnIngest = StrictBooleanField(
        source="geocode_on_ingest",
        required=False,
        allow_null=True,
        error_messages={"invalid": "geocodeOnIngest must be a boolean"},
    )
    notes = text("notes", 2000, required=False)
    deliveryWindowStart = window_bound("deliveryWindowStart")
    deliveryWindowEnd = window_bound("deliveryWindowEnd")
    codAmount = DecimalNumberField(
        "codAmount", minimum=0, maximum=MAX_COD_AMOUNT, places=2, exclusive_min=False
    )
    expectedBarcode = text("expectedBarcode", 200, required=False)
    serviceType = choice("serviceType", ServiceType.values)

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


class PartnerOrderCreatedOutput(OutputSerializer):
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
    trackingUrl = TrackingUrlField()
    createdAt = serializers.DateTimeField(source="created_at")
    updatedAt = serializers.DateTimeField(source="updated_at")

    def to_representation(self, instance):
        data = super().to_representation(instance)
        data["packageSize"] = data["packageSize"] or None
        return data


class PartnerOrderOutput(OutputSerializer):
    """The partner order (contract "Orders"), as read, cancelled."""

    externalRef = serializers.CharField(source="external_ref")
    serviceOrderId = serializers.UUIDField(source="id")
    status = serializers.CharField()
    driver = OrderDriverOutput(allow_null=True)
    #: contract "Dispatch": the expected arrival, null until assigned
    eta = ZoneTimeField()
    #: contract "Couriers": the delivery attempt, from 1 (a re-attempt adds one)
    attempt = serializers.IntegerField()
    deliveryWindowStart = ZoneTimeField()
    deliveryWindowEnd = ZoneTimeField()
    trackingToken = serializers.CharField(source="tracking_token")
    trackingUrl = TrackingUrlField()
    currentMappingStatus = serializers.SerializerMethodField(method_name="get_mapping_status")

    def get_mapping_status(self, order) -> str:
        return current_mapping_status(order.status)


class PartnerOrderReleasedOutput(OutputSerializer):
    """contract "Orders": the release response."""

    externalRef = serializers.CharField(source="external_ref")
    serviceOrderId = serializers.UUIDField(source="id")
    status = serializers.CharField()
    currentMappingStatus = serializers.SerializerMethodField(method_name="get_mapping_status")
    releasedAt = serializers.DateTimeField(source="released_at")

    def get_mapping_status(self, order) -> str:
        return current_mapping_status(order.status)


class CancelInput(serializers.Serializer):
    reason = NamedTextField("reason", 500, required=False)


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
