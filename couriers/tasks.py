"""Celery interface of the couriers app: periodic clean-ups, safe to run twice."""

import logging

from celery import shared_task

from couriers.services import events as event_services
from couriers.services import locations as location_services
from couriers.services import retention
from delivery.retention import retention_result
from integrations.services import idempotency

logger = logging.getLogger(__name__)


@shared_task(name="couriers.expire_idempotency_keys", acks_late=True, ignore_result=True)
def expire_idempotency_keys() -> int:
    """contract "Couriers": drivers' Idempotency-Keys are kept 24 hours, as API keys' are."""
    deleted = idempotency.idempotency_keys_expire(scope=event_services.DRIVER_KEYS)
    task = "couriers.expire_idempotency_keys"
    return retention_result(
        logger, task, "courier_idempotency_keys", deleted, "expired Idempotency-Keys"
    )


@shared_task(name="couriers.prune_trails", acks_late=True, ignore_result=True)
def prune_trails() -> int:
    """contract "Couriers": 24 hours of trail are kept, also of drivers who stopped sending."""
    deleted = location_services.trails_prune()
    return retention_result(
        logger, "couriers.prune_trails", "trail_points", deleted, "trail points"
    )


@shared_task(name="couriers.delete_old_proof_files", acks_late=True, ignore_result=True)
def delete_old_proof_files() -> int:
    """Retention: signatures and photos of proofs older than 180 days (the setting)."""
    removed = retention.proof_files_expired_delete()
    task = "couriers.delete_old_proof_files"
    return retention_result(logger, task, "proof_files", removed, "proof files")


@shared_task(name="couriers.delete_unused_photos", acks_late=True, ignore_result=True)
def delete_unused_photos() -> int:
    """Retention: photos no proof uses, 24 hours after their upload (the setting)."""
    removed = retention.photos_unused_delete()
    task = "couriers.delete_unused_photos"
    return retention_result(logger, task, "courier_photos", removed, "unused photos")
