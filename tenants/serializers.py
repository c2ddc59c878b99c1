"""API key input and output shapes, shared by provisioning and the management API."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from delivery import webhook_events as catalog
from delivery.fields import (
    BoundedIntegerField,
    PhoneField,
    StrictBooleanField,
    StrictCharField,
    declare,
    one_of_message,
    required_messages,
    state_constraints,
)
from tenants.models import Platform
from tenants.services import (
    WEBHOOK_SECRET_OVERLAP_DEFAULT_HOURS,
    WEBHOOK_SECRET_OVERLAP_MAX_HOURS,
)

PLATFORM_MESSAGE = one_of_message("platform", Platform.values)


class PlatformField(StrictCharField):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        state_constraints(self, enum=list(Platform.values))

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if value not in Platform.values:
            raise serializers.ValidationError(PLATFORM_MESSAGE)
        return value


@extend_schema_field(
    {
        "type": "array",
        "nullable": True,
        "items": {"type": "string", "enum": list(catalog.SUBSCRIBABLE_EVENTS)},
        "description": "The events this key's webhookUrl receives; null or absent: every event.",
    }
)
class WebhookEventsField(serializers.Field):
    """`webhookEvents`: an array of event names of the catalogue, or null for every event."""

    default_error_messages = {"invalid": "webhookEvents must be an array of event names or null"}

    def __init__(self, **kwargs):
        super().__init__(required=False, allow_null=True, **kwargs)

    def to_internal_value(self, data):
        if not isinstance(data, list) or not all(isinstance(name, str) for name in data):
            self.fail("invalid")
        problems = catalog.webhook_events_problems(data)
        if problems:
            raise serializers.ValidationError(problems)
        return catalog.webhook_events_normalize(data)

    def to_representation(self, value):
        return None if value is None else list(value)


#: What delivery.netguard takes as a URL, as a pattern: absolute http(s), no control character
#: or space anywhere, a host that is not only dots, no user information, a port from 1 to 65535
_URL_HOST = r"[^\x00-\x20\x7f/?#@:\[\]\\]"
_URL_HOST_NOT_DOT = r"[^\x00-\x20\x7f/?#@:\[\]\\.]"
_URL_PORT = (
    r"(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])"
)
WEBHOOK_URL_PATTERN = (
    rf"^(?:[Hh][Tt][Tt][Pp][Ss]?://{_URL_HOST}*{_URL_HOST_NOT_DOT}{_URL_HOST}*"
    rf"(?::{_URL_PORT})?(?:[/?#][^\x00-\x20\x7f]*)?)?$"
)


def webhook_url_field() -> StrictCharField:
    """`webhookUrl`: an absolute http(s) URL, blank or null for none. Its host must also resolve
    to public addresses, which no schema can state (docs/contract.md "Rules OpenAPI cannot
    state")."""
    field = StrictCharField(max_length=2000, required=False, allow_blank=True, allow_null=True)
    return declare(field, pattern=WEBHOOK_URL_PATTERN)


class ApiKeyCreateInput(serializers.Serializer):
    name = StrictCharField(
        max_length=200,
        error_messages=required_messages("API key name is required"),
    )
    platform = PlatformField(required=False)
    test = StrictBooleanField(required=False, help_text="A sandbox key (fixed at creation)")
    webhookUrl = webhook_url_field()
    webhookEvents = WebhookEventsField()

    def service_arguments(self) -> dict:
        """validated_data as `tenants.services.api_key_create` takes it, for the management and
        the provisioning API alike (absent platform: standard; null webhookUrl: none)."""
        data = self.validated_data
        return {
            "name": data["name"],
            "platform": data.get("platform") or "standard",
            "webhook_url": data.get("webhookUrl") or "",
            "test": data.get("test", False),
            "webhook_events": data.get("webhookEvents"),
        }


class ApiKeyUpdateInput(serializers.Serializer):
    name = StrictCharField(
        max_length=200, required=False, error_messages={"blank": "API key name must not be empty"}
    )
    platform = PlatformField(required=False)
    webhookUrl = webhook_url_field()
    webhookEvents = WebhookEventsField()

    def service_arguments(self) -> dict:
        """validated_data as `tenants.services.api_key_update` takes it: None leaves a field as
        it is, a null webhookUrl clears it, and an absent webhookEvents (unlike null: every
        event) is not passed, so the filter stays."""
        data = self.validated_data
        arguments = {
            "name": data.get("name"),
            "platform": data.get("platform"),
            "webhook_url": (data.get("webhookUrl") or "") if "webhookUrl" in data else None,
        }
        if "webhookEvents" in data:
            arguments["webhook_events"] = data["webhookEvents"]
        return arguments


class _WebhookUrlField(serializers.CharField):
    def __init__(self, **kwargs):
        super().__init__(allow_null=True, **kwargs)

    def to_representation(self, value):
        return value or None


class ApiKeyListOutput(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    apiKey = serializers.CharField(source="masked_value")
    platform = serializers.CharField()
    test = serializers.BooleanField()
    webhookUrl = _WebhookUrlField(source="webhook_url")
    webhookEvents = WebhookEventsField(source="webhook_events")
    isActive = serializers.BooleanField(source="is_active")
    createdAt = serializers.DateTimeField(source="created_at")
    lastUsedAt = serializers.DateTimeField(source="last_used_at", allow_null=True)


class ApiKeyIssuedOutput(serializers.Serializer):
    """Create and rotate: the only two answers that carry the full value and webhook secret."""

    id = serializers.UUIDField(source="api_key.id")
    name = serializers.CharField(source="api_key.name")
    apiKey = serializers.CharField(source="value")
    webhookSecret = serializers.CharField(source="webhook_secret")
    platform = serializers.CharField(source="api_key.platform")
    test = serializers.BooleanField(source="api_key.test")
    webhookUrl = _WebhookUrlField(source="api_key.webhook_url")
    webhookEvents = WebhookEventsField(source="api_key.webhook_events")
    isActive = serializers.BooleanField(source="api_key.is_active")
    createdAt = serializers.DateTimeField(source="api_key.created_at")


class ApiKeyRotatedOutput(ApiKeyIssuedOutput):
    rotatedAt = serializers.DateTimeField(source="api_key.rotated_at")


class WebhookSecretRollInput(serializers.Serializer):
    """`POST .../api-keys/:keyId/webhook-secret/roll` (docs/webhooks.md "Rolling the secret")."""

    overlapHours = BoundedIntegerField(
        min_value=0,
        max_value=WEBHOOK_SECRET_OVERLAP_MAX_HOURS,
        required=False,
        default=WEBHOOK_SECRET_OVERLAP_DEFAULT_HOURS,
        error_messages={"null": "must be an integer"},
        help_text="Hours the replaced secret keeps signing beside the new one (0 to 168, "
        "default 24; 0 switches at once)",
    )


class WebhookSecretRolledOutput(ApiKeyListOutput):
    """The key as the list shows it, with the new secret (shown only here) and the end of the
    overlap."""

    webhookSecret = serializers.CharField(
        help_text="The new secret (`whsec_...`), shown only in this answer"
    )
    previousSecretExpiresAt = serializers.DateTimeField(
        allow_null=True,
        help_text="Until when the replaced secret still signs beside the new one; null when "
        "overlapHours was 0",
    )

    def to_representation(self, instance):
        expires_at = instance.previous_expires_at
        return {
            **ApiKeyListOutput(instance.api_key).data,
            "webhookSecret": instance.webhook_secret,
            "previousSecretExpiresAt": (
                None
                if expires_at is None
                else serializers.DateTimeField().to_representation(expires_at)
            ),
        }


class ApiKeyRevokedOutput(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    isActive = serializers.BooleanField(source="is_active")
    revokedAt = serializers.DateTimeField(source="revoked_at")


class DriverInput(serializers.Serializer):
    name = StrictCharField(max_length=200, error_messages={"required": "name is required"})
    phone = PhoneField(required=False, allow_blank=True)
    vehicleType = StrictCharField(
        max_length=40, required=False, allow_blank=True, source="vehicle_type"
    )
    isActive = StrictBooleanField(required=False, source="is_active")


class DriverOutput(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    phone = serializers.CharField()
    vehicleType = serializers.CharField(source="vehicle_type")
    isActive = serializers.BooleanField(source="is_active")
