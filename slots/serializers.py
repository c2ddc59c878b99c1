"""Slot shapes: the policy and templates of the management API, the availability query and the
availability entry (contract "Slots and windows"; contract "Slots and windows", "Management
API")."""

from dataclasses import dataclass
from datetime import date

from rest_framework import serializers
from rest_framework.settings import api_settings

from delivery.errors import ValidationFailed
from delivery.fields import (
    BoundedIntegerField,
    StrictCharField,
    TimezoneField,
    date_message,
    parse_date,
    parse_query_number,
    parse_uuid,
    state_constraints,
)
from delivery.serializers import CrossFieldSerializer, snake_case_arguments
from slots.models import SlotPolicy, SlotTemplate
from slots.occurrences import (
    DAY_ABBREVIATIONS,
    MINUTES_PER_DAY,
    minutes_of,
    occurrence_texts,
    parse_hh_mm,
)
from slots.selectors import (
    DayAvailability,
    SlotAvailability,
    UnbookableReason,
    template_cutoff_day_before_text,
    template_times,
)
from slots.services.templates import slot_duration_derive

#: contract "Slots and windows": a bulk range over this many days is refused
MAX_RANGE_DAYS = 31
MAX_CUTOFF_MINUTES = 7 * 24 * 60
MAX_VEHICLE_NUMBER = 100_000
_TIMESTAMP = serializers.DateTimeField()


#: parse_hh_mm's text as an OpenAPI pattern (ASCII digits)
HH_MM_PATTERN = "^(?:[01][0-9]|2[0-3]):[0-5][0-9]$"


class HhMmField(StrictCharField):
    """`HH:MM`, 00:00 to 23:59, as a `datetime.time`."""

    default_error_messages = {
        "invalid": "must be a string",
        "format": "must be a time HH:MM (00:00 to 23:59)",
    }

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        state_constraints(self, pattern=HH_MM_PATTERN)

    def to_internal_value(self, data):
        parsed = parse_hh_mm(super().to_internal_value(data))
        if parsed is None:
            self.fail("format")
        return parsed


class VehicleCapacityItem(serializers.Serializer):
    vehicleType = StrictCharField(max_length=40)
    count = BoundedIntegerField(min_value=0, max_value=MAX_VEHICLE_NUMBER)
    maxOrdersPerVehicle = BoundedIntegerField(min_value=0, max_value=MAX_VEHICLE_NUMBER)


class VehicleCapacityField(serializers.ListField):
    child = VehicleCapacityItem()

    def __init__(self, **kwargs):
        kwargs.setdefault("min_length", 1)
        kwargs.setdefault("max_length", 50)
        super().__init__(**kwargs)

    def run_child_validation(self, data):
        # A fresh serializer per entry: in a PATCH the root serializer is partial, and DRF would
        # let an entry miss its required fields (a KeyError below, a 500). An entry is always whole.
        result, errors = [], {}
        for index, item in enumerate(data):
            entry = VehicleCapacityItem(data=item)
            if entry.is_valid():
                result.append(entry.validated_data)
            else:
                errors[index] = entry.errors
        if errors:
            raise serializers.ValidationError(errors)
        return result

    def to_internal_value(self, data):
        items = super().to_internal_value(data)
        return [
            {
                "vehicleType": item["vehicleType"],
                "count": item["count"],
                "maxOrdersPerVehicle": item["maxOrdersPerVehicle"],
            }
            for item in items
        ]


# ----- policy -----


class SlotPolicyInput(serializers.Serializer):
    """PUT: the fields given replace the policy's values; the others are kept."""

    timezone = TimezoneField(required=False)
    defaultDurationMinutes = BoundedIntegerField(min_value=1, max_value=1440, required=False)
    defaultCutoffMinutes = BoundedIntegerField(
        min_value=0, max_value=MAX_CUTOFF_MINUTES, required=False
    )
    defaultVehicleCapacity = VehicleCapacityField(required=False)
    defaultPickupAddress = StrictCharField(
        max_length=500, required=False, allow_blank=True, allow_null=True
    )

    def service_arguments(self) -> dict:
        """validated_data under the names `slots.services.templates.slot_policy_update` takes."""
        return snake_case_arguments(self.validated_data, renamed={"timezone": "timezone_name"})


class SlotPolicyOutput(serializers.Serializer):
    timezone = serializers.CharField()
    defaultDurationMinutes = serializers.IntegerField(source="default_duration_minutes")
    defaultCutoffMinutes = serializers.IntegerField(source="default_cutoff_minutes")
    defaultVehicleCapacity = VehicleCapacityItem(many=True, source="default_vehicle_capacity")
    defaultPickupAddress = serializers.CharField(source="default_pickup_address", allow_null=True)

    def to_representation(self, instance: SlotPolicy) -> dict:
        return {
            "timezone": instance.timezone,
            "defaultDurationMinutes": instance.default_duration_minutes,
            "defaultCutoffMinutes": instance.default_cutoff_minutes,
            "defaultVehicleCapacity": instance.default_vehicle_capacity,
            "defaultPickupAddress": instance.default_pickup_address or None,
        }


# ----- templates -----


class SlotTemplateInput(CrossFieldSerializer):
    """Create (zoneId, dayOfWeek and startTime required) and PATCH (every field optional)."""

    zoneId = StrictCharField(error_messages={"required": "zoneId is required"})
    dayOfWeek = BoundedIntegerField(
        min_value=0,
        max_value=6,
        error_messages={
            "required": "dayOfWeek is required",
            "min_value": "dayOfWeek must be between 0 (Sunday) and 6 (Saturday)",
            "max_value": "dayOfWeek must be between 0 (Sunday) and 6 (Saturday)",
        },
    )
    startTime = HhMmField(error_messages={"required": "startTime is required"})
    endTime = HhMmField(required=False)
    durationMinutes = BoundedIntegerField(min_value=1, max_value=1440, required=False)
    cutoffMinutes = BoundedIntegerField(min_value=0, max_value=MAX_CUTOFF_MINUTES, required=False)
    cutoffDayBeforeAt = HhMmField(
        required=False,
        help_text="HH:MM zone time: booking closes then on the day before the slot. Instead of "
        "cutoffMinutes (giving one replaces the other; both: 400)",
    )
    vehicleCapacity = VehicleCapacityField(required=False)

    def cross_field_problems(self, attrs, failed):
        problems = []
        if "cutoffMinutes" in attrs and "cutoffDayBeforeAt" in attrs:
            problems.append("Provide either cutoffMinutes or cutoffDayBeforeAt, not both")
        # A create's times are checked here, with its other problems; a PATCH's against the
        # template it changes, in the service.
        if self.partial or failed & {"startTime", "endTime", "durationMinutes"}:
            return problems
        start, end = attrs.get("startTime"), attrs.get("endTime")
        duration = attrs.get("durationMinutes")
        if start is None or (end is None and duration is None):
            return problems
        try:
            slot_duration_derive(start=start, end_time=end, duration_minutes=duration, default=0)
        except ValidationFailed as exc:
            problems.extend(exc.message)
        return problems

    def service_arguments(self) -> dict:
        """validated_data under the names `slots.services` takes (zoneId is resolved apart)."""
        return snake_case_arguments(self.validated_data, leave_out={"zoneId"})


class SlotTemplateOutput(serializers.Serializer):
    id = serializers.UUIDField()
    zoneId = serializers.UUIDField()
    dayOfWeek = serializers.IntegerField(help_text="0 (Sunday) to 6 (Saturday)")
    startTime = serializers.CharField(help_text="HH:MM")
    endTime = serializers.CharField(help_text="HH:MM (00:00 for a slot ending at midnight)")
    durationMinutes = serializers.IntegerField()
    cutoffMinutes = serializers.IntegerField(
        allow_null=True, help_text="Null when the template closes the day before"
    )
    cutoffDayBeforeAt = serializers.CharField(
        allow_null=True, help_text="HH:MM zone time on the previous day; null with cutoffMinutes"
    )
    cutoffRule = serializers.ChoiceField(
        choices=("minutes_before_start", "day_before_at"), help_text="The cutoff rule in use"
    )
    vehicleCapacity = VehicleCapacityItem(many=True)
    capacity = serializers.IntegerField(help_text="Sum of count x maxOrdersPerVehicle")
    createdAt = serializers.DateTimeField()
    updatedAt = serializers.DateTimeField()

    def to_representation(self, instance: SlotTemplate) -> dict:
        start_time, end_time = template_times(instance)
        return {
            "id": str(instance.id),
            "zoneId": str(instance.zone_id),
            "dayOfWeek": instance.day_of_week,
            "startTime": start_time,
            "endTime": end_time,
            "durationMinutes": instance.duration_minutes,
            "cutoffMinutes": instance.cutoff_minutes,
            "cutoffDayBeforeAt": template_cutoff_day_before_text(instance),
            "cutoffRule": instance.cutoff_rule,
            "vehicleCapacity": instance.vehicle_capacity,
            "capacity": instance.capacity,
            "createdAt": _TIMESTAMP.to_representation(instance.created_at),
            "updatedAt": _TIMESTAMP.to_representation(instance.updated_at),
        }


class SlotTemplateSeedInput(CrossFieldSerializer):
    zoneIds = serializers.ListField(child=StrictCharField(), required=False, max_length=1000)
    daysOfWeek = serializers.ListField(
        child=BoundedIntegerField(min_value=0, max_value=6), required=False, max_length=7
    )
    firstStart = HhMmField(required=False)
    lastEnd = HhMmField(required=False, help_text="HH:MM; 00:00 is midnight")

    def cross_field_problems(self, attrs, failed):
        first, last = attrs.get("firstStart"), attrs.get("lastEnd")
        if first is None or last is None:
            return []  # a default bound is checked by the service, which knows it
        if minutes_of(first) >= (minutes_of(last) or MINUTES_PER_DAY):
            return ["firstStart must be before lastEnd"]
        return []


# ----- availability -----


def _date_or_message(params, name: str, *, missing: str) -> tuple[date | None, str | None]:
    raw = params.get(name)
    if raw is None or raw == "":
        return None, missing
    day = parse_date(raw)
    return (day, None) if day is not None else (None, date_message(name))


def _coordinate(raw: str, low: float, high: float) -> float | None:
    value = parse_query_number(raw)
    return value if value is not None and low <= value <= high else None


def _invalid(messages: list[str]) -> serializers.ValidationError:
    """Messages that name their fields themselves (rendered as they are, in this order)."""
    return serializers.ValidationError({api_settings.NON_FIELD_ERRORS_KEY: messages})


@dataclass(frozen=True)
class ZoneQuery:
    zone_id: str | None
    lat: float | None
    lng: float | None


def _zone_query(params, messages: list[str]) -> ZoneQuery | None:
    """contract "Slots and windows": `zoneId` wins when given (a UUID); else both `lat` and
    `lng`."""
    zone_id = params.get("zoneId")
    if zone_id:
        if parse_uuid(zone_id) is None:
            messages.append("zoneId must be a UUID")
            return None
        return ZoneQuery(zone_id=zone_id, lat=None, lng=None)
    raw_lat, raw_lng = params.get("lat"), params.get("lng")
    if not raw_lat or not raw_lng:
        messages.append("Either (lat, lng) or zoneId must be provided")
        return None
    lat, lng = _coordinate(raw_lat, -90, 90), _coordinate(raw_lng, -180, 180)
    if lat is None:
        messages.append("lat must be a number between -90 and 90")
    if lng is None:
        messages.append("lng must be a number between -180 and 180")
    return (
        ZoneQuery(zone_id=None, lat=lat, lng=lng) if lat is not None and lng is not None else None
    )


@dataclass(frozen=True)
class BulkAvailabilityQuery:
    zone: ZoneQuery
    start_date: date
    end_date: date


@dataclass(frozen=True)
class DayAvailabilityQuery:
    zone: ZoneQuery
    date: date


class BulkAvailabilityQueryInput(serializers.Serializer):
    """The query of `GET /public/delivery-slots/availability/bulk` (contract "Slots and windows"),
    checked in
    this order: zone identification and both dates (every problem listed), then startDate
    before endDate, then a range of at most 31 days."""

    def to_internal_value(self, data) -> BulkAvailabilityQuery:
        messages: list[str] = []
        zone = _zone_query(data, messages)
        start, start_problem = _date_or_message(
            data, "startDate", missing="startDate is required (format: YYYY-MM-DD)"
        )
        end, end_problem = _date_or_message(
            data, "endDate", missing="endDate is required (format: YYYY-MM-DD)"
        )
        messages += [problem for problem in (start_problem, end_problem) if problem]
        if messages:
            raise _invalid(messages)
        if start >= end:
            raise _invalid(["startDate must be before endDate"])
        if (end - start).days > MAX_RANGE_DAYS:
            raise _invalid([f"Date range must not exceed {MAX_RANGE_DAYS} days"])
        return BulkAvailabilityQuery(zone=zone, start_date=start, end_date=end)


class DayAvailabilityQueryInput(serializers.Serializer):
    """The query of `GET /public/delivery-slots/availability`: (lat, lng) or zoneId, and date."""

    def to_internal_value(self, data) -> DayAvailabilityQuery:
        messages: list[str] = []
        zone = _zone_query(data, messages)
        day, problem = _date_or_message(
            data, "date", missing="date query parameter is required (format: YYYY-MM-DD)"
        )
        if problem:
            messages.append(problem)
        if messages:
            raise _invalid(messages)
        return DayAvailabilityQuery(zone=zone, date=day)


class SlotAvailabilityOutput(serializers.Serializer):
    """The contract's "Slot availability entry"."""

    templateId = serializers.UUIDField()
    label = serializers.CharField(help_text="<Ddd> <HH:MM>-<HH:MM>, e.g. Sun 08:00-12:00")
    date = serializers.DateField()
    dayOfWeek = serializers.IntegerField(help_text="0 = Sunday, 6 = Saturday")
    startTime = serializers.CharField()
    endTime = serializers.CharField()
    durationMinutes = serializers.IntegerField()
    deliveryWindowStart = serializers.CharField(help_text="ISO 8601 with the zone's offset")
    deliveryWindowEnd = serializers.CharField(help_text="ISO 8601 with the zone's offset")
    cutoffAt = serializers.DateTimeField(help_text="ISO 8601, UTC")
    capacity = serializers.IntegerField()
    booked = serializers.IntegerField()
    available = serializers.IntegerField()
    bookable = serializers.BooleanField()
    unbookableReason = serializers.ChoiceField(
        choices=[reason.value for reason in UnbookableReason],
        allow_null=True,
        help_text="Null when bookable. When several apply, the first of: past, "
        "template_inactive, blackout, cutoff_passed, full",
    )
    vehicleCapacity = VehicleCapacityItem(many=True)

    def to_representation(self, instance: SlotAvailability) -> dict:
        # Written out by hand from facts computed once per template and texts memoized per
        # slot: a 31-day range renders hundreds of entries per request.
        template = instance.template
        day, start, end, cutoff, weekday = occurrence_texts(instance.occurrence)
        return {
            "templateId": template.id_text,
            "label": f"{DAY_ABBREVIATIONS[weekday]} {template.start_text}-{template.end_text}",
            "date": day,
            "dayOfWeek": weekday,
            "startTime": template.start_text,
            "endTime": template.end_text,
            "durationMinutes": template.duration_minutes,
            "deliveryWindowStart": start,
            "deliveryWindowEnd": end,
            "cutoffAt": cutoff,
            "capacity": instance.capacity,
            "booked": instance.booked,
            "available": instance.available,
            "bookable": instance.bookable,
            "unbookableReason": reason.value if (reason := instance.unbookable_reason) else None,
            "vehicleCapacity": template.vehicle_capacity,
        }


class DayAvailabilityOutput(serializers.Serializer):
    date = serializers.DateField()
    slots = SlotAvailabilityOutput(many=True)

    def to_representation(self, instance: DayAvailability) -> dict:
        entry = SlotAvailabilityOutput()
        return {
            "date": instance.date.isoformat(),
            "slots": [entry.to_representation(slot) for slot in instance.slots],
        }


class BulkAvailabilityOutput(serializers.Serializer):
    polygonId = serializers.UUIDField()
    polygonName = serializers.CharField()
    dates = DayAvailabilityOutput(many=True)


class SingleDayAvailabilityOutput(serializers.Serializer):
    polygonId = serializers.UUIDField()
    polygonName = serializers.CharField()
    date = serializers.DateField()
    slots = SlotAvailabilityOutput(many=True)
