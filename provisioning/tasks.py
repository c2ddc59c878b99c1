"""Celery interface of the provisioning app: periodic clean-ups, safe to run twice."""

import logging

from celery import shared_task

from delivery.retention import retention_result
from provisioning import services

logger = logging.getLogger(__name__)


@shared_task(name="provisioning.delete_old_invites", acks_late=True, ignore_result=True)
def delete_old_invites() -> int:
    """Retention: invites accepted or expired 30 days ago (the setting)."""
    removed = services.invites_ended_delete()
    task = "provisioning.delete_old_invites"
    return retention_result(logger, task, "invites", removed, "ended invites")
