"""Shapes of the dispatch API (contract "Dispatch"): the policy, drivers with their dispatch
fields, plans and moves."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from delivery.fields import (
    BoundedIntegerField,
    DateTextField,
    StrictBooleanField,
    StrictCharField,
    StrictFloatField,
    choice_field,
    field_messages,
    page_field,
    page_size_field,
    required_messages,
)
from delivery.serializers import page_output, snake_case_arguments
from dispatch.models import AutoDispatch, PlanStatus, StopKind
from slots.serializers import HH_MM_PATTERN, HhMmField
from tenants.serializers import DriverInput, DriverOutput

# ----- policy -----

#: the ranges the policy takes (backed by the model's CHECK constraints)
SERVICE_MINUTES = (0, 240)
TRAVEL_SPEED_KMH = (1, 200)
DETOUR_FACTOR = (1, 5)
LEAD_MINUTES = (0, 1440)
MAX_ATTEMPTS = (1, 10)
#: ids a plan request may name at most
MAX_IDS = 500
MAX_PAGE_SIZE = 100
DEFAULT_PAGE_SIZE = 20


def _bounded_float(bounds: tuple[float, float], **kwargs) -> StrictFloatField:
    message = f"must be between {bounds[0]} and {bounds[1]}"
    return StrictFloatField(
        min_value=bounds[0],
        max_value=bounds[1],
        error_messages={"min_value": message, "max_value": message},
        **kwargs,
    )


class DispatchPolicyInput(serializers.Serializer):
    """PUT: the fields given replace the policy's values; the others are kept."""

    serviceMinutes = BoundedIntegerField(
        min_value=SERVICE_MINUTES[0], max_value=SERVICE_MINUTES[1], required=False
    )
    travelSpeedKmh = _bounded_float(TRAVEL_SPEED_KMH, required=False)
    detourFactor = _bounded_float(DETOUR_FACTOR, required=False)
    autoDispatch = choice_field("autoDispatch", AutoDispatch.values, required=False)
    autoDispatchLeadMinutes = BoundedIntegerField(
        min_value=LEAD_MINUTES[0], max_value=LEAD_MINUTES[1], required=False
    )
    requireSignature = StrictBooleanField(required=False)
    requirePhoto = StrictBooleanField(required=False)
    maxAttempts = BoundedIntegerField(
        min_value=MAX_ATTEMPTS[0], max_value=MAX_ATTEMPTS[1], required=False
    )

    def service_arguments(self) -> dict:
        return snake_case_arguments(self.validated_data)


class DispatchPolicyOutput(serializers.Serializer):
    serviceMinutes = serializers.IntegerField(source="service_minutes")
    travelSpeedKmh = serializers.FloatField(source="travel_speed_kmh")
    detourFactor = serializers.FloatField(source="detour_factor")
    autoDispatch = serializers.CharField(source="auto_dispatch")
    autoDispatchLeadMinutes = serializers.IntegerField(source="auto_dispatch_lead_minutes")
    requireSignature = serializers.BooleanField(source="require_signature")
    requirePhoto = serializers.BooleanField(source="require_photo")
    maxAttempts = serializers.IntegerField(source="max_attempts")


# ----- drivers -----

#: a driver's capacity at most (orders on one route)
MAX_CAPACITY = 10_000


@extend_schema_field({"type": "string", "pattern": HH_MM_PATTERN, "description": "HH:MM"})
class _HhMmOutput(serializers.Field):
    """A wall time as `HH:MM`."""

    def to_representation(self, value) -> str:
        return value.strftime("%H:%M")


class DispatchDriverInput(DriverInput):
    """A driver with its dispatch fields (create: `name` required; PATCH: every field optional)."""

    capacity = BoundedIntegerField(
        min_value=1, max_value=MAX_CAPACITY, required=False, allow_null=True
    )
    shiftStart = HhMmField(required=False, source="shift_start")
    shiftEnd = HhMmField(required=False, source="shift_end")
    zoneIds = serializers.ListField(
        child=StrictCharField(max_length=64),
        required=False,
        max_length=MAX_IDS,
        source="zone_ids",
        error_messages=field_messages("zoneIds", not_a_list="zoneIds must be an array of ids"),
    )


class DispatchDriverOutput(DriverOutput):
    #: null: the vehicle default applies (`effectiveCapacity` says which)
    capacity = serializers.IntegerField(allow_null=True)
    effectiveCapacity = serializers.IntegerField(source="effective_capacity")
    shiftStart = _HhMmOutput(source="shift_start")
    shiftEnd = _HhMmOutput(source="shift_end")
    zoneIds = serializers.ListField(child=serializers.UUIDField(), source="zone_ids")


# ----- plans -----


def _ids_field(name: str) -> serializers.ListField:
    return serializers.ListField(
        child=StrictCharField(max_length=64),
        required=False,
        allow_null=True,
        max_length=MAX_IDS,
        error_messages=field_messages(name, not_a_list=f"{name} must be an array of ids"),
    )


class PlanCreateInput(serializers.Serializer):
    date = DateTextField(
        "date", error_messages={"required": "date is required", "null": "date is required"}
    )
    zoneIds = _ids_field("zoneIds")
    driverIds = _ids_field("driverIds")


class PlanListQuery(serializers.Serializer):
    date = DateTextField("date", required=False)
    status = choice_field("status", PlanStatus.values, required=False)
    page = page_field()
    pageSize = page_size_field(maximum=MAX_PAGE_SIZE, default=DEFAULT_PAGE_SIZE)


class PlanMoveInput(serializers.Serializer):
    orderId = StrictCharField(
        max_length=64, error_messages=required_messages("orderId is required")
    )
    routeId = StrictCharField(
        max_length=64, error_messages=required_messages("routeId is required")
    )
    position = BoundedIntegerField(
        min_value=1,
        max_value=MAX_CAPACITY + 1,
        error_messages=required_messages("position is required"),
    )


class PlanDriverOutput(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()


class PlanStopOutput(serializers.Serializer):
    sequence = serializers.IntegerField()
    orderId = serializers.UUIDField(source="order_id")
    externalRef = serializers.CharField(source="order.external_ref")
    eta = serializers.DateTimeField()
    windowStart = serializers.DateTimeField(source="window_start")
    windowEnd = serializers.DateTimeField(source="window_end")
    lat = serializers.FloatField()
    lng = serializers.FloatField()
    serviceSeconds = serializers.IntegerField(source="service_seconds")
    kind = serializers.ChoiceField(choices=StopKind.values)


class PlanRouteOutput(serializers.Serializer):
    id = serializers.UUIDField()
    driver = PlanDriverOutput()
    vehicleType = serializers.CharField(source="vehicle_type")
    startAt = serializers.DateTimeField(source="start_at")
    endAt = serializers.DateTimeField(source="end_at")
    travelSeconds = serializers.IntegerField(source="travel_seconds")
    distanceMeters = serializers.IntegerField(source="distance_meters")
    stops = PlanStopOutput(many=True, source="stops.all")


class PlanLeftOutOutput(serializers.Serializer):
    orderId = serializers.UUIDField(source="order_id")
    externalRef = serializers.CharField(source="order.external_ref")
    reason = serializers.CharField()


class PlanSummaryOutput(serializers.Serializer):
    routes = serializers.IntegerField()
    assigned = serializers.IntegerField()
    unassigned = serializers.IntegerField()
    travelSeconds = serializers.IntegerField()
    distanceMeters = serializers.IntegerField()


class PlanOutput(serializers.Serializer):
    id = serializers.UUIDField()
    date = serializers.DateField()
    zoneIds = serializers.ListField(child=serializers.UUIDField(), source="zone_ids")
    status = serializers.ChoiceField(choices=PlanStatus.values)
    routing = serializers.CharField()
    createdAt = serializers.DateTimeField(source="created_at")
    solvedAt = serializers.DateTimeField(source="solved_at", allow_null=True)
    solverMs = serializers.IntegerField(source="solver_ms", allow_null=True)
    summary = serializers.SerializerMethodField()
    routes = PlanRouteOutput(many=True, source="routes.all")
    unassigned = serializers.SerializerMethodField()
    excluded = serializers.SerializerMethodField()
    error = serializers.SerializerMethodField()

    @extend_schema_field(PlanSummaryOutput)
    def get_summary(self, plan) -> dict:
        routes = [route for route in plan.routes.all() if route.stops.all()]
        return {
            "routes": len(routes),
            "assigned": sum(len(route.stops.all()) for route in routes),
            "unassigned": sum(1 for item in plan.left_out.all() if not item.excluded),
            "travelSeconds": sum(route.travel_seconds for route in routes),
            "distanceMeters": sum(route.distance_meters for route in routes),
        }

    @extend_schema_field(PlanLeftOutOutput(many=True))
    def get_unassigned(self, plan) -> list:
        return PlanLeftOutOutput([i for i in plan.left_out.all() if not i.excluded], many=True).data

    @extend_schema_field(PlanLeftOutOutput(many=True))
    def get_excluded(self, plan) -> list:
        return PlanLeftOutOutput([i for i in plan.left_out.all() if i.excluded], many=True).data

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_error(self, plan) -> str | None:
        return plan.error or None


class PlanPageOutput(page_output(PlanOutput)):
    pass


class MoveWarningOutput(serializers.Serializer):
    reason = serializers.ChoiceField(choices=["time_window", "shift", "capacity", "vehicle"])
    orderId = serializers.UUIDField(source="order_id", allow_null=True)
    externalRef = serializers.CharField(source="external_ref", allow_null=True)
    message = serializers.CharField()


class MovedRouteOutput(PlanRouteOutput):
    """The route the move changed, re-timed, with the rules it now breaks."""

    warnings = MoveWarningOutput(many=True)

    def to_representation(self, instance) -> dict:
        return {
            **PlanRouteOutput(instance.route).data,
            "warnings": MoveWarningOutput(instance.warnings, many=True).data,
        }
