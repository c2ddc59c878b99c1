"""Writes of the webhook outbox: redelivering, recovering, sweeping (contract "Webhooks").

Events are emitted by `webhooks.events`; the schedule of attempts and publishing the delivery
task live in `webhooks.queueing`. The sweep, which the beat runs every few seconds, queues
again every due delivery whose message was lost (broker down at commit, worker gone).
"""

import logging
from collections.abc import Iterable
from datetime import datetime, timedelta
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.db.models import Count, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from webhooks import queueing, retention
from webhooks.errors import DeliveryNotFound, RecoverSinceBeyondRetention
from webhooks.models import Delivery, DeliveryAttempt, DeliveryStatus

logger = logging.getLogger(__name__)

#: deliveries queued per sweep run (the next run takes the rest)
SWEEP_BATCH_SIZE = 500
#: what a new round of attempts (a redelivery, a recovery) writes
_ROUND_FIELDS = [
    "url",
    "status",
    "round_start_attempts",
    "schedule_start",
    "next_attempt_at",
    "queued_at",
    "claim_token",
    "claimed_until",
    "delivered_at",
]


def delivery_round_start(delivery: Delivery, *, now: datetime) -> None:
    """Starts `delivery`'s round of attempts at `now`: its first attempt due at once, and marked
    queued (the caller publishes its message, or sends it itself), so the sweep does not queue it
    a second time. Saving it is the caller's."""
    delivery.schedule_start = delivery.next_attempt_at = delivery.queued_at = now


@transaction.atomic
def delivery_redeliver(*, delivery: Delivery) -> Delivery:
    """Starts a new round of attempts at once, on the full schedule (contract "Webhooks").

    The URL is taken again from the key, so a corrected `webhookUrl` is used. An attempt in
    flight keeps its record but no longer decides the delivery's state.
    """
    delivery = (
        Delivery.objects.select_for_update(of=("self",))
        .select_related("api_key")
        .filter(pk=delivery.pk)
        .first()
    )
    if delivery is None:  # deleted by retention since it was read
        raise DeliveryNotFound()
    if delivery.api_key.is_active and delivery.api_key.webhook_url:
        delivery.url = delivery.api_key.webhook_url
    delivery.status = DeliveryStatus.PENDING
    delivery.round_start_attempts = delivery.attempts
    delivery_round_start(delivery, now=timezone.now())
    delivery.claim_token = delivery.claimed_until = delivery.delivered_at = None
    delivery.save(update_fields=_ROUND_FIELDS)
    queueing.delivery_enqueue_on_commit(delivery.id)
    return delivery


def deliveries_recover(
    *,
    organization_id: UUID | str,
    since: datetime | None = None,
    until: datetime | None = None,
    api_key_id: UUID | str | None = None,
    delivery_ids: Iterable[UUID | str] | None = None,
) -> int:
    """Queues again every `failed` delivery of the organization whose last attempt was made in
    [since, until) (optionally of one key, or among `delivery_ids`); returns how many.

    Each starts a new round of attempts, as a redelivery does (to the key's current URL), oldest
    event first: per destination one is queued at once and the others wait for a slot, which
    the claim that ends takes for the next in line (sending.delivery_send), so a receiver that
    was down gets the events back in the order they happened (strictly so with one attempt in
    flight per destination). Each delivery is
    recovered once, even by concurrent calls (docs/contract.md "Management API").

    A `since` older than the failed deliveries' retention is refused (400): the deliveries
    before it were deleted, and a recovery that silently skips them would look complete.
    """
    if since is not None and since < retention.failed_kept_since():
        raise RecoverSinceBeyondRetention(settings.WEBHOOK_FAILED_RETENTION_DAYS)
    deliveries = Delivery.objects.filter(
        organization_id=organization_id, status=DeliveryStatus.FAILED
    )
    if api_key_id is not None:
        deliveries = deliveries.filter(api_key_id=api_key_id)
    if delivery_ids is not None:
        deliveries = deliveries.filter(pk__in=list(delivery_ids))
    if since is not None or until is not None:
        last_attempt_at = Subquery(
            DeliveryAttempt.objects.filter(delivery=OuterRef("pk"))
            .order_by("-number", "-id")
            .values("started_at")[:1]
        )
        deliveries = deliveries.annotate(ended_at=last_attempt_at)
        if since is not None:
            deliveries = deliveries.filter(ended_at__gte=since)
        if until is not None:
            deliveries = deliveries.filter(ended_at__lt=until)
    now = timezone.now()
    with transaction.atomic():
        rows = list(
            deliveries.select_for_update(of=("self",))
            .select_related("api_key")
            .order_by("event__created_at", "created_at", "id")
        )
        first_per_destination: dict = {}
        for n, delivery in enumerate(rows, start=1):
            delivery.status = DeliveryStatus.PENDING
            delivery.round_start_attempts = delivery.attempts
            # Due a microsecond apart, oldest first: the order the waiting deliveries of a
            # destination are sent in (sending.delivery_send), and the sweep's order.
            delivery_round_start(delivery, now=now + timedelta(microseconds=n))
            delivery.claim_token = delivery.claimed_until = delivery.delivered_at = None
            if delivery.api_key.is_active and delivery.api_key.webhook_url:
                delivery.url = delivery.api_key.webhook_url
            # Only the oldest of each destination gets a message; the others wait for a slot.
            if first_per_destination.setdefault(delivery.api_key_id, delivery) is not delivery:
                delivery.queued_at = None
        Delivery.objects.bulk_update(rows, fields=_ROUND_FIELDS, batch_size=500)
        for delivery in first_per_destination.values():
            queueing.delivery_enqueue_on_commit(delivery.id)
    logger.info("recovered %s failed webhook deliveries of %s", len(rows), organization_id)
    return len(rows)


def deliveries_sweep(*, now: datetime | None = None, limit: int = SWEEP_BATCH_SIZE) -> int:
    """Queues every pending delivery due by now + countdown_horizon() that has no live message
    or claim, to run at its due time; returns how many.

    Looking ahead is what keeps attempts on time: a retry due between two runs is queued by
    the run before with a countdown, instead of waiting for the run after. Safe with several
    sweepers: rows are taken with SKIP LOCKED and marked `queued_at` in the same transaction,
    so each due delivery is queued once per REQUEUE_AFTER_SECONDS.
    """
    now = now or timezone.now()
    stale = now - timedelta(seconds=queueing.REQUEUE_AFTER_SECONDS)
    # A destination at its in-flight limit sends its waiting deliveries as its claims end
    # (sending.delivery_send): queuing them now would only make them wait again.
    in_flight = (
        Delivery.objects.filter(
            api_key_id=OuterRef("api_key_id"),
            status=DeliveryStatus.PENDING,
            claimed_until__gt=queueing.in_flight_after(now),
        )
        .order_by()
        .values("api_key_id")
        .annotate(n=Count("claim_token", distinct=True))
        .values("n")
    )
    with transaction.atomic():
        due = dict(
            Delivery.objects.select_for_update(skip_locked=True)
            .filter(
                status=DeliveryStatus.PENDING,
                next_attempt_at__lte=now + queueing.countdown_horizon(),
            )
            .filter(Q(queued_at__isnull=True) | Q(queued_at__lt=stale))
            .filter(queueing.unclaimed(now))
            .annotate(in_flight=Coalesce(Subquery(in_flight), 0))
            .filter(in_flight__lt=queueing.in_flight_limit())
            .order_by("next_attempt_at")
            .values_list("id", "next_attempt_at")[:limit]
        )
        if due:
            Delivery.objects.filter(pk__in=due).update(queued_at=now)
            for delivery_id, due_at in due.items():
                queueing.delivery_enqueue_on_commit(delivery_id, eta=due_at)
    return len(due)
