"""Celery interface of the webhook outbox: tasks take ids and are safe to run twice (contract
"Webhooks")."""

import logging

from celery import shared_task

from delivery.log_format import log_periodic_result
from webhooks import queueing, sending, services

logger = logging.getLogger(__name__)


@shared_task(name=queueing.DELIVER_TASK, acks_late=True, ignore_result=True)
def deliver(delivery_id: str) -> bool:
    """Makes the due attempt of one delivery; a duplicate message finds nothing to claim."""
    return sending.delivery_attempt(delivery_id=delivery_id)


@shared_task(name=queueing.DELIVER_BATCH_TASK, acks_late=True, ignore_result=True)
def deliver_batch(delivery_ids: list[str]) -> int:
    """Makes the due attempts of several deliveries, over one connection per destination; a
    duplicate message finds nothing to claim."""
    return sending.deliveries_send(delivery_ids)


@shared_task(name=queueing.DELIVER_DUE_TASK, acks_late=True, ignore_result=True)
def deliver_due(after_at: str | None = None, after_id: str | None = None) -> int:
    """Makes the due attempts of every delivery due now (one wake-up for the transactions that
    committed since the last one; with `after_*`, a follow-up that reads on after them); a
    duplicate message finds nothing to claim."""
    after = (after_at, after_id) if after_at is not None and after_id is not None else None
    return sending.due_deliveries_send(after)


@shared_task(name="webhooks.sweep", acks_late=True, ignore_result=True)
def sweep() -> int:
    """Queues due deliveries whose message is missing: retries, and messages lost at commit.
    Logs a line only when it queued some (Celery's own lines about this task are filtered out:
    it runs every few seconds)."""
    queued = services.deliveries_sweep()
    return log_periodic_result(logger, "webhooks.sweep", "queued", queued, "due deliveries")
