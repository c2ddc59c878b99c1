"""Celery interface of the webhook outbox: tasks take ids and are safe to run twice (contract
"Webhooks")."""

import logging

from celery import shared_task

from delivery.log_format import log_periodic_result
from delivery.retention import retention_result
from webhooks import queueing, retention, sending, services

logger = logging.getLogger(__name__)


@shared_task(name=queueing.DELIVER_TASK, acks_late=True, ignore_result=True)
def deliver(*delivery_ids: str, key: str | None = None) -> bool:
    """Makes the due attempts of these deliveries (then those of their destination's deliveries
    that wait for a slot); a duplicate message finds nothing to claim. `key`: their destination,
    which a new delivery's message names."""
    return sending.delivery_send(*delivery_ids, key=key)


@shared_task(name="webhooks.sweep", acks_late=True, ignore_result=True)
def sweep() -> int:
    """Queues due deliveries whose message is missing: retries, and messages lost at commit.
    Logs a line only when it queued some (Celery's own lines about this task are filtered out:
    it runs every few seconds)."""
    queued = services.deliveries_sweep()
    return log_periodic_result(logger, "webhooks.sweep", "queued", queued, "due deliveries")


@shared_task(name="webhooks.delete_old_deliveries", acks_late=True, ignore_result=True)
def delete_old_deliveries() -> int:
    """Retention: delivered deliveries go after 30 days, failed ones 90 days after their last
    attempt (the settings), with their attempts and then their events; pending ones never."""
    pruned = retention.deliveries_expired_delete()
    return retention_result(
        logger,
        "webhooks.delete_old_deliveries",
        "webhook_deliveries",
        pruned.run.removed,
        f"webhook deliveries and {pruned.events} of their events",
        along={"webhook_events": pruned.events},
    )


@shared_task(name="webhooks.delete_old_events", acks_late=True, ignore_result=True)
def delete_old_events() -> int:
    """Retention: events that never had a delivery, after the longer retention (90 days)."""
    removed = retention.events_unreferenced_delete()
    task = "webhooks.delete_old_events"
    return retention_result(logger, task, "webhook_events", removed, "webhook events")
