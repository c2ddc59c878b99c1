"""Retention of the webhook outbox (docs/operations.md "Retention", docs/contract.md "Webhooks").

A delivered delivery goes WEBHOOK_DELIVERED_RETENTION_DAYS after it was delivered, a failed one
WEBHOOK_FAILED_RETENTION_DAYS after its last attempt (which `recover` reads: it refuses a `since`
older than that), each with its attempts; a pending one never goes. An event goes with the last
of its deliveries; one that never had a delivery (no URL, or a key that does not take it) goes
once older than the longer of the two retentions. Deletes go in batches that keep no request
waiting (delivery/retention.py).
"""

from dataclasses import dataclass
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


@dataclass(frozen=True)
class OutboxPruned:
    """What a run of `deliveries_expired_delete` removed: its batches of deliveries (`run`) and
    the events that went with the last of their deliveries."""

    run: retention.BatchRun
    events: int


def deliveries_expired_delete(
    *, now: datetime | None = None, batch_size: int | None = None, until: float | None = None
) -> OutboxPruned:
    """Deletes the deliveries past their retention, with their attempts and the events left
    without a delivery: delivered ones by `delivered_at`, then failed ones whose last attempt is
    older than their retention (found by the start of their last round, which is never later
    than its attempts)."""
    now = now or timezone.now()
    stop_at = retention.deadline() if until is None else until
    events: list[int] = []

    def delete_with_their_events(pks: list) -> int:
        event_ids = set(Delivery.objects.filter(pk__in=pks).values_list("event_id", flat=True))
        # Only the keys: Django loads the rows it cascades from, and needs no more of them.
        Delivery.objects.filter(pk__in=pks).only("pk").delete()
        events.append(_events_unreferenced_delete(event_ids))
        return len(pks)

    delivered = Delivery.objects.filter(
        status=DeliveryStatus.DELIVERED, delivered_at__lt=now - delivered_retention()
    )
    run = retention.in_batches(
        delivered,
        delete_with_their_events,
        order_by="delivered_at",
        batch_size=batch_size,
        until=stop_at,
    )
    cutoff = failed_kept_since(now=now)
    failed = Delivery.objects.filter(
        status=DeliveryStatus.FAILED, schedule_start__lt=cutoff
    ).exclude(
        Exists(DeliveryAttempt.objects.filter(delivery=OuterRef("pk"), started_at__gte=cutoff))
    )
    run += retention.in_batches(
        failed,
        delete_with_their_events,
        order_by="schedule_start",
        batch_size=batch_size,
        until=stop_at,
    )
    return OutboxPruned(run=run, events=sum(events))


def events_unreferenced_delete(
    *, now: datetime | None = None, batch_size: int | None = None, until: float | None = None
) -> int:
    """Deletes the events no delivery refers to, once older than the longer retention: those
    that never had a delivery, and any whose last delivery went without them. Walks the old
    events by the index on `created_at` and checks each batch's (plan-stable: few old events
    still have a delivery, a pending or redelivered one); returns how many went. An event's
    deliveries are created with it, so none can appear later."""
    cutoff = (now or timezone.now()) - max(delivered_retention(), failed_retention())
    return retention.in_batches(
        Event.objects.filter(created_at__lt=cutoff),
        _events_unreferenced_delete,
        order_by="created_at",
        batch_size=batch_size,
        until=until,
    ).removed


def _events_unreferenced_delete(event_ids) -> int:
    """Deletes those of the events that no delivery refers to; how many (nothing cascades from
    them: they have no delivery)."""
    deleted, _ = (
        Event.objects.filter(pk__in=event_ids)
        .exclude(Exists(Delivery.objects.filter(event=OuterRef("pk"))))
        .only("pk")
        .delete()
    )
    return deleted
