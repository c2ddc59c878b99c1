"""The lifecycle sandbox: drives an order created with a test key through its life on a short
schedule, so a partner sees every webhook and the tracking page change (docs/webhooks.md
"Sandbox").

Every step is an ordinary `order_transition`, so the sandbox emits exactly the events and
history a real fleet would. Steps run as Celery tasks, one per status, each scheduling the next
`step_seconds` later; a step only acts when the order is still where it expects it, so a
duplicate message, a second simulation or a human moving the order meanwhile ends the chain
instead of skipping a status.
"""

import logging
from dataclasses import dataclass
from uuid import UUID

from kombu.exceptions import KombuError
from redis.exceptions import RedisError

from delivery.celery import app as celery_app
from delivery.errors import ApplicationError, ServiceUnavailable
from integrations import selectors
from integrations.errors import OrderNotFromTestKey, TransitionNotAllowed
from integrations.models import Order, OrderStatus
from integrations.services import orders as order_services
from tenants import services as tenant_services
from tenants.models import ApiKey, Driver

logger = logging.getLogger(__name__)

STEP_TASK = "integrations.simulate_order_step"
OUTCOMES = (OrderStatus.DELIVERED, OrderStatus.FAILED)
DEFAULT_STEP_SECONDS = 5
MIN_STEP_SECONDS = 1
MAX_STEP_SECONDS = 300

#: the sandbox driver of an organization: its vehicle type marks it (Driver has no test flag)
SANDBOX_DRIVER_NAME = "Sandbox driver"
SANDBOX_VEHICLE_TYPE = "sandbox"
FAILURE_REASON = "Sandbox: simulated failed delivery"

_DRIVEN = (OrderStatus.ASSIGNED, OrderStatus.PICKED_UP, OrderStatus.IN_TRANSIT)


@dataclass(frozen=True)
class Simulation:
    order: Order
    outcome: str
    step_seconds: int
    steps: list[str]
    driver: Driver


def simulation_steps(*, status: str, outcome: str) -> list[str]:
    """The statuses still to enter from `status`, in order: `[]` for a terminal order."""
    path = [*_DRIVEN, outcome]
    if status in (OrderStatus.PENDING, OrderStatus.DISPATCHING):
        return path
    if status in _DRIVEN:
        return path[path.index(status) + 1 :]
    return []


def order_simulation_start(
    *,
    organization_id: UUID | str,
    order_id: UUID | str,
    outcome: str,
    step_seconds: int = DEFAULT_STEP_SECONDS,
    actor: str = "",
) -> Simulation:
    """Schedules the order's way to `outcome`; its first step runs at once.

    - 404 `Order not found` for another organization's or an unknown order;
    - 409 `Order <ref> was not created with a test key`;
    - 409 `Order <ref> cannot be <outcome verb> in status <status>` for a terminal order;
    - 503 when the broker cannot take the first step.
    """
    if outcome not in OUTCOMES:
        raise ValueError(f"unknown simulation outcome {outcome!r}")
    if not MIN_STEP_SECONDS <= step_seconds <= MAX_STEP_SECONDS:
        raise ValueError(f"step_seconds out of range: {step_seconds}")
    order = selectors.order_get(organization_id=organization_id, order_id=order_id)
    if not (
        order.api_key_id is not None
        and ApiKey.objects.filter(pk=order.api_key_id, test=True).exists()
    ):
        raise OrderNotFromTestKey(order.external_ref)
    steps = simulation_steps(status=order.status, outcome=outcome)
    if not steps:
        raise TransitionNotAllowed(
            external_ref=order.external_ref,
            verb=order_services.TRANSITION_VERBS[outcome],
            status=order.status,
        )
    driver = order.driver if order.status in _DRIVEN and order.driver else None
    if driver is None:
        driver = sandbox_driver_get_or_create(organization_id=organization_id)
    published = _step_schedule(
        order_id=order.id,
        from_status=order.status,
        to_status=steps[0],
        outcome=outcome,
        step_seconds=step_seconds,
        driver_id=driver.id,
        actor=actor,
        countdown=0,
    )
    if not published:
        raise ServiceUnavailable()
    return Simulation(
        order=order, outcome=outcome, step_seconds=step_seconds, steps=steps, driver=driver
    )


def sandbox_driver_get_or_create(*, organization_id: UUID | str) -> Driver:
    """The organization's active sandbox driver, created the first time it is needed."""
    driver = (
        Driver.objects.filter(
            organization_id=organization_id,
            name=SANDBOX_DRIVER_NAME,
            vehicle_type=SANDBOX_VEHICLE_TYPE,
            is_active=True,
        )
        .order_by("created_at", "id")
        .first()
    )
    if driver is not None:
        return driver
    return tenant_services.driver_create(
        organization_id=organization_id,
        name=SANDBOX_DRIVER_NAME,
        vehicle_type=SANDBOX_VEHICLE_TYPE,
    )


def order_simulation_step(
    *,
    order_id: UUID | str,
    from_status: str,
    to_status: str,
    outcome: str,
    step_seconds: int,
    driver_id: UUID | str | None = None,
    actor: str = "",
) -> str | None:
    """One step: moves the order from `from_status` to `to_status` and schedules the next.

    Returns the status entered, or None when the order is no longer in `from_status` (a
    duplicate message, another simulation, a human) or the machine refuses: then the chain ends.
    """
    order = Order.objects.filter(pk=order_id).first()
    if order is None or order.status != from_status:
        logger.info("sandbox step %s -> %s of %s skipped", from_status, to_status, order_id)
        return None
    driver = None
    if to_status == OrderStatus.ASSIGNED:
        driver = Driver.objects.filter(pk=driver_id, organization_id=order.organization_id).first()
    try:
        order_services.order_transition(
            order=order,
            to_status=to_status,
            actor=actor,
            driver=driver,
            reason=FAILURE_REASON if to_status == OrderStatus.FAILED else "",
        )
    except ApplicationError as exc:
        # A racing duplicate already took this step, or the driver went away: stop here.
        logger.info("sandbox step of %s refused: %s", order_id, exc)
        return None
    remaining = simulation_steps(status=to_status, outcome=outcome)
    if remaining:
        _step_schedule(
            order_id=order.id,
            from_status=to_status,
            to_status=remaining[0],
            outcome=outcome,
            step_seconds=step_seconds,
            driver_id=driver_id,
            actor=actor,
            countdown=step_seconds,
        )
    return to_status


def _step_schedule(*, countdown: int, **step) -> bool:
    """Publishes one step by task name (the task module calls this one); False when the broker
    is unavailable."""
    kwargs = {
        name: str(value) if name in ("order_id", "driver_id") else value
        for name, value in step.items()
    }
    # No reconnecting: a broker that is away answers the request in a moment, not seconds.
    options = {**(celery_app.conf.broker_transport_options or {}), "max_retries": 0}
    try:
        with celery_app.connection_for_write(transport_options=options) as connection:
            celery_app.send_task(
                STEP_TASK, kwargs=kwargs, countdown=countdown, retry=False, connection=connection
            )
    except (KombuError, RedisError, OSError) as exc:
        logger.error("sandbox step of %s not queued: %s", step["order_id"], exc)
        return False
    return True
