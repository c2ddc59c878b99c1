"""Celery interface of the couriers app: periodic clean-ups, safe to run twice."""

import logging

from celery import shared_task

from couriers.services import events as event_services
from couriers.services import locations as location_services
from delivery.log_format import log_periodic_result
from integrations.services import idempotency

logger = logging.getLogger(__name__)


@shared_task(name="couriers.expire_idempotency_keys", acks_late=True, ignore_result=True)
def expire_idempotency_keys() -> int:
    """contract "Couriers": drivers' Idempotency-Keys are kept 24 hours, as API keys' are."""
    deleted = idempotency.idempotency_keys_expire(scope=event_services.DRIVER_KEYS)
    task = "couriers.expire_idempotency_keys"
    return log_periodic_result(logger, task, "deleted", deleted, "expired Idempotency-Keys")


@shared_task(name="couriers.prune_trails", acks_late=True, ignore_result=True)
def prune_trails() -> int:
    """contract "Couriers": 24 hours of trail are kept, also of drivers who stopped sending."""
    deleted = location_services.trails_prune()
    return log_periodic_result(logger, "couriers.prune_trails", "deleted", deleted, "trail points")
