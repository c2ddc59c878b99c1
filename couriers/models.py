"""Couriers: drivers' access tokens, what couriers send from the door (stop events, photos,
proof of delivery or the reason of a failure) and where they are (contract "Couriers").

Files (photos, signatures) go through the `proofs` storage (settings STORAGES["proofs"]), never
a public media path: the rows keep their names in that storage, read back only through signed,
expiring URLs (couriers/proof_urls.py). Names, not FileFields: a FileField fixes its storage
when the model is loaded, and every read and write here goes through `storages["proofs"]`.
"""

from django.db import models
from django.db.models import Q
from django.utils import timezone

from delivery.ids import new_id
from integrations.models import FailureReason, IdempotencyRecord
from tenants.models import Driver, Organization


class DriverAccessToken(models.Model):
    """A driver's bearer token for the courier API: at most one per driver, stored as a SHA-256
    digest. Issuing a new one replaces the row's digest, so the old one ends in the same commit;
    a revoke deletes the row."""

    id = models.BigAutoField(primary_key=True)
    driver = models.OneToOneField(Driver, on_delete=models.CASCADE, related_name="access_token")
    digest = models.CharField(max_length=64, unique=True)
    #: the token's first characters, to tell tokens apart in admin (never enough to use one)
    prefix = models.CharField(max_length=16)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"{self.prefix}**** of {self.driver_id}"


class CourierPhoto(models.Model):
    """A photo a courier uploaded: decoded and re-encoded without metadata before it was stored."""

    id = models.UUIDField(primary_key=True, default=new_id, editable=False)
    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="courier_photos"
    )
    driver = models.ForeignKey(Driver, on_delete=models.CASCADE, related_name="photos")
    #: the name in the `proofs` storage
    file_name = models.CharField(max_length=300)
    content_type = models.CharField(max_length=20)
    width = models.PositiveIntegerField()
    height = models.PositiveIntegerField()
    size_bytes = models.PositiveIntegerField()
    created_at = models.DateTimeField(default=timezone.now)
    #: when the unused-photo retention found a proof using it, so that pass looks at each photo
    #: once (NULL: not seen in use yet); it goes with the files of its last proof
    seen_in_use_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("created_at", "id")
        indexes = [
            # Retention (couriers/services/retention.py): photos not yet seen in use, oldest first.
            models.Index(
                fields=("created_at", "id"),
                condition=Q(seen_in_use_at__isnull=True),
                name="courier_photo_unseen",
            )
        ]

    def __str__(self) -> str:
        return f"photo {self.id}"


class OutcomeStatus(models.TextChoices):
    DELIVERED = "delivered", "Delivered"
    FAILED = "failed", "Failed"


class StopProof(models.Model):
    """How a stop ended, as the courier recorded it at the door (contract "Couriers", "Proof"):
    one row per `delivered` or `failed` event, so a re-attempted order keeps each attempt's."""

    id = models.UUIDField(primary_key=True, default=new_id, editable=False)
    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="stop_proofs"
    )
    # No index of its own: `stop_proof_order` leads with it.
    order = models.ForeignKey(
        "integrations.Order", on_delete=models.CASCADE, related_name="stop_proofs", db_index=False
    )
    driver = models.ForeignKey(
        Driver, on_delete=models.SET_NULL, null=True, blank=True, related_name="stop_proofs"
    )
    status = models.CharField(max_length=20, choices=OutcomeStatus.choices)
    #: when it happened (the courier's clock; a late event carries its own)
    at = models.DateTimeField()
    lat = models.FloatField(null=True, blank=True)
    lng = models.FloatField(null=True, blank=True)
    accuracy_m = models.FloatField(null=True, blank=True)
    recipient_name = models.CharField(max_length=200, blank=True, default="")
    barcode = models.CharField(max_length=200, blank=True, default="")
    cash_collected = models.DecimalField(max_digits=12, decimal_places=2, null=True, blank=True)
    failure_reason = models.CharField(
        max_length=30, choices=FailureReason.choices, blank=True, default=""
    )
    note = models.CharField(max_length=2000, blank=True, default="")
    #: the signature PNG's name in the `proofs` storage ("" without one)
    signature_name = models.CharField(max_length=300, blank=True, default="")
    photos = models.ManyToManyField(CourierPhoto, blank=True, related_name="proofs")
    created_at = models.DateTimeField(default=timezone.now)
    #: when retention removed its files (signature, photos) after PROOF_FILE_RETENTION_DAYS; the
    #: rest of the proof stays with the order (NULL: its files, if any, are kept)
    files_removed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("created_at", "id")
        indexes = [
            models.Index(fields=("order", "created_at"), name="stop_proof_order"),
            # Retention (couriers/services/retention.py): proofs that still keep files.
            models.Index(
                fields=("created_at", "id"),
                condition=Q(files_removed_at__isnull=True),
                name="stop_proof_files_kept",
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=OutcomeStatus.values), name="stop_proof_status_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.status} at {self.at:%Y-%m-%d %H:%M}"


class EventType(models.TextChoices):
    PICKED_UP = "picked_up", "Picked up"
    IN_TRANSIT = "in_transit", "In transit"
    ARRIVED = "arrived", "Arrived"
    DELIVERED = "delivered", "Delivered"
    FAILED = "failed", "Failed"


class CourierEvent(models.Model):
    """A stop event a courier sent and the service accepted, `arrived` included (which changes no
    status): when it happened (`at`) and when it reached us (`received_at`)."""

    id = models.BigAutoField(primary_key=True)
    # No index of its own: `courier_event_order` leads with it.
    order = models.ForeignKey(
        "integrations.Order",
        on_delete=models.CASCADE,
        related_name="courier_events",
        db_index=False,
    )
    driver = models.ForeignKey(Driver, on_delete=models.CASCADE, related_name="courier_events")
    type = models.CharField(max_length=20, choices=EventType.choices)
    at = models.DateTimeField()
    received_at = models.DateTimeField(default=timezone.now)
    lat = models.FloatField(null=True, blank=True)
    lng = models.FloatField(null=True, blank=True)
    accuracy_m = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ("received_at", "id")
        indexes = [models.Index(fields=("order", "received_at"), name="courier_event_order")]

    def __str__(self) -> str:
        return f"{self.type} at {self.at:%Y-%m-%d %H:%M}"


class CourierIdempotencyKey(IdempotencyRecord):
    """A driver's Idempotency-Keys: the same rules as an API key's, scoped to the driver."""

    driver = models.ForeignKey(Driver, on_delete=models.CASCADE, related_name="+", db_index=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=("driver", "key"), name="courier_idempotency_unique")
        ]
        indexes = [models.Index(fields=("created_at",), name="courier_idempotency_created")]


class DriverPosition(models.Model):
    """A driver's newest known position (the newest point of the batches received)."""

    driver = models.OneToOneField(
        Driver, on_delete=models.CASCADE, primary_key=True, related_name="position"
    )
    lat = models.FloatField()
    lng = models.FloatField()
    accuracy_m = models.FloatField(null=True, blank=True)
    speed_mps = models.FloatField(null=True, blank=True)
    heading = models.FloatField(null=True, blank=True)
    at = models.DateTimeField()
    received_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"{self.driver_id} at {self.lat:.5f},{self.lng:.5f}"


class LocationPoint(models.Model):
    """One point of a driver's trail; points older than 24 hours (COURIER_TRAIL_RETENTION_HOURS)
    are removed."""

    id = models.BigAutoField(primary_key=True)
    driver = models.ForeignKey(
        Driver, on_delete=models.CASCADE, related_name="trail", db_index=False
    )
    at = models.DateTimeField()
    lat = models.FloatField()
    lng = models.FloatField()
    accuracy_m = models.FloatField(null=True, blank=True)
    speed_mps = models.FloatField(null=True, blank=True)
    heading = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ("driver", "at", "id")
        indexes = [
            models.Index(fields=("driver", "at"), name="location_point_driver_at"),
            # Retention (couriers.prune_trails): every driver's old points, oldest first.
            models.Index(fields=("at", "id"), name="location_point_at"),
        ]

    def __str__(self) -> str:
        return f"{self.driver_id} {self.at:%H:%M:%S}"
