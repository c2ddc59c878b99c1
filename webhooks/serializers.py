"""Input and output shapes of the webhook-delivery management API (contract "Webhooks", "Management
API")."""

from datetime import UTC

from rest_framework import serializers

from delivery.fields import (
    DateTimeTextField,
    StrictCharField,
    choice_field,
    page_field,
    page_size_field,
)
from delivery.serializers import page_output
from webhooks.models import DeliveryStatus

MAX_PAGE_SIZE = 100
DEFAULT_PAGE_SIZE = 50


class DeliveryListInput(serializers.Serializer):
    status = choice_field("status", DeliveryStatus.values, required=False)
    page = page_field()
    pageSize = page_size_field(maximum=MAX_PAGE_SIZE, default=DEFAULT_PAGE_SIZE)


class DeliveryOutput(serializers.Serializer):
    id = serializers.UUIDField()
    eventId = serializers.CharField(source="event.event_id")
    event = serializers.CharField(source="event.name")
    url = serializers.CharField()
    status = serializers.CharField()
    attempts = serializers.IntegerField()
    lastStatusCode = serializers.IntegerField(source="last_status_code", allow_null=True)
    lastError = serializers.SerializerMethodField(method_name="get_last_error")
    nextAttemptAt = serializers.DateTimeField(source="next_attempt_at", allow_null=True)
    deliveredAt = serializers.DateTimeField(source="delivered_at", allow_null=True)
    createdAt = serializers.DateTimeField(source="created_at")

    def get_last_error(self, delivery) -> str | None:
        return delivery.last_error or None


# A page of webhook deliveries (no docstring: it would become the schema's description).
class DeliveryPageOutput(page_output(DeliveryOutput)):
    pass


class TestWebhookOutput(serializers.Serializer):
    delivered = serializers.BooleanField()
    statusCode = serializers.IntegerField(source="status_code", allow_null=True)
    latencyMs = serializers.IntegerField(source="latency_ms")
    error = serializers.CharField(allow_null=True)


class _InstantField(DateTimeTextField):
    """An ISO 8601 date-time within the service's calendar (delivery.fields); without an offset
    it is read as UTC."""

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


class RecoverInput(serializers.Serializer):
    since = _InstantField(
        "since",
        error_messages={"required": "since is required", "null": "since is required"},
    )
    until = _InstantField("until", required=False, allow_null=True)
    keyId = StrictCharField(max_length=64, required=False, allow_null=True)

    def validate(self, attrs):
        until = attrs.get("until")
        if until is not None and until <= attrs["since"]:
            raise serializers.ValidationError({"until": "until must be after since"})
        return attrs


class RecoverOutput(serializers.Serializer):
    queued = serializers.IntegerField()
