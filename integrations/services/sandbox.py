"""The lifecycle sandbox: drives an order created with a test key through its life on a short
schedule, so a partner sees every webhook and the tracking page change (docs/webhooks.md
"Sandbox").

Every step is an ordinary `order_transition`, so the sandbox emits exactly the events and
history a real fleet would. Steps run as Celery tasks, one per status, each scheduling the next
`step_seconds` later; a step only acts when the order is still where it expects it, so a
duplicate message or a human moving the order meanwhile ends the chain instead of skipping a
status.

One simulation per order at a time: starting one claims the order in Redis (a token, with an
expiry); each step of that chain renews the claim and the last one (or the step that ends the
chain early) releases it. A second start meanwhile is a 409. The expiry (the steps still to go,
times `step_seconds`, plus CLAIM_MARGIN_SECONDS) frees an order whose chain was lost with a
worker; a late step of a chain whose claim expired takes it again when nobody else has.
"""

import functools
import logging
import uuid
from dataclasses import dataclass
from uuid import UUID

import redis
from django.conf import settings
from kombu.exceptions import KombuError
from redis.exceptions import RedisError

from delivery.celery import app as celery_app
from delivery.errors import ApplicationError, ServiceUnavailable
from integrations import selectors
from integrations.errors import OrderNotFromTestKey, SimulationInProgress, TransitionNotAllowed
from integrations.models import FailureReason, Order, OrderStatus
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

#: how long past its last planned step a simulation's claim outlives a chain that went silent
CLAIM_MARGIN_SECONDS = 60


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
    - 409 `Order <ref> is already being simulated` while another simulation of it runs;
    - 503 when Redis or the broker cannot take the claim or the first step.
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
    simulation_id = uuid.uuid4().hex
    if not _claim(order.id, simulation_id, seconds=_claim_seconds(steps, step_seconds)):
        raise SimulationInProgress(order.external_ref)
    published = _step_schedule(
        order_id=order.id,
        from_status=order.status,
        to_status=steps[0],
        outcome=outcome,
        step_seconds=step_seconds,
        driver_id=driver.id,
        actor=actor,
        simulation_id=simulation_id,
        countdown=0,
    )
    if not published:
        _release(order.id, simulation_id)
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
    simulation_id: str | None = None,
) -> str | None:
    """One step: moves the order from `from_status` to `to_status` and schedules the next.

    Returns the status entered, or None when the order is no longer in `from_status` (a
    duplicate message, a human), another simulation holds the order, or the machine refuses:
    then the chain ends. The run gives its claim up when it ends: after its last step, when the
    next step cannot be queued, or when someone else moved the order (not for a duplicate
    message, whose twin goes on with the run). A step queued before claims existed carries no
    `simulation_id` and goes on unclaimed.
    """
    order = Order.objects.filter(pk=order_id).first()
    if order is None or order.status != from_status:
        logger.info("sandbox step %s -> %s of %s skipped", from_status, to_status, order_id)
        _release_unless_run_goes_on(order_id, simulation_id, from_status, outcome)
        return None
    remaining = simulation_steps(status=to_status, outcome=outcome)
    if simulation_id is not None and not _claim_renew(
        order_id, simulation_id, seconds=_claim_seconds([to_status, *remaining], step_seconds)
    ):
        logger.info("sandbox step of %s skipped: another simulation holds the order", order_id)
        return None
    if not _step_take(order=order, to_status=to_status, driver_id=driver_id, actor=actor):
        _release_unless_run_goes_on(order_id, simulation_id, from_status, outcome)
        return None
    scheduled = bool(remaining) and _step_schedule(
        order_id=order.id,
        from_status=to_status,
        to_status=remaining[0],
        outcome=outcome,
        step_seconds=step_seconds,
        driver_id=driver_id,
        actor=actor,
        simulation_id=simulation_id,
        countdown=step_seconds,
    )
    if simulation_id is not None and not scheduled:
        _release(order_id, simulation_id)  # the run ends here: the order is free again
    return to_status


def _step_take(*, order: Order, to_status: str, driver_id, actor: str) -> bool:
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
            failure_reason=FailureReason.OTHER if to_status == OrderStatus.FAILED else "",
        )
    except ApplicationError as exc:
        # A racing duplicate already took this step, or the driver went away: stop here.
        logger.info("sandbox step of %s refused: %s", order.id, exc)
        return False
    return True


def _release_unless_run_goes_on(
    order_id: UUID | str, simulation_id: str | None, from_status: str, outcome: str
) -> None:
    """Ends the run's claim unless the order is where this run takes it (a twin of this step
    took it there, and that twin carries the run on)."""
    if simulation_id is None:
        return
    status = Order.objects.filter(pk=order_id).values_list("status", flat=True).first()
    if status not in simulation_steps(status=from_status, outcome=outcome):
        _release(order_id, simulation_id)


# ----- the claim: one simulation per order -----

#: Renews the claim when this simulation holds it, or takes it when nobody does (it expired).
_RENEW = """
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] or not holder then
    redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
    return 1
end
return 0
"""
#: Gives the claim up only when this simulation holds it.
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
    return redis.call('DEL', KEYS[1])
end
return 0
"""


@functools.lru_cache(maxsize=4)
def _redis_for(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1)


def _claim_key(order_id: UUID | str) -> str:
    return f"{settings.SERVICE_NAME}:sandbox:simulation:{order_id}"


def _claim_seconds(steps: list[str], step_seconds: int) -> int:
    return len(steps) * step_seconds + CLAIM_MARGIN_SECONDS


def _claim(order_id: UUID | str, simulation_id: str, *, seconds: int) -> bool:
    """Claims the order for a new simulation; False when another one holds it."""
    try:
        return bool(
            _redis_for(settings.REDIS_URL).set(
                _claim_key(order_id), simulation_id, nx=True, ex=seconds
            )
        )
    except (RedisError, OSError) as exc:
        logger.error("sandbox claim of %s not taken: %s", order_id, exc)
        raise ServiceUnavailable() from None


def _claim_renew(order_id: UUID | str, simulation_id: str, *, seconds: int) -> bool:
    try:
        client = _redis_for(settings.REDIS_URL)
        return bool(client.eval(_RENEW, 1, _claim_key(order_id), simulation_id, seconds))
    except (RedisError, OSError) as exc:
        # The order's status still guards every step: go on rather than strand the order.
        logger.warning("sandbox claim of %s not renewed: %s", order_id, exc)
        return True


def _release(order_id: UUID | str, simulation_id: str) -> None:
    try:
        _redis_for(settings.REDIS_URL).eval(_RELEASE, 1, _claim_key(order_id), simulation_id)
    except (RedisError, OSError) as exc:
        logger.warning("sandbox claim of %s not released (it expires): %s", order_id, exc)


def _step_schedule(*, countdown: int, **step) -> bool:
    """Publishes one step by task name (the task module calls this one); False when the broker
    is unavailable."""
    kwargs = {
        name: str(value) if name in ("order_id", "driver_id") else value
        for name, value in step.items()
        if value is not None or name != "simulation_id"
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
