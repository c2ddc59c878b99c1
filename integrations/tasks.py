"""Celery interface of the integrations app: small tasks calling services, safe to run twice."""

import logging

from celery import shared_task

from delivery.log_format import log_periodic_result
from delivery.retention import retention_result
from integrations.partner import services as partner_services
from integrations.services import idempotency, sandbox

logger = logging.getLogger(__name__)


@shared_task(name="integrations.release_held_orders", acks_late=True, ignore_result=True)
def release_held_orders() -> int:
    """contract "Orders": held orders are released at 00:00 zone time of their delivery day.
    Periodic: logs a line only when it released some."""
    released = partner_services.held_orders_release()
    task = "integrations.release_held_orders"
    return log_periodic_result(logger, task, "released", released, "held orders")


@shared_task(name="integrations.expire_idempotency_keys", acks_late=True, ignore_result=True)
def expire_idempotency_keys() -> int:
    """contract "Orders": Idempotency-Keys are kept 24 hours. Periodic: logs a line only when it
    deleted some."""
    deleted = idempotency.idempotency_keys_expire()
    task = "integrations.expire_idempotency_keys"
    return retention_result(logger, task, "idempotency_keys", deleted, "expired Idempotency-Keys")


@shared_task(name=sandbox.STEP_TASK, acks_late=True, ignore_result=True)
def simulate_order_step(**step) -> str | None:
    """One status of a sandbox simulation; re-checks the order's status, so safe to run twice."""
    return sandbox.order_simulation_step(**step)
