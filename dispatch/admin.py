"""Django admin of dispatch: the dispatch policy, and the zones a driver serves (a field added to
the drivers' admin form, which lives below zones in tenants)."""

from django import forms
from django.contrib import admin

from dispatch import admin_orders
from dispatch.models import DispatchPolicy, DriverZone
from tenants.admin import DriverAdmin, DriverAdminForm
from tenants.admin_scoping import OrganizationScopedAdmin
from zones.models import Zone


@admin.register(DispatchPolicy)
class DispatchPolicyAdmin(OrganizationScopedAdmin):
    list_display = ("organization", "service_minutes", "travel_speed_kmh", "auto_dispatch")
    fields = (
        "organization",
        "service_minutes",
        "travel_speed_kmh",
        "detour_factor",
        "auto_dispatch",
        "auto_dispatch_lead_minutes",
        "require_signature",
        "require_photo",
        "max_attempts",
    )


class DriverDispatchForm(DriverAdminForm):
    """The driver's form with the zones it serves (contract "Dispatch": none, every zone)."""

    zones_served = forms.ModelMultipleChoiceField(
        queryset=Zone.objects.none(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="None checked: the driver serves every zone. A new driver's zones are chosen "
        "once it is saved.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Only the driver's own organization's zones: never another tenant's names.
        if self.instance.pk is not None:
            self.fields["zones_served"].queryset = Zone.objects.filter(
                organization_id=self.instance.organization_id
            )
            self.fields["zones_served"].initial = list(
                DriverZone.objects.filter(driver=self.instance).values_list("zone_id", flat=True)
            )

    def save(self, commit=True):
        driver = super().save(commit=commit)
        if commit:
            self._zones_save()
        else:
            save_m2m = self.save_m2m

            def save_with_zones():
                save_m2m()
                self._zones_save()

            self.save_m2m = save_with_zones
        return driver

    def _zones_save(self) -> None:
        if self.instance.pk is None or "zones_served" not in self.cleaned_data:
            return
        zones = [
            zone
            for zone in self.cleaned_data["zones_served"]
            if zone.organization_id == self.instance.organization_id
        ]
        DriverZone.objects.filter(driver=self.instance).exclude(zone__in=zones).delete()
        DriverZone.objects.bulk_create(
            [DriverZone(driver=self.instance, zone=zone) for zone in zones],
            ignore_conflicts=True,
        )


DriverAdmin.form = DriverDispatchForm
DriverAdmin.fields = (*DriverAdmin.fields[:-1], "zones_served", DriverAdmin.fields[-1])


# ----- orders: an assignment by hand joins the driver's route of the day (dispatch.admin_orders)
admin_orders.register()
