"""Input and output of the courier API and the proof reads (contract "Couriers")."""

from django.utils import timezone
from rest_framework import serializers

from delivery.fields import DateTextField
from delivery.serializers import OutputSerializer


class AccessTokenOutput(OutputSerializer):
    token = serializers.CharField(source="value")
    createdAt = serializers.DateTimeField(source="token.created_at")


class RouteQuery(serializers.Serializer):
    date = DateTextField("date", required=False)


class _ZoneTime(serializers.DateTimeField):
    """An instant in the route's zone time, with its offset."""

    def to_representation(self, value):
        if value is None:
            return None
        return super().to_representation(timezone.localtime(value, self.context["tz"]))


class RouteDriverOutput(OutputSerializer):
    id = serializers.UUIDField()
    name = serializers.CharField()


class RouteStopOutput(OutputSerializer):
    sequence = serializers.IntegerField()
    orderId = serializers.UUIDField(source="order_id")
    externalRef = serializers.CharField(source="order.external_ref")
    status = serializers.CharField(source="order.status")
    eta = _ZoneTime()
    windowStart = _ZoneTime(source="window_start")
    windowEnd = _ZoneTime(source="window_end")
    kind = serializers.CharField()
    address = serializers.CharField(source="order.dropoff_address")
    lat = serializers.FloatField()
    lng = serializers.FloatField()
    recipientName = serializers.CharField(source="order.recipient_name")
    recipientPhone = serializers.CharField(source="order.recipient_phone")
    notes = serializers.CharField(source="order.notes")
    packageSize = serializers.CharField(source="order.package_size", allow_null=True)
    codAmount = serializers.FloatField(source="order.cod_amount", allow_null=True)
    expectedBarcode = serializers.SerializerMethodField(method_name="get_expected_barcode")
    serviceType = serializers.CharField(source="order.service_type")

    def get_expected_barcode(self, stop) -> str | None:
        return stop.order.expected_barcode or None


class RouteOutput(OutputSerializer):
    date = serializers.DateField(source="day")
    driver = RouteDriverOutput()
    routeId = serializers.SerializerMethodField(method_name="get_route_id")
    stops = RouteStopOutput(many=True)

    def get_route_id(self, route) -> str | None:
        return str(route.route.id) if route.route is not None else None


class PhotoOutput(OutputSerializer):
    photoId = serializers.UUIDField(source="id")
