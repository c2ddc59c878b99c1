"""Django admin for slot policies and templates; organization admins see only their own
(contract "Management API"). Writes go through `slots.services`, so admin edits emit
`erp.slots.updated` like the management API does."""

from django import forms
from django.contrib import admin, messages
from rest_framework import serializers

from delivery.errors import ApplicationError
from slots import selectors
from slots.models import SlotDay, SlotPolicy, SlotTemplate
from slots.serializers import VehicleCapacityField
from slots.services import templates as template_services
from tenants.admin_display import calendar_day, minutes, or_empty, zone_time
from tenants.admin_scoping import OrganizationScopedAdmin, ReadOnlyAdminMixin
from tenants.admin_site import administered_organization_ids
from zones.models import SLOT_PURPOSES, Zone

#: the contract's weekday numbers (`dayOfWeek`: 0 Sunday to 6 Saturday) and their names
WEEKDAY_NAMES = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
#: the order a person picks a weekday in: Monday first
WEEKDAY_CHOICES = [(number % 7, WEEKDAY_NAMES[number % 7]) for number in range(1, 8)]

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
        labels = {
            "default_duration_minutes": "Default duration (minutes)",
            "default_cutoff_minutes": "Default cutoff (minutes)",
        }
        help_texts = {
            "timezone": "IANA time zone name, e.g. Europe/Berlin.",
            "default_duration_minutes": "How long a new slot lasts, in minutes (1 to 1440).",
            "default_cutoff_minutes": "How many minutes before a new slot's start booking closes.",
        }

    def clean_default_vehicle_capacity(self):
        return _vehicle_capacity_clean(self.cleaned_data["default_vehicle_capacity"])


@admin.register(SlotPolicy)
class SlotPolicyAdmin(OrganizationScopedAdmin):
    form = SlotPolicyForm
    list_display = ("organization", "timezone", "default_duration", "default_cutoff")
    actions = ("seed_templates",)

    @admin.display(description="Default duration", ordering="default_duration_minutes")
    def default_duration(self, policy):
        return minutes(policy.default_duration_minutes)

    @admin.display(description="Default cutoff", ordering="default_cutoff_minutes")
    def default_cutoff(self, policy):
        return f"{minutes(policy.default_cutoff_minutes)} before start"

    def get_readonly_fields(self, request, obj=None):
        return ("organization",) if obj else ()

    def save_model(self, request, obj, form, change):
        self.check_organization_allowed(request, obj)
        policy = template_services.slot_policy_update(
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
                created = template_services.slot_templates_seed(
                    organization_id=policy.organization_id
                )
            except ApplicationError as exc:
                self.message_user(request, str(exc), messages.ERROR)
                continue
            self.message_user(
                request,
                f"{policy.organization}: {len(created)} slot template(s) created",
                messages.SUCCESS,
            )


class SlotTemplateForm(forms.ModelForm):
    day_of_week = forms.TypedChoiceField(
        label="Weekday",
        choices=WEEKDAY_CHOICES,
        coerce=int,
        error_messages={"invalid_choice": "Pick a weekday: 0 (Sunday) to 6 (Saturday)"},
    )

    class Meta:
        model = SlotTemplate
        fields = TEMPLATE_FIELDS
        labels = {
            "start_time": "Start",
            "duration_minutes": "Duration (minutes)",
            "cutoff_minutes": "Cutoff (minutes before start)",
            "cutoff_day_before_at": "Cutoff on the day before at",
        }
        # Plain inputs: admin's "Now" button would fill in the browser's time, not the zone's.
        widgets = {
            "start_time": forms.TimeInput(format="%H:%M"),
            "cutoff_day_before_at": forms.TimeInput(format="%H:%M"),
        }
        help_texts = {
            "start_time": "HH:MM in the zone's time zone.",
            "duration_minutes": "How long the slot lasts, in minutes (1 to 1440); it ends by "
            "midnight.",
            "cutoff_minutes": "Booking closes this many minutes before the start ...",
            "cutoff_day_before_at": "... or at this time (HH:MM, zone time) on the day before. "
            "Exactly one of the two.",
        }

    def clean_vehicle_capacity(self):
        return _vehicle_capacity_clean(self.cleaned_data["vehicle_capacity"])

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
                template_services.slot_duration_derive(
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


class WeekdayFilter(admin.SimpleListFilter):
    title = "weekday"
    parameter_name = "day_of_week"

    def lookups(self, request, model_admin):
        return [(str(number), name) for number, name in WEEKDAY_CHOICES]

    def queryset(self, request, queryset):
        value = self.value()
        if value in {str(number) for number in range(7)}:
            return queryset.filter(day_of_week=int(value))
        return queryset


def slot_time(template: SlotTemplate) -> str:
    """`08:00-12:00 Europe/Berlin` (an en dash between): a template's wall times in its zone's
    time zone (24:00 for a slot ending at midnight)."""
    start = template.start_time.hour * 60 + template.start_time.minute
    end = start + template.duration_minutes
    return (
        f"{template.start_time:%H:%M}\u2013{end // 60:02d}:{end % 60:02d} {template.zone.timezone}"
    )


def slot_name(template: SlotTemplate) -> str:
    """`Mitte, Monday 08:00-12:00 Europe/Berlin` (an en dash between): a template for people."""
    return f"{template.zone.name}, {WEEKDAY_NAMES[template.day_of_week]} {slot_time(template)}"


@admin.register(SlotTemplate)
class SlotTemplateAdmin(OrganizationScopedAdmin):
    form = SlotTemplateForm
    list_display = ("zone", "weekday", "time", "duration", "cutoff", "capacity", "organization")
    list_filter = (WeekdayFilter,)
    search_fields = ("zone__name",)
    ordering = ("zone__name", "day_of_week", "start_time")

    def get_queryset(self, request):
        return super().get_queryset(request).filter(deleted_at=None).select_related("zone")

    def render_change_form(self, request, context, *args, obj=None, **kwargs):
        if obj is not None:  # the heading, not the model's own text (its zone's id)
            context["subtitle"] = slot_name(obj)
        return super().render_change_form(request, context, *args, obj=obj, **kwargs)

    @admin.display(description="Weekday", ordering="day_of_week")
    def weekday(self, obj):
        return WEEKDAY_NAMES[obj.day_of_week]

    @admin.display(description="Time", ordering="start_time")
    def time(self, obj):
        """Start and end, wall times of the zone, with the zone's time zone."""
        return slot_time(obj)

    @admin.display(description="Duration", ordering="duration_minutes")
    def duration(self, obj):
        return minutes(obj.duration_minutes)

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
                saved = template_services.slot_template_update(template=obj, **fields)
            else:
                saved = template_services.slot_template_create(
                    organization_id=obj.zone.organization_id, **fields
                )
        except ApplicationError as exc:
            # The form checked everything but a concurrent duplicate; say so instead of a 500.
            self.message_user(request, str(exc), messages.ERROR)
            return
        obj.pk = saved.pk

    def delete_model(self, request, obj):
        self.check_organization_allowed(request, obj)
        template_services.slot_template_delete(template=obj)

    def delete_queryset(self, request, queryset):
        for template in queryset.select_related("zone"):
            self.delete_model(request, template)


@admin.register(SlotDay)
class SlotDayAdmin(ReadOnlyAdminMixin, OrganizationScopedAdmin):
    """Booking counters, read-only: they move only with bookings."""

    organization_lookup = "template__organization_id"
    list_display = ("day", "zone", "slot", "booked", "capacity")
    list_filter = ("date",)
    list_select_related = ("template__zone",)
    ordering = ("-date",)
    fields = ("zone", "slot", "day", "booked", "capacity", "holds")
    readonly_fields = fields

    def render_change_form(self, request, context, *args, obj=None, **kwargs):
        if obj is not None:
            context["subtitle"] = f"{slot_name(obj.template)} on {calendar_day(obj.date)}"
        return super().render_change_form(request, context, *args, obj=obj, **kwargs)

    @admin.display(description="Date", ordering="date")
    def day(self, slot_day):
        return calendar_day(slot_day.date)

    @admin.display(description="Zone", ordering="template__zone__name")
    def zone(self, day):
        return day.template.zone.name

    @admin.display(description="Slot")
    def slot(self, day):
        return slot_time(day.template)

    @admin.display(description="Held until")
    def holds(self, day):
        """When each live hold of the slot expires, in the zone's time (expired ones count for
        nothing, so they are not shown)."""
        timezone_name = day.template.zone.timezone
        live = selectors.slot_live_hold_expiries(template_id=day.template_id, day=day.date)
        return ", ".join(zone_time(at, timezone_name) for at in live) or or_empty(self, None)
