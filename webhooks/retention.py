"""Retention of the webhook outbox (docs/operations.md "Retention", docs/contract.md "Webhooks").

A delivered delivery goes WEBHOOK_DELIVERED_RETENTION_DAYS after it was delivered, a failed one
WEBHOOK_FAILED_RETENTION_DAYS after its last attempt (which `recover` reads: it refuses a `since`
older than that), each with its attempts; a pending one never goes. An event is kept while any
delivery of it is kept; one left with none goes once it is older than the delivered retention.
Deletes go in batches that keep no request waiting (delivery/retention.py).
"""

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Exists, OuterRef
from django.utils import timezone

from delivery import retention
from webhooks.models import Delivery, DeliveryAttempt, DeliveryStatus, Event


def delivered_retention() -> timedelta:
    return timedelta(days=settings.WEBHOOK_DELIVERED_RETENTION_DAYS)


def failed_retention() -> timedelta:
    return timedelta(days=settings.WEBHOOK_FAILED_RETENTION_DAYS)


def failed_kept_since(*, now: datetime | None = None) -> datetime:
    """The oldest last attempt of a failed delivery that is still kept: `recover`'s earliest
    `since`."""
    return (now or timezone.now()) - failed_retention()


def deliveries_expired_delete(
    *, now: datetime | None = None, batch_size: int | None = None, until: float | None = None
) -> retention.BatchRun:
    """Deletes the deliveries past their retention, with their attempts: delivered ones by
    `delivered_at`, then failed ones whose last attempt is older than their retention (found
    by the start of their last round, which is never later than its attempts)."""
    now = now or timezone.now()
    stop_at = retention.deadline() if until is None else until
    delivered = Delivery.objects.filter(
        status=DeliveryStatus.DELIVERED, delivered_at__lt=now - delivered_retention()
    )
    run = retention.delete_in_batches(
        delivered, order_by="delivered_at", batch_size=batch_size, until=stop_at
    )
    cutoff = failed_kept_since(now=now)
    failed = Delivery.objects.filter(
        status=DeliveryStatus.FAILED, schedule_start__lt=cutoff
    ).exclude(
        Exists(DeliveryAttempt.objects.filter(delivery=OuterRef("pk"), started_at__gte=cutoff))
    )
    return run + retention.delete_in_batches(
        failed, order_by="schedule_start", batch_size=batch_size, until=stop_at
    )


def events_unreferenced_delete(
    *, now: datetime | None = None, batch_size: int | None = None, until: float | None = None
) -> retention.BatchRun:
    """Deletes the events no delivery refers to (their deliveries were deleted, or they never had
    one: no URL, or a key that does not take them) once older than the delivered retention. An
    event's deliveries are created with it, so none can appear later."""
    cutoff = (now or timezone.now()) - delivered_retention()
    unreferenced = Event.objects.filter(created_at__lt=cutoff).exclude(
        Exists(Delivery.objects.filter(event=OuterRef("pk")))
    )
    return retention.delete_in_batches(
        unreferenced, order_by="created_at", batch_size=batch_size, until=until
    )
