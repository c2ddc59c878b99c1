"""Django admin for zones and the gazetteer; organization admins see only their own (contract
"Management API").

Zones are edited as GeoJSON in a textarea, validated exactly as in the management API, and shown
as an inline SVG drawing (no map tiles, nothing loaded from the internet). Writes go through
`zones.services`, so admin changes emit `erp.polygon.updated` and refresh the spatial index.
"""

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.core.files.uploadhandler import (
    FileUploadHandler,
    MemoryFileUploadHandler,
    StopUpload,
    TemporaryFileUploadHandler,
)
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.decorators import method_decorator
from django.utils.html import format_html
from django.views.decorators.csrf import csrf_exempt, csrf_protect

from delivery.errors import ApplicationError
from tenants.admin_display import calendar_day, shortened, time_field
from tenants.admin_scoping import OrganizationScopedAdmin, ReadOnlyAdminMixin
from tenants.admin_site import administered_organization_ids
from tenants.models import Organization
from zones import services
from zones.errors import BlackoutDateTaken, PolygonInvalid, ZoneHasSlotTemplates
from zones.geometry import metres_per_degree, polygon_normalize
from zones.models import GazetteerImport, GazetteerImportStatus, Place, Zone, ZoneBlackout

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

#: contract "Dispatch": where the zone's routes start and end (all empty: no depot)
DEPOT_FIELDS = ("depot_address", "depot_lat", "depot_lng")


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
        fields = (*ZONE_MAIN_FIELDS, *DEPOT_FIELDS, "geodata", "metadata")

    def clean(self):
        cleaned = super().clean()
        lat, lng = cleaned.get("depot_lat"), cleaned.get("depot_lng")
        if (lat is None) != (lng is None):
            raise forms.ValidationError("A depot needs both its latitude and its longitude")
        if lat is not None and not (-90 <= lat <= 90 and -180 <= lng <= 180):
            raise forms.ValidationError(
                "depot.lat must be between -90 and 90, depot.lng between -180 and 180"
            )
        return cleaned

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
        ("Depot", {"fields": DEPOT_FIELDS}),
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
            "depot": None
            if obj.depot_lat is None
            else {"address": obj.depot_address, "lat": obj.depot_lat, "lng": obj.depot_lng},
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
        "(postal_code and locality may be left out). Rows are matched by address: "
        "a re-import updates them."
    )

    def __init__(self, *args, organizations, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["organization"].queryset = organizations


#: what a multipart request carries besides the file (boundaries, the other fields)
UPLOAD_FORM_ALLOWANCE_BYTES = 64 * 1024


class UploadSizeLimit(FileUploadHandler):
    """First of a request's upload handlers: passes the file's bytes on to the next handler
    (memory or a temporary file) until they exceed `limit`, then stops the upload, so no more
    than that is kept (and the rest of the body is not read)."""

    def __init__(self, request, limit: int):
        super().__init__(request)
        self.limit = limit
        self.received = 0
        self.exceeded = False

    def receive_data_chunk(self, raw_data, start):
        self.received += len(raw_data)
        if self.received > self.limit:
            self.exceeded = True
            raise StopUpload(connection_reset=True)
        return raw_data

    def file_complete(self, file_size):
        return None  # the next handler makes the file


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

    @method_decorator(csrf_exempt)
    def import_csv_view(self, request):
        """The upload form. Its upload handlers are set before the body is read (so CSRF is
        checked after that, by `_import_csv`)."""
        size_limit = UploadSizeLimit(request, settings.GAZETTEER_IMPORT_MAX_BYTES)
        request.upload_handlers = [
            size_limit,
            MemoryFileUploadHandler(request),
            TemporaryFileUploadHandler(request),
        ]
        return csrf_protect(self._import_csv)(request, size_limit)

    def _import_csv(self, request, size_limit: UploadSizeLimit):
        """A small file is imported at once, a large one queued (zones.import_gazetteer); a
        file over GAZETTEER_IMPORT_MAX_BYTES is refused before more than that is read."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        organizations = self._importable_organizations(request)
        form = GazetteerImportForm(organizations=organizations)
        if request.method == "POST":
            too_large = services.gazetteer_size_problem(
                max(0, _content_length(request) - UPLOAD_FORM_ALLOWANCE_BYTES)
            )
            if too_large is None:
                form = GazetteerImportForm(request.POST, request.FILES, organizations=organizations)
                if size_limit.exceeded:
                    too_large = services.gazetteer_size_problem(size_limit.received)
            if too_large is not None:
                self.message_user(request, f"Import refused: {too_large}", messages.ERROR)
            elif form.is_valid():
                answer = self._import(
                    request, form.cleaned_data["organization"], form.cleaned_data["file"]
                )
                if answer is not None:
                    return answer
        context = {
            **self.admin_site.each_context(request),
            "title": "Import gazetteer from CSV",
            "form": form,
            "opts": self.model._meta,
            "inline_max_bytes": settings.GAZETTEER_IMPORT_INLINE_MAX_BYTES,
            "max_bytes": settings.GAZETTEER_IMPORT_MAX_BYTES,
        }
        return TemplateResponse(request, "admin/zones/place/import_csv.html", context)

    def _import(self, request, organization, upload):
        """A redirect after an import done or queued; None (the form again) when refused."""
        fields = {
            "organization_id": organization.id,
            "file_name": upload.name or "upload.csv",
            "size_bytes": upload.size,
            "requested_by": request.user.email,
        }
        if upload.size > settings.GAZETTEER_IMPORT_INLINE_MAX_BYTES:
            record = services.gazetteer_import_queue(upload=upload, **fields)
            if record.status == GazetteerImportStatus.FAILED:
                self.message_user(request, f"Import failed: {record.problems[0]}", messages.ERROR)
                return None
            self.message_user(
                request,
                format_html(
                    "Import queued: {} is imported in the background; the result appears "
                    'in <a href="{}">gazetteer imports</a>.',
                    record.file_name,
                    reverse("admin:zones_gazetteerimport_change", args=[record.pk]),
                ),
                messages.INFO,
            )
            return redirect("admin:zones_gazetteerimport_changelist")
        upload.seek(0)
        record, report = services.gazetteer_import_now(stream=upload.file, **fields)
        if report.refused:
            self.message_user(request, report.summary(), messages.ERROR)
            for problem in report.problems:
                self.message_user(request, problem, messages.ERROR)
            return None
        self.message_user(
            request,
            f"Imported {report.imported} places into {organization.name} from {report.rows} rows.",
            messages.SUCCESS,
        )
        return redirect("admin:zones_place_changelist")


def _content_length(request) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


@admin.register(GazetteerImport)
class GazetteerImportAdmin(ReadOnlyAdminMixin, OrganizationScopedAdmin):
    """The imports made from the admin and their outcome: read only."""

    list_display = (
        "file_name",
        "status",
        "rows",
        "imported",
        "problem_count",
        "started",
        "organization",
    )
    list_filter = ("status",)
    fields = (
        "organization",
        "file_name",
        "size_bytes",
        "status",
        "rows",
        "imported",
        "problem_count",
        "problem_list",
        "requested_by",
        "started",
        "finished",
    )
    readonly_fields = fields

    started = time_field("created_at", "Started")
    finished = time_field("finished_at", "Finished")

    @admin.display(description="Problems")
    def problem_list(self, record: GazetteerImport):
        if not record.problems:
            return "-"
        more = record.problem_count - len(record.problems)
        lines = [*record.problems, *([f"... and {more} more"] if more > 0 else [])]
        return format_html('<pre style="white-space:pre-wrap">{}</pre>', "\n".join(lines))


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
