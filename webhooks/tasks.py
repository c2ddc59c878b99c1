"""Celery interface of the webhook outbox: tasks take ids and are safe to run twice (contract
"Webhooks")."""

import logging

from celery import shared_task

from delivery.log_format import log_periodic_result
from webhooks import queueing, sending, services

logger = logging.getLogger(__name__)


@shared_task(name=queueing.DELIVER_TASK, acks_late=True, ignore_result=True)
def deliver(*delivery_ids: str) -> bool:
    """Makes the due attempts of these deliveries (then those of their destination's deliveries
    that wait for a slot); a duplicate message finds nothing to claim."""
    return sending.delivery_send(*delivery_ids)


@shared_task(name="webhooks.sweep", acks_late=True, ignore_result=True)
def sweep() -> int:
    """Queues due deliveries whose message is missing: retries, and messages lost at commit.
    Logs a line only when it queued some (Celery's own lines about this task are filtered out:
    it runs every few seconds)."""
    queued = services.deliveries_sweep()
    return log_periodic_result(logger, "webhooks.sweep", "queued", queued, "due deliveries")
