"""Delivery slots: the organization's slot policy, slot templates, and bookings of a template on
a date (contract "Slots and windows"; contract "Orders", "Slots and windows").

A template is a weekly recurring slot of one zone (purpose `slot` or `both`). A booking ties an
order to one template and one date; `SlotDay` is the per-(template, date) counter row that
bookings of that slot are serialized on (`SELECT ... FOR UPDATE`), so capacity is never exceeded.
"""

from django.db import models
from django.db.models import F, Q
from django.utils import timezone as django_timezone

from delivery.fields import iana_timezone_validate
from delivery.ids import new_id
from tenants.models import ApiKey, Organization
from zones.models import Zone

DEFAULT_TIMEZONE = "UTC"
DEFAULT_DURATION_MINUTES = 240
DEFAULT_CUTOFF_MINUTES = 120


def default_vehicle_capacity() -> list[dict]:
    """contract "Slots and windows": one van taking ten orders."""
    return [{"vehicleType": "van", "count": 1, "maxOrdersPerVehicle": 10}]


def vehicle_capacity_total(vehicle_capacity: list[dict]) -> int:
    """Capacity rule 1: the sum over vehicle entries of count x maxOrdersPerVehicle."""
    return sum(int(item["count"]) * int(item["maxOrdersPerVehicle"]) for item in vehicle_capacity)


class SlotPolicy(models.Model):
    """The organization's defaults for its slot templates (contract "Management API", "Slots and
    windows").

    Every organization has one: it is created with the defaults of contract "Slots and windows" the
    first time it is needed (`slots.services.templates.slot_policy_get_or_create`).
    """

    id = models.UUIDField(primary_key=True, default=new_id, editable=False)
    organization = models.OneToOneField(
        Organization, on_delete=models.CASCADE, related_name="slot_policy"
    )
    timezone = models.CharField(
        max_length=64, default=DEFAULT_TIMEZONE, validators=[iana_timezone_validate]
    )
    default_duration_minutes = models.PositiveIntegerField(default=DEFAULT_DURATION_MINUTES)
    default_cutoff_minutes = models.PositiveIntegerField(default=DEFAULT_CUTOFF_MINUTES)
    default_vehicle_capacity = models.JSONField(default=default_vehicle_capacity)
    default_pickup_address = models.CharField(max_length=500, blank=True, default="")
    created_at = models.DateTimeField(default=django_timezone.now)
    updated_at = models.DateTimeField(default=django_timezone.now)

    class Meta:
        verbose_name_plural = "slot policies"
        constraints = [
            models.CheckConstraint(
                condition=Q(default_duration_minutes__gte=1, default_duration_minutes__lte=1440),
                name="slot_policy_duration_in_day",
            )
        ]

    def __str__(self) -> str:
        return f"Slot policy of {self.organization_id}"


class SlotTemplate(models.Model):
    """A weekly slot of a zone: weekday, start, duration, cutoff and vehicles.

    `end_time` is derived from `start_time` + `duration_minutes` (a slot ends on its own day, at
    midnight at the latest); `capacity` is derived from `vehicle_capacity` and never stored.
    Deleting a template only marks it deleted: orders booked on it keep their slot.
    """

    id = models.UUIDField(primary_key=True, default=new_id, editable=False)
    # No index of its own: `slot_template_org` leads with it.
    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="slot_templates", db_index=False
    )
    zone = models.ForeignKey(Zone, on_delete=models.CASCADE, related_name="slot_templates")
    day_of_week = models.PositiveSmallIntegerField(help_text="0 = Sunday ... 6 = Saturday")
    start_time = models.TimeField()
    duration_minutes = models.PositiveIntegerField()
    #: the booking cutoff: either minutes before the start or, instead, a wall time (zone time)
    #: on the day before the slot; exactly one of the two is set
    cutoff_minutes = models.PositiveIntegerField(null=True, blank=True)
    cutoff_day_before_at = models.TimeField(
        null=True, blank=True, help_text="HH:MM zone time on the previous day"
    )
    vehicle_capacity = models.JSONField(default=default_vehicle_capacity)
    created_at = models.DateTimeField(default=django_timezone.now)
    updated_at = models.DateTimeField(default=django_timezone.now)
    deleted_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(day_of_week__lte=6), name="slot_template_day_of_week_range"
            ),
            models.CheckConstraint(
                condition=Q(duration_minutes__gte=1, duration_minutes__lte=1440),
                name="slot_template_duration_in_day",
            ),
            models.CheckConstraint(
                condition=Q(cutoff_minutes__isnull=False, cutoff_day_before_at__isnull=True)
                | Q(cutoff_minutes__isnull=True, cutoff_day_before_at__isnull=False),
                name="slot_template_one_cutoff_rule",
            ),
            # One live template per zone, weekday and start: seeding twice creates nothing new.
            models.UniqueConstraint(
                fields=("zone", "day_of_week", "start_time"),
                condition=Q(deleted_at__isnull=True),
                name="slot_template_unique_start",
            ),
        ]
        indexes = [
            models.Index(
                fields=("organization", "zone", "day_of_week", "start_time"),
                name="slot_template_org",
            ),
        ]
        ordering = ("zone", "day_of_week", "start_time", "id")

    def __str__(self) -> str:
        return f"{self.zone_id} day {self.day_of_week} {self.start_time:%H:%M}"

    @property
    def capacity(self) -> int:
        return vehicle_capacity_total(self.vehicle_capacity)

    @property
    def cutoff_rule(self) -> str:
        """`day_before_at` or `minutes_before_start`: which cutoff the template uses."""
        return "day_before_at" if self.cutoff_day_before_at is not None else "minutes_before_start"


class SlotDay(models.Model):
    """The booking counter of one template on one date: the row bookings of that slot lock.

    `booked` counts the active bookings (rule 2; cancelled and failed orders are released, rule
    3); the slot's live holds (`SlotHold`) take places too. `capacity` is the template's
    capacity when the counter last went up; the CHECK constraints back the invariant 0 <= booked
    <= capacity.
    """

    id = models.BigAutoField(primary_key=True)
    # No index of its own: the unique constraint below leads with this column.
    template = models.ForeignKey(
        SlotTemplate, on_delete=models.CASCADE, related_name="days", db_index=False
    )
    date = models.DateField()
    booked = models.PositiveIntegerField(default=0)
    capacity = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=("template", "date"), name="slot_day_unique"),
            models.CheckConstraint(
                condition=Q(booked__lte=F("capacity")), name="slot_day_within_capacity"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.template_id} {self.date}: {self.booked}/{self.capacity}"


class SlotBooking(models.Model):
    """An order's delivery slot. Active while `released_at` is null.

    Kept after release (cancelled, failed) so the order still shows its slot. An order with an
    active booking cannot be deleted on its own (RESTRICT): its counter would be left wrong.
    """

    id = models.BigAutoField(primary_key=True)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    order = models.OneToOneField(
        "integrations.Order", on_delete=models.RESTRICT, related_name="slot_booking"
    )
    template = models.ForeignKey(SlotTemplate, on_delete=models.CASCADE, related_name="bookings")
    date = models.DateField()
    booked_at = models.DateTimeField(default=django_timezone.now)
    released_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(
                fields=("template", "date"),
                condition=Q(released_at__isnull=True),
                name="slot_booking_active",
            )
        ]

    def __str__(self) -> str:
        return f"{self.order_id} on {self.template_id} {self.date}"

    @property
    def is_active(self) -> bool:
        return self.released_at is None


class SlotHold(models.Model):
    """One place of a slot taken during a checkout, by one API key, until `expires_at`
    (docs/slot-holds.md). An ERP create with its id turns it into the booking (`used_at`).
    Expired holds count for nothing at once; `slots.delete_expired_holds` removes their rows.
    """

    id = models.UUIDField(primary_key=True, default=new_id, editable=False)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    api_key = models.ForeignKey(ApiKey, on_delete=models.CASCADE, related_name="+")
    template = models.ForeignKey(SlotTemplate, on_delete=models.CASCADE, related_name="holds")
    date = models.DateField()
    created_at = models.DateTimeField(default=django_timezone.now)
    expires_at = models.DateTimeField(db_index=True)
    used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            # The live holds of a slot, counted by every place taken (`slot_live_holds`).
            models.Index(
                fields=("template", "date"),
                condition=Q(used_at__isnull=True),
                name="slot_hold_unused",
            )
        ]

    def __str__(self) -> str:
        return f"hold {self.id} on {self.template_id} {self.date} until {self.expires_at}"
