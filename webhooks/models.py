"""The webhook outbox (contract "Webhooks"): Event → Delivery → DeliveryAttempt (Saleor's shape).

An Event is written in the transaction of the change that causes it; its Delivery (one per
destination, none when no URL is configured) is the unit of work of the Celery workers; every
HTTP call made for a delivery leaves a DeliveryAttempt.
"""

from django.core.serializers.json import DjangoJSONEncoder
from django.db import models
from django.db.models import Q
from django.utils import timezone

from delivery.ids import new_id
from tenants.models import ApiKey, Organization


class Family(models.TextChoices):
    PARTNER = "partner", "Partner"
    ERP = "erp", "ERP"


class Event(models.Model):
    """One notification: its name, its contract id (`event_id`) and its payload.

    Hour-bucketed ERP events are `coalescible`: while `is_open` (not yet picked up for sending)
    a newer change replaces the payload instead of adding a second event. The first claim of its
    delivery closes the event; a later change in the same hour opens a new one with the same id.
    """

    id = models.UUIDField(primary_key=True, default=new_id, editable=False)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    family = models.CharField(max_length=10, choices=Family.choices)
    name = models.CharField(max_length=100)
    event_id = models.CharField(max_length=255)
    # UUIDs, dates and decimals are stored as strings, as API responses write them.
    payload = models.JSONField(encoder=DjangoJSONEncoder)
    coalescible = models.BooleanField(default=False)
    is_open = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            # An explicit id names one event for ever (emitting it again is a no-op) ...
            models.UniqueConstraint(
                fields=("organization", "event_id"),
                condition=Q(coalescible=False),
                name="webhook_event_id_unique",
            ),
            # ... an hour-bucketed id has at most one unsent event at a time (contract "Webhooks").
            models.UniqueConstraint(
                fields=("organization", "event_id"),
                condition=Q(is_open=True),
                name="webhook_event_one_open_per_id",
            ),
        ]
        indexes = [
            # Retention (webhooks/retention.py): the oldest events first.
            models.Index(fields=("created_at", "id"), name="webhook_event_created"),
        ]
        ordering = ("-created_at", "id")

    def __str__(self) -> str:
        return self.event_id


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    DELIVERED = "delivered", "Delivered"
    FAILED = "failed", "Failed"


class Delivery(models.Model):
    """Sending one event to one URL, with its retry schedule kept in the database.

    `next_attempt_at` is when the next attempt is due, set exactly while the delivery is pending
    (a constraint: the claim finds a destination's pending deliveries by it); attempt
    k of the current round is due `WEBHOOK_RETRY_SCHEDULE[k-1]` seconds after `schedule_start`.
    A worker owns an attempt while `claim_token` is its token and `claimed_until` is ahead;
    `queued_at` says when a Celery message was last published (NULL: none is on its way, as
    for a delivery waiting for a slot of its destination), so the sweep re-queues only
    deliveries whose message is missing.
    """

    id = models.UUIDField(primary_key=True, default=new_id, editable=False)
    # No index of its own: `webhook_delivery_org_recent` and `_org_status` lead with it.
    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="deliveries")
    api_key = models.ForeignKey(ApiKey, on_delete=models.CASCADE, related_name="+")
    url = models.URLField(max_length=2000)
    status = models.CharField(
        max_length=10, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    round_start_attempts = models.PositiveIntegerField(default=0)
    schedule_start = models.DateTimeField(default=timezone.now)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    queued_at = models.DateTimeField(null=True, blank=True)
    claim_token = models.UUIDField(null=True, blank=True)
    claimed_until = models.DateTimeField(null=True, blank=True)
    last_status_code = models.PositiveIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True, default="")
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "deliveries"
        constraints = [
            models.CheckConstraint(
                condition=Q(status=DeliveryStatus.PENDING, next_attempt_at__isnull=False)
                | (~Q(status=DeliveryStatus.PENDING) & Q(next_attempt_at__isnull=True)),
                name="webhook_delivery_due_while_pending",
            )
        ]
        indexes = [
            # The sweep: due pending deliveries.
            models.Index(
                fields=("next_attempt_at",),
                condition=Q(status="pending"),
                name="webhook_delivery_due",
            ),
            # A claim's due deliveries of its destination (statements.CLAIM), on this index alone:
            # its conditions do not say `status`, so `webhook_delivery_due` (every destination's
            # due rows) is no plan for it, whatever another destination's backlog.
            models.Index(
                fields=("api_key", "next_attempt_at", "id"),
                condition=Q(next_attempt_at__isnull=False),
                name="webhook_delivery_claimable",
            ),
            # The in-flight limit per destination: live claims of a key (statements.CLAIM).
            models.Index(
                fields=("api_key",),
                condition=Q(claimed_until__isnull=False),
                name="webhook_delivery_in_flight",
            ),
            # A freed slot goes to the destination's oldest waiting delivery (delivery_send).
            models.Index(
                fields=("api_key", "next_attempt_at", "id"),
                condition=Q(next_attempt_at__isnull=False, queued_at__isnull=True),
                name="webhook_delivery_waiting",
            ),
            # The management list: newest first per organization, optionally by status.
            models.Index(
                fields=("organization", "-created_at", "-id"), name="webhook_delivery_org_recent"
            ),
            models.Index(
                fields=("organization", "status", "-created_at", "-id"),
                name="webhook_delivery_org_status",
            ),
            # Retention (webhooks/retention.py): delivered ones by when, failed ones by the start
            # of their last round (their last attempt is at most the schedule's length later).
            models.Index(
                fields=("delivered_at", "id"),
                condition=Q(status="delivered"),
                name="webhook_delivery_delivered",
            ),
            models.Index(
                fields=("schedule_start", "id"),
                condition=Q(status="failed"),
                name="webhook_delivery_failed",
            ),
        ]
        ordering = ("-created_at", "-id")

    def __str__(self) -> str:
        return f"{self.event} → {self.url} ({self.status})"


class DeliveryAttempt(models.Model):
    """One HTTP call: when, how it ended (status code or error) and how long it took."""

    id = models.BigAutoField(primary_key=True)
    # No index of its own: `webhook_attempt_delivery` leads with it.
    delivery = models.ForeignKey(
        Delivery, on_delete=models.CASCADE, related_name="attempt_set", db_index=False
    )
    number = models.PositiveIntegerField()
    started_at = models.DateTimeField()
    status_code = models.PositiveIntegerField(null=True, blank=True)
    latency_ms = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True, default="")
    succeeded = models.BooleanField(default=False)

    class Meta:
        ordering = ("delivery", "number", "id")
        indexes = [models.Index(fields=("delivery", "number"), name="webhook_attempt_delivery")]

    def __str__(self) -> str:
        return f"attempt {self.number} of {self.delivery_id}"
