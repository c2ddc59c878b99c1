"""Django admin for tenants. Organization admins see only their organizations (contract "Management
API")."""

from django import forms
from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.db import models

from delivery import netguard
from delivery import webhook_events as catalog
from tenants import services
from tenants.admin_display import time_field
from tenants.admin_scoping import OrganizationScopedAdmin
from tenants.models import ApiKey, Driver, Membership, Organization, Platform, User


@admin.register(User)
class UserAdmin(DjangoUserAdmin):
    ordering = ("email",)
    list_display = ("email", "name", "is_active", "is_staff", "joined")
    joined = time_field("date_joined", "Date joined")
    search_fields = ("email", "name")
    fieldsets = (
        (None, {"fields": ("email", "password", "name")}),
        (
            "Permissions",
            {"fields": ("is_active", "is_staff", "is_superuser", "groups", "user_permissions")},
        ),
        ("Dates", {"fields": ("last_login", "date_joined")}),
    )
    add_fieldsets = (
        (None, {"classes": ("wide",), "fields": ("email", "name", "password1", "password2")}),
    )

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        field = super().formfield_for_dbfield(db_field, request, **kwargs)
        if isinstance(db_field, models.DateTimeField) and field is not None:
            field.help_text = "UTC"  # last login and date joined, tied to no zone
        return field

    def get_queryset(self, request):
        qs = super().get_queryset(request)
        user = request.user
        if (
            user.is_superuser
            or user.has_perm("tenants.view_user")
            or user.has_perm("tenants.change_user")
        ):
            return qs
        # An organization admin has no user permissions: for them no user exists, so every id
        # answers alike (the history page answered 403 for a real user, a redirect otherwise).
        return qs.none()


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ("user",)
    fields = ("user", "org_role", "is_active", "since")
    readonly_fields = ("since",)
    since = time_field("created_at", "Since")


@admin.register(Organization)
class OrganizationAdmin(OrganizationScopedAdmin):
    organization_lookup = "id"
    list_display = ("name", "slug", "is_active", "created")
    search_fields = ("name", "slug")
    inlines = (MembershipInline,)
    created = time_field("created_at", "Created")

    def get_fields(self, request, obj=None):
        return ("name", "slug", "is_active", "created")

    def get_readonly_fields(self, request, obj=None):
        if self._is_superuser(request):
            return ("created",)
        # Whether an organization exists and how it is addressed is the parent platform's call.
        return ("slug", "is_active", "created")

    def has_add_permission(self, request) -> bool:
        return self._is_superuser(request)  # organizations come from provisioning

    def has_delete_permission(self, request, obj=None) -> bool:
        return self._is_superuser(request)


DRIVER_FIELDS = (
    "organization",
    "name",
    "phone",
    "vehicle_type",
    "is_active",
    "capacity",
    "shift_start",
    "shift_end",
)


class DriverAdminForm(forms.ModelForm):
    class Meta:
        model = Driver
        fields = DRIVER_FIELDS

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Left empty, a shift takes the contract's default (08:00 to 20:00).
        for name in ("shift_start", "shift_end"):
            self.fields[name].required = False

    def clean_shift_start(self):
        return self.cleaned_data["shift_start"] or services.DEFAULT_SHIFT_START

    def clean_shift_end(self):
        return self.cleaned_data["shift_end"] or services.DEFAULT_SHIFT_END

    def clean(self):
        cleaned = super().clean()
        start, end = cleaned.get("shift_start"), cleaned.get("shift_end")
        if start is not None and end is not None and start >= end:
            raise forms.ValidationError("shiftEnd must be after shiftStart")
        return cleaned


@admin.register(Driver)
class DriverAdmin(OrganizationScopedAdmin):
    form = DriverAdminForm
    list_display = ("name", "phone", "vehicle_type", "is_active", "organization")
    list_filter = ("is_active",)
    search_fields = ("name", "phone")
    fields = (*DRIVER_FIELDS, "created")
    readonly_fields = ("created",)
    created = time_field("created_at", "Created")


class WebhookEventsFormField(forms.MultipleChoiceField):
    """The key's event filter as checkboxes of the catalogue; none checked means every event."""

    def __init__(self, **kwargs):
        kwargs.pop("max_length", None)
        kwargs.pop("base_field", None)
        super().__init__(
            choices=[(name, name) for name in catalog.SUBSCRIBABLE_EVENTS],
            required=False,
            widget=forms.CheckboxSelectMultiple,
            label="Webhook events",
            help_text="Leave every box unchecked to receive every event.",
        )

    def clean(self, value):
        return super().clean(value) or None

    def prepare_value(self, value):
        return value or []


class ApiKeyChangeForm(forms.ModelForm):
    """The webhook URL is checked by the form, so a refused one is a form error, not a 500
    (the services check it again)."""

    webhook_events = WebhookEventsFormField()

    class Meta:
        model = ApiKey
        fields = ("name", "webhook_url", "webhook_events")

    def clean_webhook_url(self) -> str:
        url = self.cleaned_data.get("webhook_url") or ""
        if url:
            try:
                netguard.webhook_url_validate(url)
            except netguard.WebhookUrlRefused as refused:
                raise forms.ValidationError(refused.message) from None
        return url


class ApiKeyCreateForm(ApiKeyChangeForm):
    class Meta:
        model = ApiKey
        fields = ("organization", "name", "platform", "test", "webhook_url", "webhook_events")


@admin.register(ApiKey)
class ApiKeyAdmin(OrganizationScopedAdmin):
    """Keys are created, rotated and revoked through the services; values are shown only once."""

    form = ApiKeyChangeForm
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}

    list_display = (
        "name",
        "platform",
        "test",
        "masked_value",
        "is_active",
        "organization",
        "last_used",
    )
    list_filter = ("platform", "is_active", "test")
    readonly_fields = ("test", "prefix", "is_active", "created", "last_used", "rotated", "revoked")
    created = time_field("created_at", "Created")
    last_used = time_field("last_used_at", "Last used")
    rotated = time_field("rotated_at", "Rotated")
    revoked = time_field("revoked_at", "Revoked")
    fields = ("organization", "name", "platform", "webhook_url", "webhook_events", *readonly_fields)
    #: webhooks/admin.py adds "send_test_webhook" (webhooks sends it; tenants may not import it)
    actions = ("rotate_keys", "revoke_keys")

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is None:
            kwargs["form"] = ApiKeyCreateForm
            kwargs["fields"] = ApiKeyCreateForm.Meta.fields
        return super().get_form(request, obj, change, **kwargs)

    def get_readonly_fields(self, request, obj=None):
        return ("organization", "platform", *self.readonly_fields) if obj else ()

    def get_fields(self, request, obj=None):
        return self.fields if obj else ApiKeyCreateForm.Meta.fields

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # revoke instead: the row stays for the audit trail

    def save_model(self, request, obj, form, change):
        if change:
            self.check_organization_allowed(request, obj)
            services.api_key_update(
                api_key=obj,
                name=obj.name,
                webhook_url=obj.webhook_url,
                webhook_events=obj.webhook_events,
            )
            return
        self.check_organization_allowed(request, obj)
        issued = services.api_key_create(
            organization_id=obj.organization_id,
            name=obj.name,
            platform=obj.platform or Platform.STANDARD,
            webhook_url=obj.webhook_url,
            test=obj.test,
            webhook_events=obj.webhook_events,
        )
        obj.pk = issued.api_key.pk  # the admin redirects to the row the service created
        self._show_secrets(request, issued)

    @admin.action(description="Rotate selected keys (shows the new values once)")
    def rotate_keys(self, request, queryset):
        for api_key in queryset.filter(is_active=True):
            self._show_secrets(request, services.api_key_rotate(api_key=api_key))

    @admin.action(description="Revoke selected keys")
    def revoke_keys(self, request, queryset):
        for api_key in queryset:
            services.api_key_revoke(api_key=api_key)
        self.message_user(request, f"Revoked {queryset.count()} key(s).")

    def _show_secrets(self, request, issued) -> None:
        self.message_user(
            request,
            f"Key {issued.api_key.name}: {issued.value}  webhook secret: {issued.webhook_secret}"
            " (shown once: copy them now)",
            level=messages.WARNING,
        )
