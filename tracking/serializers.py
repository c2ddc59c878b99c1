"""The tracking API's answer (contract "Tracking"): exactly these fields, nothing private."""

from datetime import datetime

from drf_spectacular.utils import extend_schema_field, inline_serializer
from rest_framework import serializers

from tracking.presentation import driver_first_name
from tracking.selectors import TrackingProgress

_INSTANT = serializers.DateTimeField()


def _instant(value: datetime | None) -> str | None:
    return _INSTANT.to_representation(value) if value is not None else None


# `from` is a Python keyword, so the window's shape is declared with a mapping (schema only).
_ETA_WINDOW = inline_serializer(
    "TrackingEtaWindow",
    fields={"from": serializers.DateTimeField(), "to": serializers.DateTimeField()},
    allow_null=True,
)


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
    #: contract "Tracking": from `tracking.selectors.tracking_progress`, passed as `progress`
    eta = serializers.SerializerMethodField(
        help_text="The expected arrival rounded to 5 minutes, while assigned, picked up or in "
        "transit; else null"
    )
    etaWindow = serializers.SerializerMethodField(
        method_name="get_eta_window",
        help_text="10 minutes either side of eta, {from, to}; null without an eta",
    )
    stopsBefore = serializers.SerializerMethodField(
        method_name="get_stops_before",
        help_text="Stops of the route still ahead of this one, while in transit; else null",
    )
    deliveredAt = serializers.SerializerMethodField(
        method_name="get_delivered_at", help_text="When delivered; else null"
    )

    def _progress(self) -> TrackingProgress:
        return self.context["progress"]

    @extend_schema_field(serializers.DateTimeField(allow_null=True))
    def get_eta(self, order) -> str | None:
        return _instant(self._progress().eta)

    @extend_schema_field(_ETA_WINDOW)
    def get_eta_window(self, order) -> dict | None:
        progress = self._progress()
        if progress.eta is None:
            return None
        return {"from": _instant(progress.eta_from), "to": _instant(progress.eta_to)}

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_stops_before(self, order) -> int | None:
        return self._progress().stops_before

    @extend_schema_field(serializers.DateTimeField(allow_null=True))
    def get_delivered_at(self, order) -> str | None:
        return _instant(self._progress().delivered_at)
