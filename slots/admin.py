"""Django admin for slot policies and templates; organization admins see only their own
(contract "Management API"). Writes go through `slots.services`, so admin edits emit
`erp.slots.updated` like the management API does."""

from django import forms
from django.contrib import admin, messages
from rest_framework import serializers

from delivery.errors import ApplicationError
from slots import services
from slots.models import SlotDay, SlotPolicy, SlotTemplate
from slots.serializers import VehicleCapacityField
from tenants.admin_scoping import OrganizationScopedAdmin
from tenants.admin_site import administered_organization_ids
from zones.models import SLOT_PURPOSES, Zone

#: what the template form edits, each under the name `slot_template_create`/`_update` takes it
TEMPLATE_FIELDS = (
    "zone",
    "day_of_week",
    "start_time",
    "duration_minutes",
    "cutoff_minutes",
    "cutoff_day_before_at",
    "vehicle_capacity",
)


def _messages_of(error: ApplicationError) -> list[str]:
    return error.message if isinstance(error.message, list) else [error.message]


def _vehicle_capacity_clean(value):
    try:
        return VehicleCapacityField().run_validation(value)
    except serializers.ValidationError as exc:
        raise forms.ValidationError(f"vehicle capacity is not valid: {exc.detail}") from None


class SlotPolicyForm(forms.ModelForm):
    class Meta:
        model = SlotPolicy
        fields = (
            "organization",
            "timezone",
            "default_duration_minutes",
            "default_cutoff_minutes",
            "default_vehicle_capacity",
            "default_pickup_address",
        )

    def clean_default_vehicle_capacity(self):
        return _vehicle_capacity_clean(self.cleaned_data["default_vehicle_capacity"])


@admin.register(SlotPolicy)
class SlotPolicyAdmin(OrganizationScopedAdmin):
    form = SlotPolicyForm
    list_display = (
        "organization",
        "timezone",
        "default_duration_minutes",
        "default_cutoff_minutes",
    )
    actions = ("seed_templates",)

    def get_readonly_fields(self, request, obj=None):
        return ("organization",) if obj else ()

    def save_model(self, request, obj, form, change):
        self.check_organization_allowed(request, obj)
        policy = services.slot_policy_update(
            organization_id=obj.organization_id,
            timezone_name=obj.timezone,
            default_duration_minutes=obj.default_duration_minutes,
            default_cutoff_minutes=obj.default_cutoff_minutes,
            default_vehicle_capacity=obj.default_vehicle_capacity,
            default_pickup_address=obj.default_pickup_address,
        )
        obj.pk = policy.pk

    @admin.action(description="Seed slot templates from the selected policies")
    def seed_templates(self, request, queryset):
        for policy in queryset.select_related("organization"):
            self.check_organization_allowed(request, policy)
            try:
                created = services.slot_templates_seed(organization_id=policy.organization_id)
            except ApplicationError as exc:
                self.message_user(request, str(exc), messages.ERROR)
                continue
            self.message_user(
                request,
                f"{policy.organization}: {len(created)} slot template(s) created",
                messages.SUCCESS,
            )


class SlotTemplateForm(forms.ModelForm):
    class Meta:
        model = SlotTemplate
        fields = TEMPLATE_FIELDS
        help_texts = {
            "cutoff_minutes": "Booking closes this many minutes before the start ...",
            "cutoff_day_before_at": "... or at this time (HH:MM, zone time) on the day before. "
            "Exactly one of the two.",
        }

    def clean_vehicle_capacity(self):
        return _vehicle_capacity_clean(self.cleaned_data["vehicle_capacity"])

    def clean_day_of_week(self):
        value = self.cleaned_data["day_of_week"]
        if not 0 <= value <= 6:
            raise forms.ValidationError("0 (Sunday) to 6 (Saturday)")
        return value

    def clean_zone(self):
        zone = self.cleaned_data["zone"]
        if zone.purpose not in SLOT_PURPOSES:
            raise forms.ValidationError("Only zones of purpose slot or both take slot templates")
        return zone

    def clean(self):
        cleaned = super().clean()
        minutes, day_before = cleaned.get("cutoff_minutes"), cleaned.get("cutoff_day_before_at")
        if (minutes is None) == (day_before is None) and not self.errors:
            raise forms.ValidationError(
                "Set either the cutoff minutes or the day-before cutoff time, not both"
                if minutes is not None
                else "Set the cutoff minutes or the day-before cutoff time"
            )
        if cleaned.get("start_time") and cleaned.get("duration_minutes"):
            try:
                services.slot_duration_derive(
                    start=cleaned["start_time"],
                    end_time=None,
                    duration_minutes=cleaned["duration_minutes"],
                    default=cleaned["duration_minutes"],
                )
            except ApplicationError as exc:
                raise forms.ValidationError(_messages_of(exc)) from None
        taken = (
            SlotTemplate.objects.filter(
                zone=cleaned.get("zone"),
                day_of_week=cleaned.get("day_of_week"),
                start_time=cleaned.get("start_time"),
                deleted_at=None,
            )
            .exclude(pk=self.instance.pk)
            .exists()
        )
        if taken:
            raise forms.ValidationError("A template of this zone already starts then")
        return cleaned


@admin.register(SlotTemplate)
class SlotTemplateAdmin(OrganizationScopedAdmin):
    form = SlotTemplateForm
    list_display = (
        "zone",
        "day_of_week",
        "start_time",
        "duration_minutes",
        "cutoff",
        "capacity",
        "organization",
    )
    list_filter = ("day_of_week",)
    search_fields = ("zone__name",)
    ordering = ("zone__name", "day_of_week", "start_time")

    def get_queryset(self, request):
        return super().get_queryset(request).filter(deleted_at=None).select_related("zone")

    @admin.display(description="Cutoff")
    def cutoff(self, obj):
        """The rule the template uses, in words."""
        if obj.cutoff_day_before_at is not None:
            return f"Day before at {obj.cutoff_day_before_at:%H:%M}"
        return f"{obj.cutoff_minutes} min before start"

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "zone":
            zones = Zone.objects.filter(purpose__in=SLOT_PURPOSES)
            if not self._is_superuser(request):
                zones = zones.filter(
                    organization_id__in=administered_organization_ids(request.user)
                )
            kwargs["queryset"] = zones
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def save_model(self, request, obj, form, change):
        obj.organization_id = obj.zone.organization_id
        self.check_organization_allowed(request, obj)
        fields = {name: getattr(obj, name) for name in TEMPLATE_FIELDS}
        try:
            if change:
                saved = services.slot_template_update(template=obj, **fields)
            else:
                saved = services.slot_template_create(
                    organization_id=obj.zone.organization_id, **fields
                )
        except ApplicationError as exc:
            # The form checked everything but a concurrent duplicate; say so instead of a 500.
            self.message_user(request, str(exc), messages.ERROR)
            return
        obj.pk = saved.pk

    def delete_model(self, request, obj):
        self.check_organization_allowed(request, obj)
        services.slot_template_delete(template=obj)

    def delete_queryset(self, request, queryset):
        for template in queryset.select_related("zone"):
            self.delete_model(request, template)


@admin.register(SlotDay)
class SlotDayAdmin(OrganizationScopedAdmin):
    """Booking counters, read-only: they move only with bookings."""

    organization_lookup = "template__organization_id"
    list_display = ("template", "date", "booked", "capacity")
    list_filter = ("date",)
    ordering = ("-date",)

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
