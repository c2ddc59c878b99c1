"""Django admin for zones and the gazetteer; organization admins see only their own (contract
"Management API").

Zones are edited as GeoJSON in a textarea, validated exactly as in the management API, and shown
as an inline SVG drawing (no map tiles, nothing loaded from the internet). Writes go through
`zones.services`, so admin changes emit `erp.polygon.updated` and refresh the spatial index.
"""

import io
from collections.abc import Iterator

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import StreamingHttpResponse
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import escape, format_html

from delivery.errors import ApplicationError, ValidationFailed
from delivery.fields import is_iana_timezone, timezone_message
from tenants.admin_display import calendar_day, shortened, time_field
from tenants.admin_scoping import OrganizationScopedAdmin
from tenants.admin_site import administered_organization_ids
from tenants.models import Organization
from zones import services
from zones.errors import BlackoutDateTaken, PolygonInvalid, ZoneHasSlotTemplates
from zones.geometry import metres_per_degree, polygon_normalize
from zones.models import Place, Zone, ZoneBlackout

PREVIEW_SIZE = 320

#: the change form's first section; the polygon and the metadata follow in sections of their own
ZONE_MAIN_FIELDS = (
    "organization",
    "name",
    "slug",
    "purpose",
    "enabled",
    "timezone",
    "window_capacity",
)


class ZoneAdminForm(forms.ModelForm):
    geodata = forms.JSONField(
        widget=forms.Textarea(attrs={"rows": 12, "cols": 80, "spellcheck": "false"}),
        help_text='GeoJSON Polygon: {"type": "Polygon", "coordinates": [[[lng, lat], ...]]}. '
        "An open ring is closed; at least 4 positions; no self-intersection.",
    )
    slug = forms.SlugField(
        max_length=63, required=False, help_text="Generated from the name when left empty."
    )

    class Meta:
        model = Zone
        fields = (*ZONE_MAIN_FIELDS, "geodata", "metadata")

    def clean_slug(self):
        # Left empty: a new zone gets one from its name; an existing zone keeps its own.
        return self.cleaned_data["slug"] or self.instance.slug or ""

    def clean_geodata(self):
        try:
            return polygon_normalize(self.cleaned_data["geodata"])
        except PolygonInvalid as exc:
            raise forms.ValidationError(exc.message) from None

    def clean_purpose(self):
        value = self.cleaned_data["purpose"]
        try:
            services.zone_purpose_change_check(zone=self.instance, purpose=value)
        except ZoneHasSlotTemplates as exc:
            raise forms.ValidationError(exc.message) from None
        return value

    def clean_timezone(self):
        value = self.cleaned_data["timezone"]
        if not is_iana_timezone(value):
            raise forms.ValidationError(timezone_message(value))
        return value

    def clean_metadata(self):
        value = self.cleaned_data["metadata"]
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise forms.ValidationError("metadata must be an object")
        return value


def polygon_svg(geodata: dict, size: int = PREVIEW_SIZE) -> str:
    """An inline SVG drawing of the polygon, north up, true to shape at its latitude."""
    ring = geodata["coordinates"][0]
    lngs, lats = [p[0] for p in ring], [p[1] for p in ring]
    per_lat, per_lng = metres_per_degree((min(lats) + max(lats)) / 2)
    xs = [(lng - min(lngs)) * per_lng for lng in lngs]
    ys = [(max(lats) - lat) * per_lat for lat in lats]
    span = max(*xs, *ys) or 1.0
    margin = 10
    scale = (size - 2 * margin) / span
    points = " ".join(
        f"{margin + x * scale:.1f},{margin + y * scale:.1f}" for x, y in zip(xs, ys, strict=True)
    )
    return format_html(
        '<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" '
        'viewBox="0 0 {size} {size}" role="img" aria-label="Zone polygon preview" '
        'style="background:#f4f6f8;border:1px solid #ccd">'
        '<polygon points="{points}" fill="rgba(64,128,200,0.35)" stroke="#2060a0" '
        'stroke-width="2"/></svg><div class="help">{width} m by {height} m</div>',
        size=size,
        points=points,
        width=f"{max(xs):.0f}",
        height=f"{max(ys):.0f}",
    )


@admin.register(Zone)
class ZoneAdmin(OrganizationScopedAdmin):
    form = ZoneAdminForm
    list_display = ("name", "slug", "purpose", "enabled", "timezone", "organization")
    list_filter = ("purpose", "enabled")
    search_fields = ("name", "slug")
    readonly_fields = ("polygon_preview", "created", "updated")
    fieldsets = (
        (None, {"fields": ZONE_MAIN_FIELDS}),
        ("Polygon", {"fields": ("geodata", "polygon_preview")}),
        ("More", {"fields": ("metadata", "created", "updated")}),
    )
    created = time_field("created_at", "Created", lambda zone: zone.timezone)
    updated = time_field("updated_at", "Updated", lambda zone: zone.timezone)

    @admin.display(description="Preview")
    def polygon_preview(self, obj):
        if obj is None or not obj.geodata:
            return "Saved zones are drawn here."
        return polygon_svg(obj.geodata)

    def save_model(self, request, obj, form, change):
        self.check_organization_allowed(request, obj)
        fields = {
            "name": obj.name,
            "purpose": obj.purpose,
            "enabled": obj.enabled,
            "timezone_name": obj.timezone,
            "geodata": obj.geodata,
            "metadata": obj.metadata,
            "window_capacity": obj.window_capacity,
        }
        if change:
            zone = services.zone_update(zone=obj, slug=obj.slug, **fields)
        else:
            zone = services.zone_create(
                organization_id=obj.organization_id, slug=obj.slug or None, **fields
            )
        form.instance = zone
        obj.pk, obj.slug = zone.pk, zone.slug

    def delete_model(self, request, obj):
        services.zone_delete(zone=obj)

    def delete_queryset(self, request, queryset):
        for zone in queryset:
            services.zone_delete(zone=zone)


# ----- gazetteer -----


class PlaceAdminForm(forms.ModelForm):
    class Meta:
        model = Place
        fields = ("organization", "address", "postal_code", "locality", "lat", "lng")

    def clean(self):
        cleaned = super().clean()
        try:
            services.place_fields(
                address=cleaned.get("address") or "",
                postal_code=cleaned.get("postal_code") or "",
                locality=cleaned.get("locality") or "",
                lat=cleaned.get("lat") if cleaned.get("lat") is not None else float("nan"),
                lng=cleaned.get("lng") if cleaned.get("lng") is not None else float("nan"),
            )
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None
        return cleaned


class GazetteerImportForm(forms.Form):
    organization = forms.ModelChoiceField(queryset=Organization.objects.none())
    file = forms.FileField(
        help_text="CSV, UTF-8, header row: address,postal_code,locality,lat,lng "
        "(postal_code and locality may be empty). Rows are matched by address: "
        "a re-import updates them."
    )

    def __init__(self, *args, organizations, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["organization"].queryset = organizations


@admin.register(Place)
class PlaceAdmin(OrganizationScopedAdmin):
    form = PlaceAdminForm
    list_display = ("place", "postal_code", "locality", "lat", "lng", "organization")
    search_fields = ("address", "postal_code", "locality")
    change_list_template = "admin/zones/place/change_list.html"

    @admin.display(description="Address", ordering="address")
    def place(self, place: Place):
        return shortened(place.address, 60)

    def save_model(self, request, obj, form, change):
        self.check_organization_allowed(request, obj)
        services.place_save(place=obj)

    def delete_model(self, request, obj):
        services.place_delete(place=obj)

    def delete_queryset(self, request, queryset):
        for place in queryset:
            services.place_delete(place=place)

    def get_urls(self):
        return [
            path(
                "import-csv/",
                self.admin_site.admin_view(self.import_csv_view),
                name="zones_place_import_csv",
            ),
            *super().get_urls(),
        ]

    def _importable_organizations(self, request):
        if self._is_superuser(request):
            return Organization.objects.all()
        return Organization.objects.filter(pk__in=administered_organization_ids(request.user))

    def import_csv_view(self, request):
        """The upload form; a valid upload answers a page that shows progress as it imports."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        organizations = self._importable_organizations(request)
        form = GazetteerImportForm(
            request.POST or None, request.FILES or None, organizations=organizations
        )
        if request.method == "POST" and form.is_valid():
            return StreamingHttpResponse(
                self._import_progress(form.cleaned_data["organization"], form.cleaned_data["file"]),
                content_type="text/html; charset=utf-8",
            )
        context = {
            **self.admin_site.each_context(request),
            "title": "Import gazetteer from CSV",
            "form": form,
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/zones/place/import_csv.html", context)

    def _import_progress(self, organization, upload) -> Iterator[str]:
        """The HTML of the import page, streamed line by line as batches are committed."""
        back = reverse("admin:zones_place_changelist")
        yield (
            '<!doctype html><html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<title>Importing gazetteer</title></head><body style="font-family:sans-serif">'
            f"<h1>Importing places into {escape(organization.name)}</h1><pre>"
        )
        text = io.TextIOWrapper(upload.file, encoding="utf-8-sig", newline="")
        report = None
        try:
            for report in services.gazetteer_import_csv_steps(
                organization_id=organization.id, text_stream=text
            ):
                yield f"{report.rows} rows read, {report.imported} imported\n"
        except ValidationFailed as exc:
            yield f"</pre><p><strong>Import failed:</strong> {escape('; '.join(exc.message))}</p>"
        except UnicodeDecodeError:
            yield "</pre><p><strong>Import failed:</strong> the file is not UTF-8 text</p>"
        else:
            errors = "".join(f"{escape(error)}\n" for error in report.errors)
            yield (
                f"{errors}</pre><p><strong>Done:</strong> {report.rows} rows read, "
                f"{report.imported} imported, {report.skipped} skipped.</p>"
            )
        yield f'<p><a href="{escape(back)}">Back to places</a></p></body></html>'


# ----- blackout days -----


class ZoneBlackoutAdminForm(forms.ModelForm):
    class Meta:
        model = ZoneBlackout
        fields = ("zone", "date", "reason")

    def clean_reason(self):
        reason = self.cleaned_data["reason"].strip()
        if not reason:
            raise forms.ValidationError("reason must not be empty")
        return reason

    def clean(self):
        cleaned = super().clean()
        zone, day = cleaned.get("zone"), cleaned.get("date")
        if (
            zone is not None
            and day is not None
            and ZoneBlackout.objects.filter(zone=zone, date=day)
            .exclude(pk=self.instance.pk)
            .exists()
        ):
            raise forms.ValidationError(BlackoutDateTaken(day).message)
        return cleaned

    def validate_unique(self):
        # clean() says it in the API's words; the database constraint stays the authority.
        pass


@admin.register(ZoneBlackout)
class ZoneBlackoutAdmin(OrganizationScopedAdmin):
    form = ZoneBlackoutAdminForm
    organization_lookup = "zone__organization_id"
    list_display = ("day", "zone", "short_reason")
    readonly_fields = ("created",)
    list_filter = ("date",)
    search_fields = ("zone__name", "reason")
    list_select_related = ("zone",)

    created = time_field("created_at", "Created", lambda blackout: blackout.zone.timezone)

    @admin.display(description="Date", ordering="date")
    def day(self, blackout: ZoneBlackout) -> str:
        return calendar_day(blackout.date)

    @admin.display(description="Reason", ordering="reason")
    def short_reason(self, blackout: ZoneBlackout):
        return shortened(blackout.reason, 60)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "zone" and not self._is_superuser(request):
            kwargs["queryset"] = Zone.objects.filter(
                organization_id__in=administered_organization_ids(request.user)
            )
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def save_model(self, request, obj, form, change):
        self.check_organization_allowed(request, obj)
        fields = {"zone": obj.zone, "day": obj.date, "reason": obj.reason}
        try:
            if change:
                blackout = services.zone_blackout_update(blackout=obj, **fields)
            else:
                blackout = services.zone_blackout_create(**fields)
        except ApplicationError as exc:
            # The form checked the date; only a concurrent duplicate gets here: say so.
            self.message_user(request, str(exc), messages.ERROR)
            return
        form.instance = blackout
        obj.pk = blackout.pk

    def delete_model(self, request, obj):
        services.zone_blackout_delete(blackout=obj)

    def delete_queryset(self, request, queryset):
        for blackout in queryset:
            services.zone_blackout_delete(blackout=blackout)
