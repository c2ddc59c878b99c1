"""Orders of both integration families, their status history, window counters, idempotency.

One `Order` model serves the partner family (`partner-a/b/c`) and the ERP family; `family` says
which, `platform` names the key platform that created it. Every status change goes through
`integrations.services.orders.order_transition` (contract "Orders"), which writes
`OrderStatusEvent`.
"""

import secrets
import uuid

from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from delivery.ids import new_id
from tenants.models import ApiKey, Driver, Organization
from zones.models import Zone


def new_tracking_token() -> str:
    """192 random bits, URL-safe (contract "Tracking" asks for at least 128)."""
    return secrets.token_urlsafe(24)


class OrderFamily(models.TextChoices):
    PARTNER = "partner", "Partner"
    ERP = "erp", "ERP"


class OrderStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    DISPATCHING = "dispatching", "Dispatching"
    ASSIGNED = "assigned", "Assigned"
    PICKED_UP = "picked_up", "Picked up"
    IN_TRANSIT = "in_transit", "In transit"
    DELIVERED = "delivered", "Delivered"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


#: statuses whose orders no longer hold window or slot capacity
INACTIVE_STATUSES = (OrderStatus.CANCELLED, OrderStatus.FAILED)
TERMINAL_STATUSES = (OrderStatus.DELIVERED, OrderStatus.FAILED, OrderStatus.CANCELLED)


class PackageSize(models.TextChoices):
    SMALL = "small", "Small"
    MEDIUM = "medium", "Medium"
    LARGE = "large", "Large"


class TemperatureClass(models.TextChoices):
    AMBIENT = "Ambient", "Ambient"
    CHILLED = "Chilled", "Chilled"
    FROZEN = "Frozen", "Frozen"


class DeliveryMethod(models.TextChoices):
    MOTORCYCLE = "motorcycle", "Motorcycle"
    CAR = "car", "Car"
    REFRIGERATED = "refrigerated", "Refrigerated"


class ServiceType(models.TextChoices):
    STANDARD = "standard", "Standard"
    RETURN = "return", "Return"
    CLICK_COLLECT = "click_collect", "Click & collect"
    LOCKER = "locker", "Locker"
    ROUND = "round", "Round"


class FailureReason(models.TextChoices):
    """Why a delivery failed (contract "Couriers"): every `failed` names one."""

    RECIPIENT_ABSENT = "recipient_absent", "Recipient absent"
    ADDRESS_NOT_FOUND = "address_not_found", "Address not found"
    REFUSED = "refused", "Refused"
    DAMAGED = "damaged", "Damaged"
    ACCESS_DENIED = "access_denied", "Access denied"
    OTHER = "other", "Other"


class DeliveryWindowLoad(models.Model):
    """The booking counter of one partner delivery window of one zone (contract "Orders", "Slots and
    windows").

    Bookings of a window are serialized on this row: a conditional `UPDATE ... WHERE booked <
    capacity` takes its row lock, so concurrent requests queue on it and capacity can never be
    exceeded; the CHECK constraints back the invariant. `capacity` is the zone's
    `window_capacity` as of the last booking.
    """

    id = models.BigAutoField(primary_key=True)
    # No index of its own: the unique constraint below leads with this column.
    zone = models.ForeignKey(
        Zone, on_delete=models.CASCADE, related_name="window_loads", db_index=False
    )
    window_start = models.DateTimeField()
    window_end = models.DateTimeField()
    booked = models.PositiveIntegerField(default=0)
    capacity = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=("zone", "window_start"), name="window_load_unique"),
            models.CheckConstraint(
                condition=Q(booked__lte=F("capacity")), name="window_load_within_capacity"
            ),
        ]
        ordering = ("zone", "window_start")

    def __str__(self) -> str:
        return f"{self.zone_id} {self.window_start:%Y-%m-%d %H:%M}: {self.booked}/{self.capacity}"


class Order(models.Model):
    """A delivery order of either family (contract "Orders")."""

    id = models.UUIDField(primary_key=True, default=new_id, editable=False)
    # No index of its own: `order_unique_external_ref` and the two indexes below lead with it.
    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="orders", db_index=False
    )
    family = models.CharField(max_length=10, choices=OrderFamily.choices)
    platform = models.CharField(max_length=20, help_text="Platform of the key that created it")
    external_ref = models.CharField(max_length=100)
    status = models.CharField(
        max_length=20, choices=OrderStatus.choices, default=OrderStatus.PENDING
    )

    pickup_address = models.CharField(max_length=500, blank=True, default="")
    pickup_lat = models.FloatField(null=True, blank=True)
    pickup_lng = models.FloatField(null=True, blank=True)
    dropoff_address = models.CharField(max_length=500, blank=True, default="")
    dropoff_lat = models.FloatField(null=True, blank=True)
    dropoff_lng = models.FloatField(null=True, blank=True)
    recipient_name = models.CharField(max_length=200, blank=True, default="")
    recipient_phone = models.CharField(max_length=32, blank=True, default="")

    package_size = models.CharField(
        max_length=10, choices=PackageSize.choices, blank=True, default=""
    )
    weight_kg = models.DecimalField(max_digits=12, decimal_places=3, null=True, blank=True)
    temperature_class = models.CharField(
        max_length=10, choices=TemperatureClass.choices, blank=True, default=""
    )
    delivery_method = models.CharField(
        max_length=20, choices=DeliveryMethod.choices, blank=True, default=""
    )
    service_type = models.CharField(
        max_length=20, choices=ServiceType.choices, default=ServiceType.STANDARD
    )
    cod_amount = models.DecimalField(max_digits=12, decimal_places=2, null=True, blank=True)
    expected_barcode = models.CharField(max_length=200, blank=True, default="")
    notes = models.TextField(blank=True, default="")
    #: why the order failed (set on entering `failed`, contract "Couriers")
    failure_reason = models.CharField(
        max_length=30, choices=FailureReason.choices, blank=True, default=""
    )
    #: which delivery attempt this is, from 1; a re-attempt of a failed order adds one
    #: (contract "Couriers", "Re-attempts")
    attempt = models.PositiveSmallIntegerField(default=1, editable=False)

    # PROTECT: a zone with orders (history included) is never deleted under them; the
    # management API answers 409 `Zone ... is in use` and suggests disabling it instead.
    zone = models.ForeignKey(
        Zone, on_delete=models.PROTECT, null=True, blank=True, related_name="orders"
    )
    delivery_window_start = models.DateTimeField(null=True, blank=True)
    delivery_window_end = models.DateTimeField(null=True, blank=True)
    #: the partner window counter this order holds a place in (None: not counted anywhere)
    window_load = models.ForeignKey(
        DeliveryWindowLoad,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="orders",
        editable=False,
    )
    #: a future-dated order is held until 00:00 zone time of its delivery day (contract "Orders")
    held_until = models.DateTimeField(null=True, blank=True, editable=False)
    driver = models.ForeignKey(
        Driver, on_delete=models.SET_NULL, null=True, blank=True, related_name="orders"
    )
    #: the expected arrival at the dropoff, set with the driver by dispatch (contract "Dispatch");
    #: None until assigned, and again once unassigned
    eta = models.DateTimeField(null=True, blank=True, editable=False)
    #: the key that created it: a test key's orders may be simulated (docs/webhooks.md "Sandbox").
    #: No index: keys are revoked, never deleted, and an index would cost every order insert.
    api_key = models.ForeignKey(
        ApiKey,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="orders",
        db_index=False,
        editable=False,
    )
    # Unique by a constraint (`integrations_order_tracking_token_key`), not `unique=True`, which
    # adds a LIKE copy of its index that every insert would write and no query reads.
    tracking_token = models.CharField(max_length=64, default=new_tracking_token, editable=False)
    released_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=("organization", "external_ref"), name="order_unique_external_ref"
            ),
            models.UniqueConstraint(
                fields=("tracking_token",), name="integrations_order_tracking_token_key"
            ),
            models.CheckConstraint(
                condition=Q(status__in=OrderStatus.values), name="order_status_valid"
            ),
            models.CheckConstraint(
                condition=(Q(pickup_lat__isnull=True) | Q(pickup_lat__gte=-90, pickup_lat__lte=90))
                & (Q(pickup_lng__isnull=True) | Q(pickup_lng__gte=-180, pickup_lng__lte=180))
                & (Q(dropoff_lat__isnull=True) | Q(dropoff_lat__gte=-90, dropoff_lat__lte=90))
                & (Q(dropoff_lng__isnull=True) | Q(dropoff_lng__gte=-180, dropoff_lng__lte=180)),
                name="order_coordinates_in_range",
            ),
        ]
        indexes = [
            models.Index(fields=("organization", "created_at", "id"), name="order_org_created"),
            models.Index(fields=("organization", "status"), name="order_org_status"),
            models.Index(
                fields=("held_until",),
                condition=Q(status=OrderStatus.PENDING, held_until__isnull=False),
                name="order_held_pending",
            ),
        ]
        ordering = ("-created_at", "id")

    def __str__(self) -> str:
        return self.external_ref


class OrderStatusEvent(models.Model):
    """One status change of an order; the first one (from "" to `pending`) is its creation."""

    id = models.BigAutoField(primary_key=True)
    # No index of its own: `order_status_event_order` leads with it.
    order = models.ForeignKey(
        Order, on_delete=models.CASCADE, related_name="status_events", db_index=False
    )
    from_status = models.CharField(max_length=20, blank=True, default="")
    to_status = models.CharField(max_length=20, choices=OrderStatus.choices)
    at = models.DateTimeField(default=timezone.now)
    actor = models.CharField(max_length=200, blank=True, default="")
    reason = models.CharField(max_length=500, blank=True, default="")

    class Meta:
        ordering = ("at", "id")
        indexes = [models.Index(fields=("order", "at", "id"), name="order_status_event_order")]

    def __str__(self) -> str:
        return f"{self.from_status or '-'} -> {self.to_status}"


class IdempotencyStatus(models.TextChoices):
    IN_PROGRESS = "in_progress", "In progress"
    COMPLETED = "completed", "Completed"


class IdempotencyRecord(models.Model):
    """A claimed `Idempotency-Key` and its stored response (contract "Orders"), whoever owns it:
    each concrete table adds its owner, unique with `key` (integrations/services/idempotency.py
    `KeyScope`).

    The row is inserted before the work starts, so of concurrent requests with one key exactly
    one does the work; the others see it in progress or replay the stored response. Rows expire
    after 24 hours (`idempotency_keys_expire`).
    """

    id = models.BigAutoField(primary_key=True)
    key = models.CharField(max_length=255)
    request_hash = models.CharField(max_length=64)
    status = models.CharField(
        max_length=20, choices=IdempotencyStatus.choices, default=IdempotencyStatus.IN_PROGRESS
    )
    #: who holds an in-progress claim; the completing write must still match it
    claim_token = models.UUIDField(default=uuid.uuid4)
    locked_at = models.DateTimeField(default=timezone.now)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    response_body = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return self.key


class IdempotencyKey(IdempotencyRecord):
    """An API key's Idempotency-Keys."""

    # No index of its own: the unique constraint below leads with this column.
    api_key = models.ForeignKey(ApiKey, on_delete=models.CASCADE, related_name="+", db_index=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=("api_key", "key"), name="idempotency_key_unique")
        ]
        indexes = [models.Index(fields=("created_at",), name="idempotency_key_created")]
