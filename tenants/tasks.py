"""Celery interface of the tenants app: periodic clean-ups, safe to run twice."""

import logging

from celery import shared_task

from delivery.retention import retention_result
from tenants import services

logger = logging.getLogger(__name__)


@shared_task(name="tenants.delete_expired_auth_tokens", acks_late=True, ignore_result=True)
def delete_expired_auth_tokens() -> int:
    """Retention: management tokens past their 12 hours."""
    removed = services.auth_tokens_expired_delete()
    task = "tenants.delete_expired_auth_tokens"
    return retention_result(logger, task, "auth_tokens", removed, "expired management tokens")
