"""Dispatch: the organization's dispatch policy, which zones a driver serves, and plans (a day's
orders turned into driver routes, contract "Dispatch").

A plan keeps what it decided as rows: one `PlanRoute` per driver (driver, date, plan), its
`PlanStop`s in sequence with their ETA, and one `PlanLeftOut` per order the plan did not route
(unassigned with a reason, or excluded). Every order the plan considered is exactly one stop or
one left-out row of that plan (unique per plan and order), so none vanishes.
"""

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q
from django.utils import timezone

from delivery.ids import new_id
from tenants.models import Driver, Organization
from zones.models import Zone

DEFAULT_SERVICE_MINUTES = 4
DEFAULT_TRAVEL_SPEED_KMH = 25.0
DEFAULT_DETOUR_FACTOR = 1.3
DEFAULT_AUTO_DISPATCH_LEAD_MINUTES = 60
DEFAULT_MAX_ATTEMPTS = 3


class AutoDispatch(models.TextChoices):
    OFF = "off", "Off"
    AT_CUTOFF = "at_cutoff", "At cutoff"


class DispatchPolicy(models.Model):
    """The organization's dispatch settings (contract "Dispatch"); created with the defaults the
    first time it is read (`dispatch.services.policy.dispatch_policy_get_or_create`)."""

    id = models.UUIDField(primary_key=True, default=new_id, editable=False)
    organization = models.OneToOneField(
        Organization, on_delete=models.CASCADE, related_name="dispatch_policy"
    )
    service_minutes = models.PositiveIntegerField(default=DEFAULT_SERVICE_MINUTES)
    travel_speed_kmh = models.FloatField(default=DEFAULT_TRAVEL_SPEED_KMH)
    detour_factor = models.FloatField(default=DEFAULT_DETOUR_FACTOR)
    auto_dispatch = models.CharField(
        max_length=20, choices=AutoDispatch.choices, default=AutoDispatch.OFF
    )
    auto_dispatch_lead_minutes = models.PositiveIntegerField(
        default=DEFAULT_AUTO_DISPATCH_LEAD_MINUTES
    )
    require_signature = models.BooleanField(default=False)
    require_photo = models.BooleanField(default=False)
    max_attempts = models.PositiveIntegerField(default=DEFAULT_MAX_ATTEMPTS)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "dispatch policies"
        constraints = [
            # The ranges the API validates (dispatch/serializers.py), backed here.
            models.CheckConstraint(
                condition=Q(service_minutes__lte=240), name="dispatch_policy_service_minutes"
            ),
            models.CheckConstraint(
                condition=Q(travel_speed_kmh__gte=1, travel_speed_kmh__lte=200),
                name="dispatch_policy_travel_speed",
            ),
            models.CheckConstraint(
                condition=Q(detour_factor__gte=1, detour_factor__lte=5),
                name="dispatch_policy_detour_factor",
            ),
            models.CheckConstraint(
                condition=Q(auto_dispatch_lead_minutes__lte=1440),
                name="dispatch_policy_lead_minutes",
            ),
            models.CheckConstraint(
                condition=Q(max_attempts__gte=1, max_attempts__lte=10),
                name="dispatch_policy_max_attempts",
            ),
        ]

    def __str__(self) -> str:
        return f"Dispatch policy of {self.organization_id}"


class DriverZone(models.Model):
    """A zone a driver serves. A driver without any serves every zone of the organization.

    It lives here, not on `tenants.Driver`, because drivers sit below zones in the layers."""

    id = models.BigAutoField(primary_key=True)
    # No index of its own: `driver_zone_unique` leads with it.
    driver = models.ForeignKey(
        Driver, on_delete=models.CASCADE, related_name="served_zones", db_index=False
    )
    zone = models.ForeignKey(Zone, on_delete=models.CASCADE, related_name="served_by")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=("driver", "zone"), name="driver_zone_unique"),
        ]
        ordering = ("driver", "zone")

    def __str__(self) -> str:
        return f"{self.driver_id} serves {self.zone_id}"


class PlanStatus(models.TextChoices):
    PLANNING = "planning", "Planning"
    READY = "ready", "Ready"
    COMMITTED = "committed", "Committed"
    SUPERSEDED = "superseded", "Superseded"
    FAILED = "failed", "Failed"


class Routing(models.TextChoices):
    HAVERSINE = "haversine", "Straight line"
    OSRM = "osrm", "OSRM"
    HAVERSINE_FALLBACK = "haversine-fallback", "Straight line (OSRM failed)"


class Plan(models.Model):
    """One solve of one day's orders of some zones (contract "Dispatch").

    `request_key` names the request (`date`, requested zones, requested drivers): while a plan
    for it is `planning` a second one cannot be inserted (the partial unique constraint), so a
    repeated request finds the first instead of solving twice. `origin` is the instant the
    solver's seconds count from (midnight of `date` in the earliest of the zones' time zones);
    `service_seconds`, `travel_speed_kmh` and `detour_factor` are the policy as it was when
    the plan was made, so a later move re-times with the same figures.
    """

    id = models.UUIDField(primary_key=True, default=new_id, editable=False)
    # No index of its own: `plan_org_created` leads with it.
    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="dispatch_plans", db_index=False
    )
    date = models.DateField()
    #: the zones planned (the request's, or every zone with orders that day), sorted
    zone_ids = ArrayField(models.UUIDField(), default=list)
    #: the drivers asked for; empty: every active driver serving the plan's zones
    requested_driver_ids = ArrayField(models.UUIDField(), default=list, blank=True)
    #: whether `zone_ids` was asked for (False: the default, every zone with orders)
    zones_requested = models.BooleanField(default=False)
    request_key = models.CharField(max_length=64)
    status = models.CharField(
        max_length=20, choices=PlanStatus.choices, default=PlanStatus.PLANNING
    )
    routing = models.CharField(max_length=20, choices=Routing.choices, default=Routing.HAVERSINE)
    origin = models.DateTimeField(null=True, blank=True)
    service_seconds = models.PositiveIntegerField(default=DEFAULT_SERVICE_MINUTES * 60)
    travel_speed_kmh = models.FloatField(default=DEFAULT_TRAVEL_SPEED_KMH)
    detour_factor = models.FloatField(default=DEFAULT_DETOUR_FACTOR)
    solver_ms = models.PositiveIntegerField(null=True, blank=True)
    #: milliseconds of the solve's steps (reading, matrix, solving, writing): for the dispatch
    #: benchmark and operators, never shown in the API
    timings = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    solved_at = models.DateTimeField(null=True, blank=True)
    committed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=("organization", "date", "request_key"),
                condition=Q(status="planning"),
                name="plan_one_planning_per_request",
            ),
            models.CheckConstraint(
                condition=Q(status__in=PlanStatus.values), name="plan_status_valid"
            ),
        ]
        indexes = [
            models.Index(fields=("organization", "date", "status"), name="plan_org_date_status"),
            models.Index(fields=("organization", "created_at", "id"), name="plan_org_created"),
        ]
        ordering = ("-created_at", "id")

    def __str__(self) -> str:
        return f"Plan {self.date} ({self.status})"


class PlanRoute(models.Model):
    """One driver's route of the plan's day: starts and ends at `depot_*`; times are instants.

    `capacity`, `shift_start` and `shift_end` are the driver's as planned, so a move is checked
    against what the solver was given."""

    id = models.UUIDField(primary_key=True, default=new_id, editable=False)
    # No index of its own: `plan_route_one_per_driver` leads with it.
    plan = models.ForeignKey(Plan, on_delete=models.CASCADE, related_name="routes", db_index=False)
    # No index of its own: `plan_route_driver_date` leads with it.
    driver = models.ForeignKey(
        Driver, on_delete=models.CASCADE, related_name="dispatch_routes", db_index=False
    )
    #: the plan's date, kept here so "the driver's route of the day" is one indexed lookup
    date = models.DateField()
    zone = models.ForeignKey(Zone, on_delete=models.CASCADE, related_name="dispatch_routes")
    vehicle_type = models.CharField(max_length=40, blank=True, default="")
    capacity = models.PositiveIntegerField()
    shift_start = models.DateTimeField()
    shift_end = models.DateTimeField()
    depot_lat = models.FloatField()
    depot_lng = models.FloatField()
    start_at = models.DateTimeField(null=True, blank=True)
    end_at = models.DateTimeField(null=True, blank=True)
    travel_seconds = models.PositiveIntegerField(default=0)
    distance_meters = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=("plan", "driver"), name="plan_route_one_per_driver"),
        ]
        indexes = [models.Index(fields=("driver", "date"), name="plan_route_driver_date")]
        ordering = ("plan", "driver__name", "id")

    def __str__(self) -> str:
        return f"{self.driver_id} on {self.date}"


class StopKind(models.TextChoices):
    DELIVERY = "delivery", "Delivery"
    PICKUP = "pickup", "Pickup"


class PlanStop(models.Model):
    """An order's place on a route: `sequence` from 1, `eta` the arrival (never before the window
    opens: the driver waits)."""

    id = models.BigAutoField(primary_key=True)
    # No index of its own: `plan_stop_one_per_order` leads with it.
    plan = models.ForeignKey(Plan, on_delete=models.CASCADE, related_name="stops", db_index=False)
    # No index of its own: `plan_stop_unique_sequence` leads with it.
    route = models.ForeignKey(
        PlanRoute, on_delete=models.CASCADE, related_name="stops", db_index=False
    )
    order = models.ForeignKey(
        "integrations.Order", on_delete=models.CASCADE, related_name="plan_stops"
    )
    sequence = models.PositiveIntegerField()
    kind = models.CharField(max_length=10, choices=StopKind.choices, default=StopKind.DELIVERY)
    eta = models.DateTimeField()
    window_start = models.DateTimeField()
    window_end = models.DateTimeField()
    lat = models.FloatField()
    lng = models.FloatField()
    service_seconds = models.PositiveIntegerField()
    #: the order's driver and place as planned (`dispatch.services.order_versions`): a commit
    #: skips an order whose version changed since
    order_version = models.CharField(max_length=300, blank=True, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=("plan", "order"), name="plan_stop_one_per_order"),
            # Deferred: a move renumbers a route's stops within one transaction.
            models.UniqueConstraint(
                fields=("route", "sequence"),
                name="plan_stop_unique_sequence",
                deferrable=models.Deferrable.DEFERRED,
            ),
            models.CheckConstraint(condition=Q(sequence__gte=1), name="plan_stop_sequence"),
        ]
        ordering = ("route", "sequence")

    def __str__(self) -> str:
        return f"{self.sequence}. {self.order_id}"


class LeftOutReason(models.TextChoices):
    NO_DRIVER_FOR_ZONE = "no_driver_for_zone", "No driver serves the zone"
    CAPACITY = "capacity", "No capacity left"
    TIME_WINDOW = "time_window", "Window unreachable"
    SHIFT = "shift", "Outside every shift"
    VEHICLE = "vehicle", "No fitting vehicle"
    NO_COORDINATES = "no_coordinates", "No coordinates"
    CLICK_COLLECT = "click_collect", "Collected by the customer"


class PlanLeftOut(models.Model):
    """An order of the plan's day not on any route: `unassigned` (with why) or `excluded` (never
    routed, e.g. click & collect)."""

    id = models.BigAutoField(primary_key=True)
    # No index of its own: `plan_left_out_one_per_order` leads with it.
    plan = models.ForeignKey(
        Plan, on_delete=models.CASCADE, related_name="left_out", db_index=False
    )
    order = models.ForeignKey(
        "integrations.Order", on_delete=models.CASCADE, related_name="plan_left_out"
    )
    excluded = models.BooleanField(default=False)
    reason = models.CharField(max_length=30, choices=LeftOutReason.choices)
    #: the order's window (None: the driver's shift), kept so a move onto a route can time it
    window_start = models.DateTimeField(null=True, blank=True)
    window_end = models.DateTimeField(null=True, blank=True)
    #: as on `PlanStop`, carried to the stop a move makes of it
    order_version = models.CharField(max_length=300, blank=True, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=("plan", "order"), name="plan_left_out_one_per_order"),
        ]
        ordering = ("plan", "id")

    def __str__(self) -> str:
        return f"{self.order_id}: {self.reason}"


# ----- committing and auto-dispatch -----


class DispatchDay(models.Model):
    """One row per organization and date that has been committed to: the lock every commit and
    manual assignment of that day takes first, so they happen one after the other."""

    id = models.BigAutoField(primary_key=True)
    # No index of its own: `dispatch_day_unique` leads with it.
    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    date = models.DateField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=("organization", "date"), name="dispatch_day_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.organization_id} {self.date}"


class AutoDispatchTrigger(models.TextChoices):
    SLOT_CUTOFF = "slot_cutoff", "A slot's booking cutoff"
    WINDOW_LEAD = "window_lead", "Lead time before a partner window"


class AutoDispatchRun(models.Model):
    """A claim: the auto-dispatch of one zone's day for one trigger (a slot's cutoff, or a partner
    window's lead time, at `due_at`). Unique, so two beat processes (or a task run twice) plan
    and commit it once; `plan` and `error` say how it went."""

    id = models.BigAutoField(primary_key=True)
    # No index of its own: `auto_dispatch_run_unique` leads with it.
    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    zone = models.ForeignKey(Zone, on_delete=models.CASCADE, related_name="+")
    date = models.DateField()
    trigger = models.CharField(max_length=20, choices=AutoDispatchTrigger.choices)
    due_at = models.DateTimeField()
    claimed_at = models.DateTimeField(default=timezone.now)
    plan = models.ForeignKey(
        Plan, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    finished_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=("organization", "zone", "date", "trigger", "due_at"),
                name="auto_dispatch_run_unique",
            ),
        ]
        ordering = ("-claimed_at", "id")

    def __str__(self) -> str:
        return f"{self.zone_id} {self.date} {self.trigger} at {self.due_at}"
