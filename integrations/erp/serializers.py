"""Input and output shapes of the ERP family (contract "Orders"; contract "Orders").

Every validation message names its field, as the partner family's do (`externalRef required`).
"""

from datetime import datetime

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from delivery.fields import (
    BoundedIntegerField,
    CoordinateField,
    DateTextField,
    NamedTextField,
    PhoneField,
    TextChoiceField,
)
from delivery.serializers import CrossFieldSerializer, OutputSerializer
from integrations.models import Order, PackageSize
from integrations.serializers import ExternalRefField, TrackingUrlField
from slots.models import SlotBooking
from slots.occurrences import zone_tz
from slots.services.holds import HOLD_TTL_DEFAULT_SECONDS, HOLD_TTL_MAX_SECONDS

_TIMESTAMP = serializers.DateTimeField()


@extend_schema_field(OpenApiTypes.NUMBER)
class _Coordinate(CoordinateField):
    """The ground floor's coordinate; the ERP schema has always documented it as a plain number
    (no `double` format), and the published schema stays as it is."""


def _pair_problems(attrs: dict, failed: set[str], prefix: str) -> list[str]:
    """Optional coordinates come as a pair or not at all."""
    names = (f"{prefix}Lat", f"{prefix}Lng")
    if failed & set(names):
        return []
    given = [name for name in names if attrs.get(name) is not None]
    return [f"{names[0]} and {names[1]} must be given together"] if len(given) == 1 else []


class ErpOrderInput(CrossFieldSerializer):
    """`POST /integrations/erp/orders` (contract "Orders": the required fields; pickup optional)."""

    externalRef = ExternalRefField()
    pickupAddress = NamedTextField("pickupAddress", 500, required=False)
    pickupLat = _Coordinate("pickupLat", 90, required=False)
    pickupLng = _Coordinate("pickupLng", 180, required=False)
    dropoffAddress = NamedTextField("dropoffAddress", 500)
    dropoffLat = _Coordinate("dropoffLat", 90)
    dropoffLng = _Coordinate("dropoffLng", 180)
    recipientName = NamedTextField("recipientName", 200)
    recipientPhone = PhoneField("recipientPhone")
    packageSize = TextChoiceField(
        "packageSize", PackageSize.values, max_length=10, allow_blank=True
    )
    deliverySlotTemplateId = NamedTextField("deliverySlotTemplateId", 100)
    deliverySlotDate = DateTextField("deliverySlotDate")
    holdId = NamedTextField("holdId", 100, required=False)

    def cross_field_problems(self, attrs, failed):
        return _pair_problems(attrs, failed, "pickup")

    def service_arguments(self) -> dict:
        data = self.validated_data
        return {
            "external_ref": data["externalRef"],
            "slot_template_id": data["deliverySlotTemplateId"],
            "slot_date": data["deliverySlotDate"],
            "dropoff_address": data["dropoffAddress"],
            "dropoff_lat": data["dropoffLat"],
            "dropoff_lng": data["dropoffLng"],
            "recipient_name": data["recipientName"],
            "recipient_phone": data["recipientPhone"],
            "pickup_address": data.get("pickupAddress") or None,
            "pickup_lat": data.get("pickupLat"),
            "pickup_lng": data.get("pickupLng"),
            "package_size": data.get("packageSize") or "",
            "hold_id": data.get("holdId") or None,
        }


class ErpSlotAssignInput(CrossFieldSerializer):
    """`PUT /integrations/erp/orders/:externalRef/delivery-slot`."""

    deliverySlotTemplateId = NamedTextField("deliverySlotTemplateId", 100)
    deliverySlotDate = DateTextField("deliverySlotDate")
    dropoffLat = _Coordinate("dropoffLat", 90, required=False)
    dropoffLng = _Coordinate("dropoffLng", 180, required=False)

    def cross_field_problems(self, attrs, failed):
        return _pair_problems(attrs, failed, "dropoff")

    def service_arguments(self) -> dict:
        data = self.validated_data
        return {
            "slot_template_id": data["deliverySlotTemplateId"],
            "slot_date": data["deliverySlotDate"],
            "dropoff_lat": data.get("dropoffLat"),
            "dropoff_lng": data.get("dropoffLng"),
        }


class SlotHoldInput(serializers.Serializer):
    """`POST /integrations/erp/slot-holds` (docs/slot-holds.md)."""

    deliverySlotTemplateId = NamedTextField("deliverySlotTemplateId", 100)
    deliverySlotDate = DateTextField("deliverySlotDate")
    dropoffLat = _Coordinate("dropoffLat", 90)
    dropoffLng = _Coordinate("dropoffLng", 180)
    ttlSeconds = BoundedIntegerField(min_value=1, max_value=HOLD_TTL_MAX_SECONDS, required=False)

    def service_arguments(self) -> dict:
        data = self.validated_data
        return {
            "slot_template_id": data["deliverySlotTemplateId"],
            "slot_date": data["deliverySlotDate"],
            "dropoff_lat": data["dropoffLat"],
            "dropoff_lng": data["dropoffLng"],
            "ttl_seconds": data.get("ttlSeconds", HOLD_TTL_DEFAULT_SECONDS),
        }


class SlotHoldOutput(serializers.Serializer):
    """The 201 of `POST /integrations/erp/slot-holds`: the window in the zone's time."""

    holdId = serializers.UUIDField()
    expiresAt = serializers.DateTimeField()
    deliveryWindowStart = serializers.CharField()
    deliveryWindowEnd = serializers.CharField()

    def to_representation(self, instance) -> dict:
        hold, slot, zone = instance
        tz = zone_tz(zone.timezone)
        return {
            "holdId": str(hold.id),
            "expiresAt": _TIMESTAMP.to_representation(hold.expires_at),
            "deliveryWindowStart": slot.window_start.astimezone(tz).isoformat(),
            "deliveryWindowEnd": slot.window_end.astimezone(tz).isoformat(),
        }


class ErpCancelInput(serializers.Serializer):
    reason = NamedTextField("reason", 500, required=False)


def _zone_time(order: Order, moment: datetime | None) -> str | None:
    """ISO 8601 with the offset of the order's zone (contract "Slots and windows")."""
    if moment is None:
        return None
    return moment.astimezone(zone_tz(order.zone.timezone if order.zone else "UTC")).isoformat()


def _booking_of(order: Order) -> SlotBooking | None:
    try:
        return order.slot_booking
    except SlotBooking.DoesNotExist:
        return None


class ErpOrderSlotOutput(OutputSerializer):
    """The PUT delivery-slot response."""

    id = serializers.UUIDField()
    deliverySlotTemplateId = serializers.UUIDField(allow_null=True)
    deliverySlotDate = serializers.DateField(allow_null=True)
    deliveryWindowStart = serializers.CharField(allow_null=True)
    deliveryWindowEnd = serializers.CharField(allow_null=True)

    def to_representation(self, instance: Order) -> dict:
        booking = _booking_of(instance)
        return {
            "id": str(instance.id),
            "deliverySlotTemplateId": str(booking.template_id) if booking else None,
            "deliverySlotDate": booking.date.isoformat() if booking else None,
            "deliveryWindowStart": _zone_time(instance, instance.delivery_window_start),
            "deliveryWindowEnd": _zone_time(instance, instance.delivery_window_end),
        }


class ErpOrderOutput(ErpOrderSlotOutput):
    """The contract's "ERP order"."""

    status = serializers.CharField()
    externalRef = serializers.CharField()
    assignmentZoneId = serializers.UUIDField(allow_null=True)
    #: contract "Dispatch": the expected arrival, null until assigned
    eta = serializers.CharField(allow_null=True)
    #: contract "Couriers": the delivery attempt, from 1 (a re-attempt adds one)
    attempt = serializers.IntegerField()
    trackingToken = serializers.CharField()
    trackingUrl = TrackingUrlField()
    createdAt = serializers.DateTimeField()

    def to_representation(self, instance: Order) -> dict:
        slot = super().to_representation(instance)
        return {
            "id": slot["id"],
            "status": instance.status,
            "externalRef": instance.external_ref,
            "deliverySlotTemplateId": slot["deliverySlotTemplateId"],
            "deliverySlotDate": slot["deliverySlotDate"],
            "deliveryWindowStart": slot["deliveryWindowStart"],
            "deliveryWindowEnd": slot["deliveryWindowEnd"],
            "assignmentZoneId": str(instance.zone_id) if instance.zone_id else None,
            "eta": _zone_time(instance, instance.eta),
            "attempt": instance.attempt,
            "trackingToken": instance.tracking_token,
            "trackingUrl": self.fields["trackingUrl"].to_representation(instance.tracking_token),
            "createdAt": _TIMESTAMP.to_representation(instance.created_at),
        }
