"""Zone shapes: the management API's zone (GeoJSON `geodata`), the partner export and
resolve-zone (contract "Orders", "Geocoding and resolve-zone"; contract "Slots and windows",
"Management API")."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from delivery.fields import (
    CoordinateField,
    DateTextField,
    StrictBooleanField,
    StrictCharField,
    StrictIntegerField,
    TimezoneField,
    declare,
    one_of_message,
    required_messages,
)
from delivery.serializers import snake_case_arguments
from zones.errors import PolygonInvalid
from zones.geometry import MAX_POINTS, exterior_lat_lng, polygon_normalize
from zones.models import ZonePurpose
from zones.services import SLUG_MAX_LENGTH, SLUG_PATTERN

PURPOSE_MESSAGE = one_of_message("purpose", ZonePurpose.values)


@extend_schema_field(
    {
        "type": "object",
        "description": "A GeoJSON Polygon: one exterior ring of [lng, lat] positions, closed "
        "(first = last) or open; it must also be a valid polygon (not self-intersecting, not "
        "crossing the antimeridian, not the whole world), which no schema can state.",
        "required": ["type", "coordinates"],
        "properties": {
            "type": {"type": "string", "enum": ["Polygon"]},
            "coordinates": {
                "type": "array",
                "minItems": 1,
                "maxItems": 1,
                "items": {
                    "type": "array",
                    "minItems": 3,
                    "maxItems": MAX_POINTS,
                    "items": {
                        "type": "array",
                        "minItems": 2,
                        "maxItems": 3,
                        "description": "[lng, lat] or [lng, lat, altitude]: lng from -180 "
                        "to 180, lat from -90 to 90",
                        "items": {"type": "number", "minimum": -180, "maximum": 180},
                    },
                },
            },
        },
    }
)
class GeoJsonPolygonField(serializers.JSONField):
    """A GeoJSON Polygon, validated and normalized (an open ring closed) with shapely."""

    def to_internal_value(self, data):
        try:
            return polygon_normalize(data, field=self.field_name)
        except PolygonInvalid as exc:
            raise serializers.ValidationError(exc.message) from None


class DepotInput(serializers.Serializer):
    """Where the zone's routes start and end and orders are loaded (contract "Dispatch")."""

    address = StrictCharField(max_length=500, required=False, allow_blank=True, default="")
    lat = CoordinateField("depot.lat", 90)
    lng = CoordinateField("depot.lng", 180)

    def validate(self, attrs):
        # A zone's PATCH is partial, and DRF passes that on to this nested object: a depot is
        # still whole or nothing.
        missing = {name: f"depot.{name} required" for name in ("lat", "lng") if name not in attrs}
        if missing:
            raise serializers.ValidationError(missing)
        return attrs


class DepotOutput(serializers.Serializer):
    address = serializers.CharField(source="depot_address")
    lat = serializers.FloatField(source="depot_lat")
    lng = serializers.FloatField(source="depot_lng")


class ZoneInput(serializers.Serializer):
    """Create (name and geodata required) and PATCH (every field optional)."""

    name = StrictCharField(
        max_length=200,
        error_messages=required_messages("name is required", blank="name must not be empty"),
    )
    slug = declare(
        StrictCharField(max_length=SLUG_MAX_LENGTH, required=False), pattern=SLUG_PATTERN.pattern
    )
    purpose = declare(StrictCharField(required=False), enum=list(ZonePurpose.values))
    enabled = StrictBooleanField(required=False)
    timezone = TimezoneField(required=False)
    geodata = GeoJsonPolygonField(
        error_messages={
            "required": "geodata is required",
            "null": "geodata must be a GeoJSON Polygon object",
        }
    )
    metadata = declare(serializers.JSONField(required=False), type="object")
    windowCapacity = StrictIntegerField(min_value=0, max_value=100_000, required=False)
    #: null removes the depot
    depot = DepotInput(required=False, allow_null=True)

    def validate_purpose(self, value: str) -> str:
        if value not in ZonePurpose.values:
            raise serializers.ValidationError(PURPOSE_MESSAGE)
        return value

    def validate_metadata(self, value):
        if not isinstance(value, dict):
            raise serializers.ValidationError("metadata must be an object")
        return value

    def service_arguments(self) -> dict:
        """validated_data under the names `zones.services` takes."""
        return snake_case_arguments(self.validated_data, renamed={"timezone": "timezone_name"})


class ZoneOutput(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    slug = serializers.CharField()
    purpose = serializers.CharField()
    enabled = serializers.BooleanField()
    timezone = serializers.CharField()
    geodata = serializers.JSONField()
    metadata = serializers.JSONField()
    windowCapacity = serializers.IntegerField(source="window_capacity")
    depot = serializers.SerializerMethodField()
    createdAt = serializers.DateTimeField(source="created_at")
    updatedAt = serializers.DateTimeField(source="updated_at")

    @extend_schema_field(DepotOutput(allow_null=True))
    def get_depot(self, zone) -> dict | None:
        """`null` when the zone has no depot."""
        return DepotOutput(zone).data if zone.has_depot else None


class LatLngOutput(serializers.Serializer):
    lat = serializers.FloatField()
    lng = serializers.FloatField()


@extend_schema_field(LatLngOutput(many=True))
class _PolygonLatLngField(serializers.Field):
    def to_representation(self, value):
        return [{"lat": lat, "lng": lng} for lat, lng in exterior_lat_lng(value)]


class ZoneExportOutput(serializers.Serializer):
    name = serializers.CharField()
    slug = serializers.CharField()
    isActive = serializers.BooleanField(source="enabled")
    polygon = _PolygonLatLngField(
        source="geodata", help_text="Closed ring of {lat, lng}: the first point equals the last"
    )
    metadata = serializers.JSONField()


class ZonesExportOutput(serializers.Serializer):
    format = serializers.CharField()
    organizationId = serializers.UUIDField()
    generatedAt = serializers.DateTimeField()
    zones = ZoneExportOutput(many=True)


class ResolveZoneInput(serializers.Serializer):
    address = StrictCharField(
        max_length=500,
        error_messages=required_messages("address is required"),
    )


# A zone as resolve-zone names it: id, name and slug first. (No docstring: the subclasses would
# carry it into the schema as their description.)
class _ZoneNamedOutput(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    slug = serializers.CharField()


class ResolvedZoneZoneOutput(_ZoneNamedOutput):
    organizationId = serializers.UUIDField(source="organization_id")


class NextBestZoneOutput(_ZoneNamedOutput):
    distanceMeters = serializers.FloatField(help_text="0 when it covers the point too")

    def to_representation(self, instance) -> dict:
        return {
            "id": str(instance.zone.id),
            "name": instance.zone.name,
            "slug": instance.zone.slug,
            "distanceMeters": _metres(instance.distance_m),
        }


def _metres(value: float) -> float:
    """Metres to the decimetre: the geometry is not more precise than that."""
    return round(float(value), 1)


class ResolveEvidenceOutput(serializers.Serializer):
    distanceMeters = serializers.FloatField(help_text="From the point to the zone; 0 inside")
    boundaryDistanceMeters = serializers.FloatField(
        help_text="How far inside the zone the point lies; 0 outside"
    )
    geocoderPrecision = serializers.ChoiceField(
        choices=("precise", "approximate"), help_text="The geocoder's precision for the address"
    )
    nextBestZone = NextBestZoneOutput(
        allow_null=True,
        help_text="The best other enabled zone (covering the point, else nearest within "
        "5 km), or null",
    )

    def to_representation(self, instance) -> dict:
        return {
            "distanceMeters": _metres(instance.distance_m),
            "boundaryDistanceMeters": _metres(instance.boundary_distance_m),
            "geocoderPrecision": instance.geocoder_precision,
            "nextBestZone": (
                NextBestZoneOutput().to_representation(instance.next_best)
                if instance.next_best is not None
                else None
            ),
        }


class ResolvedZoneOutput(serializers.Serializer):
    zone = ResolvedZoneZoneOutput()
    coordinates = LatLngOutput(source="*")
    confidence = serializers.ChoiceField(choices=("high", "medium", "low"))
    evidence = ResolveEvidenceOutput(
        help_text="Added: distances in geodesic metres (WGS 84), to 0.1 m"
    )


# ----- blackout days -----


class ZoneBlackoutInput(serializers.Serializer):
    # the one date parse of the service (delivery.fields): YYYY-MM-DD exactly, within the calendar
    date = DateTextField(
        "date", error_messages={"required": "date is required", "null": "date is required"}
    )
    reason = StrictCharField(
        max_length=200,
        error_messages=required_messages(
            "reason is required",
            blank="reason must not be empty",
            max_length="reason must be at most 200 characters",
        ),
    )


class ZoneBlackoutOutput(serializers.Serializer):
    id = serializers.UUIDField()
    date = serializers.DateField()
    reason = serializers.CharField()

    def to_representation(self, instance) -> dict:
        return {
            "id": str(instance.id),
            "date": instance.date.isoformat(),
            "reason": instance.reason,
        }
