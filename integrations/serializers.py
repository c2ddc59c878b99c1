"""Shapes shared by the order families (partner in integrations/partner/, ERP in
integrations/erp/) and the orders management API: the `externalRef` field, an order's window in
its zone's time, its driver, its partner-facing status (contract "Orders", "Management API").

Every validation message names its field (contract "Errors"): `externalRef required`, `status
must be one of: ...`.
"""

from django.conf import settings
from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from delivery.fields import (
    BoundedIntegerField,
    DateTextField,
    NamedTextField,
    StrictCharField,
    choice_field,
    field_messages,
    page_field,
    page_size_field,
    state_constraints,
)
from delivery.serializers import page_output, snake_case
from integrations import external_refs, windows
from integrations.models import FailureReason, Order, OrderStatus
from integrations.services import sandbox

MAX_PAGE_SIZE = 100
DEFAULT_PAGE_SIZE = 50

#: contract "Orders": the partner-facing status
MAPPING_STATUS = {OrderStatus.PENDING: "created", OrderStatus.DISPATCHING: "released"}


def current_mapping_status(status: str) -> str:
    return MAPPING_STATUS.get(status, status)


class ExternalRefField(NamedTextField):
    """`externalRef`: text the order's paths can carry and give back (integrations.external_refs,
    contract "Orders")."""

    def __init__(self, **kwargs):
        super().__init__("externalRef", external_refs.MAX_LENGTH, **kwargs)
        state_constraints(self, pattern=external_refs.PATTERN)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        problem = external_refs.external_ref_problem(value)
        if problem:
            raise serializers.ValidationError(problem)
        return value


def _zone_tz(order: Order):
    return windows.zone_tz(order.zone.timezone) if order.zone_id else windows.zone_tz("UTC")


@extend_schema_field({"type": "string", "format": "date-time", "nullable": True})
class ZoneTimeField(serializers.Field):
    """A window bound in the order's zone timezone, with its offset (`+02:00`); null without one."""

    def __init__(self, **kwargs):
        super().__init__(source="*", read_only=True, **kwargs)

    def bind(self, field_name, parent):
        super().bind(field_name, parent)
        self.attribute_name = snake_case(field_name)

    def to_representation(self, order):
        value = getattr(order, self.attribute_name)
        return value.astimezone(_zone_tz(order)).isoformat() if value else None


def tracking_url(*, token: str, request) -> str:
    """The public tracking page of the order with `token` (`/track/<token>`), under
    TRACKING_BASE_URL, or when that is empty under the request's own scheme and host (contract
    "Orders"). Built from the order row alone: no query."""
    path = reverse("tracking-page", kwargs={"token": token})
    base = settings.TRACKING_BASE_URL.rstrip("/")
    if base:
        return f"{base}{path}"
    return request.build_absolute_uri(path)


@extend_schema_field(
    {
        "type": "string",
        "format": "uri",
        "description": "The order's public tracking page (`<TRACKING_BASE_URL or this "
        "service's address>/track/<trackingToken>`)",
        "example": "https://delivery.example/track/q9V3yJdM2sXk0bH7LwPz1aRt4nEe6uFc",
    }
)
class TrackingUrlField(serializers.Field):
    """`trackingUrl`, from the order's tracking token and the answer's request (context)."""

    def __init__(self, **kwargs):
        super().__init__(source="tracking_token", read_only=True, **kwargs)

    def to_representation(self, value):
        return tracking_url(token=value, request=self.context["request"])


class OrderDriverOutput(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    phone = serializers.CharField()


# ----- management API -----


class OrderListQuery(serializers.Serializer):
    status = choice_field("status", OrderStatus.values, required=False)
    date = DateTextField("date", required=False)
    zoneId = serializers.UUIDField(
        required=False, error_messages={"invalid": "zoneId must be a UUID"}
    )
    page = page_field()
    pageSize = page_size_field(maximum=MAX_PAGE_SIZE, default=DEFAULT_PAGE_SIZE)


class OrderTransitionInput(serializers.Serializer):
    status = choice_field("status", OrderStatus.values, missing="status required")
    driverId = StrictCharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        max_length=64,
        error_messages=field_messages("driverId"),
    )
    reason = NamedTextField("reason", 500, required=False)
    failureReason = choice_field(
        "failureReason", FailureReason.values, required=False, allow_blank=True
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
    #: why it failed (null unless `failed`; docs/contract.md "Couriers")
    failureReason = serializers.SerializerMethodField(method_name="get_failure_reason")
    #: the delivery attempt, from 1 (docs/contract.md "Couriers", "Re-attempts")
    attempt = serializers.IntegerField()
    statusHistory = OrderStatusEventOutput(source="status_events", many=True)

    def get_failure_reason(self, order) -> str | None:
        return order.failure_reason or None


# A page of the organization's orders (no docstring: it would become the schema's description).
class OrderPageOutput(page_output(ManagedOrderOutput)):
    pass


class OrderSimulationInput(serializers.Serializer):
    """The sandbox request (docs/webhooks.md "Sandbox")."""

    outcome = choice_field("outcome", sandbox.OUTCOMES, missing="outcome is required")
    stepSeconds = BoundedIntegerField(
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
