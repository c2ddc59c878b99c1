"""Zones (one model for dispatch and slot families, contract "Slots and windows") and the geocoding
gazetteer."""

from django.db import models
from django.utils import timezone as django_timezone

from delivery.fields import iana_timezone_validate
from delivery.ids import new_id
from tenants.models import Organization


class ZonePurpose(models.TextChoices):
    DISPATCH = "dispatch", "Dispatch only"
    SLOT = "slot", "Slots only"
    BOTH = "both", "Dispatch and slots"


#: purposes that serve partner dispatch (export, partner orders) and slot booking (ERP, public)
DISPATCH_PURPOSES = (ZonePurpose.DISPATCH, ZonePurpose.BOTH)
SLOT_PURPOSES = (ZonePurpose.SLOT, ZonePurpose.BOTH)


class Zone(models.Model):
    """A delivery area of an organization.

    `geodata` is a GeoJSON Polygon dict (`{"type": "Polygon", "coordinates": [[[lng, lat], ...]]}`,
    exterior ring closed), always written through `zones.geometry.polygon_normalize`, so it is
    valid when read. Partners address zones by name, so names are unique per organization.
    """

    id = models.UUIDField(primary_key=True, default=new_id, editable=False)
    # No index of its own: `zone_unique_name` leads with it.
    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="zones", db_index=False
    )
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=63)
    purpose = models.CharField(max_length=10, choices=ZonePurpose.choices, default=ZonePurpose.BOTH)
    enabled = models.BooleanField(default=True)
    timezone = models.CharField(
        max_length=64,
        default="UTC",
        help_text="IANA time zone name",
        validators=[iana_timezone_validate],
    )
    geodata = models.JSONField(help_text="GeoJSON Polygon; coordinates are [lng, lat] pairs")
    metadata = models.JSONField(default=dict, blank=True)
    window_capacity = models.PositiveIntegerField(default=20)
    #: where routes of this zone start and end and orders are loaded (contract "Dispatch");
    #: unset: all three empty/null, and plans fall back to the slot policy's pickup address
    depot_address = models.CharField(max_length=500, blank=True, default="")
    depot_lat = models.FloatField(null=True, blank=True)
    depot_lng = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(default=django_timezone.now)
    updated_at = models.DateTimeField(default=django_timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=("organization", "slug"), name="zone_unique_slug"),
            models.UniqueConstraint(fields=("organization", "name"), name="zone_unique_name"),
            models.CheckConstraint(
                condition=models.Q(depot_lat__isnull=True, depot_lng__isnull=True)
                | models.Q(
                    depot_lat__gte=-90, depot_lat__lte=90, depot_lng__gte=-180, depot_lng__lte=180
                ),
                name="zone_depot_coordinates",
            ),
        ]
        ordering = ("name", "id")

    def __str__(self) -> str:
        return self.name

    @property
    def has_depot(self) -> bool:
        return self.depot_lat is not None and self.depot_lng is not None


class Place(models.Model):
    """A known address or place of an organization's gazetteer (the `local` geocoder, contract
    "Geocoding and resolve-zone").

    `address_key`, `postal_code_key` and `locality_key` are the normalized forms the geocoder
    looks up (see `zones.geocoding.normalize_*`); `address`, `postal_code` and `locality` keep
    the text as imported.
    """

    id = models.UUIDField(primary_key=True, default=new_id, editable=False)
    # No index of its own: `place_unique` leads with it.
    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="places", db_index=False
    )
    address = models.CharField(max_length=500)
    address_key = models.CharField(max_length=500, editable=False)
    postal_code = models.CharField(max_length=20, blank=True, default="")
    postal_code_key = models.CharField(max_length=20, blank=True, default="", editable=False)
    locality = models.CharField(max_length=200, blank=True, default="")
    locality_key = models.CharField(max_length=200, blank=True, default="", editable=False)
    lat = models.FloatField()
    lng = models.FloatField()
    created_at = models.DateTimeField(default=django_timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=("organization", "address_key"), name="place_unique"),
            models.CheckConstraint(
                condition=models.Q(lat__gte=-90, lat__lte=90, lng__gte=-180, lng__lte=180),
                name="place_coordinates_in_range",
            ),
        ]
        indexes = [
            models.Index(fields=("organization", "postal_code_key"), name="place_postal_code"),
            models.Index(fields=("organization", "locality_key"), name="place_locality"),
        ]
        ordering = ("address", "id")

    def __str__(self) -> str:
        return self.address


class ZoneBlackout(models.Model):
    """A date on which a zone takes no deliveries (a public holiday, a depot closure).

    The date is a calendar date in the zone's own time zone. Slots and partner windows of that
    date are not bookable; one row per zone and date.
    """

    id = models.UUIDField(primary_key=True, default=new_id, editable=False)
    # No index of its own: `zone_blackout_unique_date` leads with it.
    zone = models.ForeignKey(
        Zone, on_delete=models.CASCADE, related_name="blackouts", db_index=False
    )
    date = models.DateField()
    reason = models.CharField(max_length=200)
    created_at = models.DateTimeField(default=django_timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=("zone", "date"), name="zone_blackout_unique_date"),
        ]
        ordering = ("date", "id")

    def __str__(self) -> str:
        return f"{self.zone_id} {self.date}"


class GazetteerImportStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    IMPORTED = "imported", "Imported"
    REFUSED = "refused", "Refused"
    FAILED = "failed", "Failed"


class GazetteerImport(models.Model):
    """One gazetteer CSV import (Django admin): all or nothing, its outcome recorded here.

    A small file is imported within its upload's request; a large one is stored (`stored_name`
    in the `gazetteer_imports` storage) and imported by the `zones.import_gazetteer` task, which
    runs a queued import once (a repeated message finds it no longer queued). `problems` lists
    the first reported problems of a refused file (`line 12: lat must be ...`); `problem_count`
    counts them all.
    """

    id = models.UUIDField(primary_key=True, default=new_id, editable=False)
    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="gazetteer_imports"
    )
    file_name = models.CharField(max_length=255, help_text="The uploaded file's name")
    size_bytes = models.PositiveBigIntegerField(default=0)
    stored_name = models.CharField(max_length=255, blank=True, default="")
    status = models.CharField(
        max_length=10, choices=GazetteerImportStatus.choices, default=GazetteerImportStatus.QUEUED
    )
    rows = models.PositiveIntegerField(default=0)
    imported = models.PositiveIntegerField(default=0)
    problem_count = models.PositiveIntegerField(default=0)
    problems = models.JSONField(default=list, blank=True)
    requested_by = models.CharField(max_length=254, blank=True, default="")
    created_at = models.DateTimeField(default=django_timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-created_at", "id")

    def __str__(self) -> str:
        return f"{self.file_name} ({self.get_status_display()})"
