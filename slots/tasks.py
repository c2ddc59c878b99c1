"""Celery interface of the slots app: periodic, id-free, safe to run twice."""

import logging

from celery import shared_task

from delivery.retention import retention_result
from slots.services import holds

logger = logging.getLogger(__name__)


@shared_task(name="slots.delete_expired_holds", acks_late=True, ignore_result=True)
def delete_expired_holds() -> int:
    """Expired slot holds already count for nothing; this only removes their rows. Periodic:
    logs a line only when it deleted some."""
    deleted = holds.slot_holds_expired_delete()
    task = "slots.delete_expired_holds"
    return retention_result(logger, task, "slot_holds", deleted, "expired slot holds")
