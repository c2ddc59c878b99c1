"""Delivery records in Django admin: read-only, attempts inline, a redeliver action (contract
"Webhooks", "Management API")."""

from django.contrib import admin, messages

from tenants.admin import ApiKeyAdmin
from tenants.admin_display import shortened, time_field
from tenants.admin_scoping import OrganizationScopedAdmin, ReadOnlyAdminMixin
from webhooks import probes, services
from webhooks.models import Delivery, DeliveryAttempt, Event


class DeliveryAttemptInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = DeliveryAttempt
    extra = 0
    fields = ("number", "started", "status_code", "latency_ms", "succeeded", "error")
    readonly_fields = fields
    ordering = ("-number", "-id")
    started = time_field("started_at", "Started")

    def has_view_permission(self, request, obj=None) -> bool:
        # Whoever may see the delivery (DeliveryAdmin's scoping) may see its attempts; without
        # this an organization admin (no model permissions) saw none of them.
        return True


@admin.register(Delivery)
class DeliveryAdmin(ReadOnlyAdminMixin, OrganizationScopedAdmin):
    list_display = (
        "event_name",
        "receiver",
        "status",
        "attempts",
        "last_status",
        "next_attempt",
        "created",
    )
    list_filter = ("status",)
    list_select_related = ("event",)
    search_fields = ("event__event_id", "url")
    ordering = ("-created_at", "-id")
    fields = (
        "organization",
        "event",
        "event_payload",
        "url",
        "status",
        "attempts",
        "last_status_code",
        "last_error",
        "next_attempt",
        "delivered",
        "created",
    )
    readonly_fields = fields
    inlines = (DeliveryAttemptInline,)
    actions = ("redeliver", "recover")
    next_attempt = time_field("next_attempt_at", "Next attempt")
    delivered = time_field("delivered_at", "Delivered")
    created = time_field("created_at", "Created")

    @admin.display(description="Last status", ordering="last_status_code")
    def last_status(self, delivery: Delivery):
        return delivery.last_status_code

    @admin.display(description="URL", ordering="url")
    def receiver(self, delivery: Delivery):
        return shortened(delivery.url, 40)

    @admin.display(description="event")
    def event_name(self, delivery: Delivery) -> str:
        return delivery.event.name

    @admin.display(description="event id")
    def event_id(self, delivery: Delivery) -> str:
        return delivery.event.event_id

    @admin.display(description="payload")
    def event_payload(self, delivery: Delivery):
        return delivery.event.payload

    def has_view_permission(self, request, obj=None) -> bool:
        return self._allowed(request, obj)

    @admin.action(description="Redeliver selected deliveries (new round of attempts)")
    def redeliver(self, request, queryset):
        count = 0
        for delivery in queryset:
            services.delivery_redeliver(delivery=delivery)
            count += 1
        self.message_user(request, f"Queued {count} delivery(ies) again.")

    @admin.action(description="Recover selected failed deliveries (oldest first, each once)")
    def recover(self, request, queryset):
        queued = 0
        # One call per organization: a superuser's selection may span several.
        for organization_id in set(queryset.values_list("organization_id", flat=True)):
            queued += services.deliveries_recover(
                organization_id=organization_id,
                delivery_ids=queryset.filter(organization_id=organization_id).values_list(
                    "id", flat=True
                ),
            )
        self.message_user(request, f"Queued {queued} failed delivery(ies) again, oldest first.")


@admin.register(Event)
class EventAdmin(ReadOnlyAdminMixin, OrganizationScopedAdmin):
    list_display = ("name", "event_id", "family", "created", "organization")
    list_filter = ("family", "name")
    search_fields = ("event_id",)
    ordering = ("-created_at", "-id")
    fields = ("organization", "family", "name", "event_id", "payload", "created", "updated")
    readonly_fields = fields
    created = time_field("created_at", "Created")
    updated = time_field("updated_at", "Updated")

    def has_view_permission(self, request, obj=None) -> bool:
        return self._allowed(request, obj)


@admin.action(description="Send a test webhook to selected keys (webhook.test, at once)")
def send_test_webhook(modeladmin, request, queryset):
    for api_key in queryset:
        if not api_key.is_active or not api_key.webhook_url:
            reason = "is revoked" if not api_key.is_active else "has no webhook URL"
            modeladmin.message_user(
                request, f"Key {api_key.name}: {reason}, nothing sent.", level=messages.ERROR
            )
            continue
        result = probes.api_key_webhook_test(api_key=api_key)
        if result.delivered:
            modeladmin.message_user(
                request,
                f"Key {api_key.name}: delivered to {api_key.webhook_url} "
                f"(HTTP {result.status_code}, {result.latency_ms} ms).",
            )
        else:
            modeladmin.message_user(
                request,
                f"Key {api_key.name}: not delivered to {api_key.webhook_url} ({result.error}).",
                level=messages.ERROR,
            )


# The keys' admin lives in tenants, which may not import webhooks: the action joins it from here
# (admin autodiscovery imports tenants.admin first, INSTALLED_APPS order).
ApiKeyAdmin.actions = (*ApiKeyAdmin.actions, send_test_webhook)
