"""The tracking API's answer (contract "Tracking"): exactly these fields, nothing private."""

from rest_framework import serializers

from tracking.presentation import driver_first_name


class TrackingEventOutput(serializers.Serializer):
    status = serializers.CharField(source="to_status")
    at = serializers.DateTimeField()


class TrackingDriverOutput(serializers.Serializer):
    name = serializers.SerializerMethodField(help_text="The driver's first name only")

    def get_name(self, driver) -> str:
        return driver_first_name(driver.name)


class TrackingOutput(serializers.Serializer):
    trackingToken = serializers.CharField(source="tracking_token")
    status = serializers.CharField()
    deliveryWindowStart = serializers.DateTimeField(source="delivery_window_start", allow_null=True)
    deliveryWindowEnd = serializers.DateTimeField(source="delivery_window_end", allow_null=True)
    driver = TrackingDriverOutput(allow_null=True, help_text="null until a driver is assigned")
    events = TrackingEventOutput(
        source="status_events.all", many=True, help_text="Oldest first, creation first"
    )
    updatedAt = serializers.DateTimeField(source="updated_at")
