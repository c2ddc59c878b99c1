"""The order model's two writes every family shares: inserting an order, and the status machine.

`order_transition` is THE one way an order changes status (contract "Orders"): it checks the
machine, writes the history row, frees window or slot capacity on entering `cancelled` or
`failed`, and emits the partner family's `order.*` event, all in one transaction.
`orders_transition` is the same move for many orders at once (a plan's commit), in a few
statements whatever their number; both apply one move by `_move_apply`.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from delivery.timezones import zone_tz
from integrations import statements
from integrations.errors import (
    DriverInactive,
    DriverRequired,
    DuplicateExternalRef,
    FailureReasonRequired,
    TransitionNotAllowed,
)
from integrations.models import (
    INACTIVE_STATUSES,
    FailureReason,
    Order,
    OrderFamily,
    OrderStatus,
    OrderStatusEvent,
)
from integrations.services import windows as window_services
from slots.services import bookings as booking_services
from tenants.errors import DriverNotFound
from tenants.models import Driver
from webhooks import events as webhook_events

#: contract "Orders": the only transitions allowed; anything else is a 409
ALLOWED_TRANSITIONS: dict[str, frozenset[str]] = {
    OrderStatus.PENDING: frozenset(
        {OrderStatus.DISPATCHING, OrderStatus.ASSIGNED, OrderStatus.CANCELLED}
    ),
    OrderStatus.DISPATCHING: frozenset(
        {OrderStatus.ASSIGNED, OrderStatus.PENDING, OrderStatus.CANCELLED}
    ),
    OrderStatus.ASSIGNED: frozenset(
        {
            OrderStatus.PICKED_UP,
            OrderStatus.DISPATCHING,
            OrderStatus.CANCELLED,
            OrderStatus.FAILED,
        }
    ),
    OrderStatus.PICKED_UP: frozenset({OrderStatus.IN_TRANSIT, OrderStatus.FAILED}),
    OrderStatus.IN_TRANSIT: frozenset({OrderStatus.DELIVERED, OrderStatus.FAILED}),
    OrderStatus.DELIVERED: frozenset(),
    OrderStatus.FAILED: frozenset(),
    OrderStatus.CANCELLED: frozenset(),
}

#: the `<verb>` of `Order <ref> cannot be <verb> in status <status>` (contract "Errors"), by target
TRANSITION_VERBS: dict[str, str] = {
    OrderStatus.PENDING: "returned to pending",
    OrderStatus.DISPATCHING: "released",
    OrderStatus.ASSIGNED: "assigned",
    OrderStatus.PICKED_UP: "picked up",
    OrderStatus.IN_TRANSIT: "put in transit",
    OrderStatus.DELIVERED: "delivered",
    OrderStatus.FAILED: "failed",
    OrderStatus.CANCELLED: "cancelled",
}

#: contract "Orders": partner-family events emitted on entering these statuses
PARTNER_EVENTS: dict[str, str] = {
    OrderStatus.ASSIGNED: "order.assigned",
    OrderStatus.PICKED_UP: "order.picked_up",
    OrderStatus.IN_TRANSIT: "order.in_transit",
    OrderStatus.DELIVERED: "order.delivered",
    OrderStatus.FAILED: "order.failed",
    OrderStatus.CANCELLED: "order.cancelled",
}

#: contract "Couriers": the proof summary of an `order.delivered` that had none recorded (a
#: delivery marked by an admin); a courier's delivery passes its own (`event_extra`)
NO_PROOF = {"recipientName": None, "signature": False, "photos": 0, "location": None}

_EXTERNAL_REF_CONSTRAINT = "order_unique_external_ref"


def _violated_constraint(exc: IntegrityError) -> str | None:
    diag = getattr(exc.__cause__, "diag", None)
    return getattr(diag, "constraint_name", None)


def order_insert(
    *,
    organization_id: UUID | str,
    family: str,
    platform: str,
    external_ref: str,
    actor: str = "",
    **fields: Any,
) -> Order:
    """Writes a `pending` order and the first row of its history, in the caller's transaction.

    `fields` are Order model fields. 409 `Order with externalRef <ref> already exists` when the
    organization already has an order with this `external_ref` (the unique constraint decides,
    so two concurrent inserts cannot both win). Emits no event: each family's create service
    emits its own (`order.created`, `erp.slot.booked`).
    """
    if family not in OrderFamily.values:
        raise ValueError(f"unknown order family {family!r}")
    now = timezone.now()
    order = Order(
        organization_id=organization_id,
        family=family,
        platform=platform,
        external_ref=external_ref,
        status=OrderStatus.PENDING,
        created_at=now,
        updated_at=now,
        **fields,
    )
    # No savepoint (two round trips, on every order creation): an error here leaves the
    # caller's transaction only to be rolled back, which its own atomic block does.
    with transaction.atomic(savepoint=False):
        try:
            order.save(force_insert=True)
        except IntegrityError as exc:
            if _violated_constraint(exc) == _EXTERNAL_REF_CONSTRAINT:
                raise DuplicateExternalRef(external_ref) from exc
            raise
        OrderStatusEvent.objects.create(
            order=order, from_status="", to_status=OrderStatus.PENDING, at=now, actor=actor
        )
    return order


#: the order's columns a move writes (what `_move_apply` may change)
TRANSITION_FIELDS = [
    "status",
    "driver",
    "eta",
    "released_at",
    "held_until",
    "failure_reason",
    "updated_at",
]


@dataclass(frozen=True)
class OrderMove:
    """One order's move to `to_status` for `orders_transition`, with what entering it needs
    (as `order_transition` takes them)."""

    order: Order
    to_status: str
    driver: Driver | None = None
    eta: datetime | None = None
    reason: str = ""
    failure_reason: str = ""
    event_extra: dict | None = None


#: rows per INSERT of the history (PostgreSQL takes at most 65,535 parameters)
BULK_BATCH = 1000


def order_transition(
    *,
    order: Order,
    to_status: str,
    actor: str = "",
    driver: Driver | None = None,
    reason: str = "",
    failure_reason: str = "",
    event_extra: dict | None = None,
    eta: datetime | None = None,
    locked: bool = False,
) -> Order:
    """Moves `order` to `to_status` by the machine of contract "Orders", and returns it updated.

    - 409 `Order <ref> cannot be <verb> in status <status>` for a transition not in the table;
    - entering `assigned` needs an active `driver` of the order's organization, which
      becomes the order's driver, with `eta` (contract "Dispatch"); going back to `dispatching`
      or `pending` unassigns it and clears the ETA;
    - entering `dispatching` ends a hold and sets `released_at` the first time;
    - entering `failed` needs a `failure_reason` (contract "Couriers": 400 otherwise), kept on
      the order and sent as `failureReason` in `order.failed`;
    - entering `cancelled` or `failed` frees the order's window place and slot booking;
    - a partner-family order emits `order.<status>` (contract "Orders") in the same transaction,
      with `event_extra` in its payload (`order.delivered` always carries a `proof` summary).
    The order row is locked while it changes, so concurrent transitions see each other. With
    `locked=True` the caller has read `order` with its row lock (select_for_update) in the
    transaction it runs in, and rolls that transaction back on any error: the order is not read
    again, and no savepoint is taken (each costs a round trip).
    """
    _arguments_check(to_status, failure_reason)
    with transaction.atomic(savepoint=not locked):
        current = order if locked else Order.objects.select_for_update().get(pk=order.pk)
        history = _move_apply(
            OrderMove(
                order=current,
                to_status=to_status,
                driver=driver,
                eta=eta,
                reason=reason,
                failure_reason=failure_reason,
                event_extra=event_extra,
            ),
            actor=actor,
            now=timezone.now(),
        )
        current.save(update_fields=TRANSITION_FIELDS)
        history.save()
        if to_status in INACTIVE_STATUSES:
            _capacity_free(current)
        event = _partner_event(current, reason, event_extra)
        if event is not None:
            webhook_events.order_event_emit(
                order_id=event.order_id,
                organization_id=event.organization_id,
                platform=event.platform,
                event=event.event,
                status=event.status,
                external_ref=event.external_ref,
                extra=event.extra,
            )
    return current


def orders_transition(*, moves: list[OrderMove], actor: str = "") -> None:
    """`order_transition` for many orders whose rows the caller locked in its transaction (a
    plan's commit): the same machine, checks, errors, fields, history rows and partner events,
    each move applied in list order (an order may move twice), to the caller's objects.

    Written in a few statements whatever the number of moves: the orders (one UPDATE of the
    columns a move writes, `statements.orders_move`), their history rows (one INSERT) and their
    partner events (the outbox's bulk emit). An error raises before anything is written (the
    objects already moved in memory go with the caller's transaction, rolled back). Entering
    `cancelled` or `failed` (capacity freed order by order) is `order_transition`'s alone.
    """
    for move in moves:
        _arguments_check(move.to_status, move.failure_reason)
        if move.to_status in INACTIVE_STATUSES:
            raise ValueError(f"{move.to_status!r} frees capacity: use order_transition")
    now = timezone.now()
    moved: dict[Any, Order] = {}
    history: list[OrderStatusEvent] = []
    events: list[webhook_events.OrderEvent] = []
    for move in moves:
        order = move.order
        if moved.setdefault(order.pk, order) is not order:
            raise ValueError(f"order {order.pk} given as two objects")
        history.append(_move_apply(move, actor=actor, now=now))
        event = _partner_event(order, move.reason, move.event_extra)
        if event is not None:
            events.append(event)
    if not moved:
        return
    orders = list(moved.values())
    with transaction.atomic(savepoint=False):
        with connection.cursor() as cursor:
            cursor.execute(
                statements.orders_move(Order._meta.db_table),
                {
                    "ids": [order.pk for order in orders],
                    "statuses": [order.status for order in orders],
                    "drivers": [order.driver_id for order in orders],
                    "etas": [order.eta for order in orders],
                    "released": [order.released_at for order in orders],
                    "held": [order.held_until for order in orders],
                    "failure_reasons": [order.failure_reason for order in orders],
                    "updated": [order.updated_at for order in orders],
                },
            )
        OrderStatusEvent.objects.bulk_create(history, batch_size=BULK_BATCH)
        webhook_events.order_events_emit(events=events)


def _arguments_check(to_status: str, failure_reason: str) -> None:
    if to_status not in OrderStatus.values:
        raise ValueError(f"unknown order status {to_status!r}")
    if failure_reason and failure_reason not in FailureReason.values:
        raise ValueError(f"unknown failure reason {failure_reason!r}")


def _move_apply(move: OrderMove, *, actor: str, now: datetime) -> OrderStatusEvent:
    """THE rule of a move, for one order and many alike: checks it against the machine and
    what entering its status needs, sets the order's fields, and answers its history row
    (unsaved). The order was read under its row lock."""
    order = move.order
    from_status = order.status
    if move.to_status not in ALLOWED_TRANSITIONS[from_status]:
        raise TransitionNotAllowed(
            external_ref=order.external_ref,
            verb=TRANSITION_VERBS[move.to_status],
            status=from_status,
        )
    _entering_fields_set(
        order,
        move.to_status,
        driver=move.driver,
        failure_reason=move.failure_reason,
        eta=move.eta,
        now=now,
    )
    order.status = move.to_status
    order.updated_at = now
    return OrderStatusEvent(
        order=order,
        from_status=from_status,
        to_status=move.to_status,
        at=now,
        actor=actor[:200],
        reason=(move.reason or move.failure_reason)[:500],
    )


def _entering_fields_set(
    order: Order,
    to_status: str,
    *,
    driver: Driver | None,
    failure_reason: str,
    eta: datetime | None,
    now: datetime,
) -> None:
    """Checks what entering `to_status` needs and sets the fields it changes (not the status)."""
    if to_status == OrderStatus.ASSIGNED:
        if driver is None:
            raise DriverRequired()
        if driver.organization_id != order.organization_id:
            raise DriverNotFound()
        if not driver.is_active:
            raise DriverInactive()
        order.driver = driver
        order.eta = eta
    elif to_status in (OrderStatus.DISPATCHING, OrderStatus.PENDING):
        order.driver = None
        order.eta = None
    if to_status == OrderStatus.DISPATCHING:
        # Released: no longer held for its delivery day (contract "Orders").
        order.held_until = None
        if order.released_at is None:
            order.released_at = now
    if to_status == OrderStatus.FAILED:
        if not failure_reason:
            raise FailureReasonRequired()
        order.failure_reason = failure_reason


def order_reopen(*, locked: Order, actor: str = "") -> Order:
    """A re-attempt's move of a `failed` order back to `pending` (contract "Couriers",
    "Re-attempts"; no transition of the machine leads there): `attempt` + 1, failure reason,
    driver and ETA cleared, a history row `failed` -> `pending`. The caller holds the row's
    lock, checked the attempts left and booked the new slot or window in this transaction.
    Emits nothing, as the machine emits nothing on entering `pending`."""
    if locked.status != OrderStatus.FAILED:
        raise TransitionNotAllowed(
            external_ref=locked.external_ref, verb="re-attempted", status=locked.status
        )
    now = timezone.now()
    locked.status = OrderStatus.PENDING
    locked.attempt += 1
    locked.failure_reason = ""
    locked.driver = None
    locked.eta = None
    locked.released_at = None
    locked.updated_at = now
    locked.save(
        update_fields=[
            "status",
            "attempt",
            "failure_reason",
            "driver",
            "eta",
            "released_at",
            "updated_at",
        ]
    )
    OrderStatusEvent.objects.create(
        order=locked,
        from_status=OrderStatus.FAILED,
        to_status=OrderStatus.PENDING,
        at=now,
        actor=actor[:200],
        reason=f"Re-attempt {locked.attempt}",
    )
    return locked


def order_eta_shown(order: Order) -> str | None:
    """The order's ETA as partners read it: in its zone's time, with the offset (contract
    "Dispatch"); None until assigned."""
    if order.eta is None:
        return None
    tz = zone_tz(order.zone.timezone) if order.zone_id else UTC
    return order.eta.astimezone(tz).isoformat()


def order_eta_set(*, order: Order, eta: datetime | None) -> None:
    """Moves an assigned order's ETA without a status change (a re-plan that keeps its driver),
    in the caller's transaction; no event (the partner's driver is unchanged)."""
    Order.objects.filter(pk=order.pk).update(eta=eta, updated_at=timezone.now())
    order.eta = eta


def orders_eta_set(*, etas: Mapping[UUID, datetime]) -> None:
    """`order_eta_set` for many orders at once (a courier's position re-times a route): each
    order of `etas` (order id: new ETA) in one statement, in the caller's transaction; no
    event."""
    if not etas:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            statements.ORDERS_ETA_SET,
            {"ids": list(etas), "etas": list(etas.values()), "now": timezone.now()},
        )


def _capacity_free(order: Order) -> None:
    """contract "Orders": a cancelled or failed order frees its window or slot capacity at once."""
    if order.window_load_id is not None:
        window_services.window_free(window_load_id=order.window_load_id)
    booking_services.slot_booking_release(order=order)


def _partner_event(
    order: Order, reason: str = "", event_extra: dict | None = None
) -> webhook_events.OrderEvent | None:
    """The partner event entering the order's status emits (contract "Orders"), None for an
    ERP order or a status that emits none."""
    if order.family != OrderFamily.PARTNER or order.status not in PARTNER_EVENTS:
        return None
    event = PARTNER_EVENTS[order.status]
    extra: dict = {}
    if event == "order.assigned" and order.driver is not None:
        extra["driver"] = {
            "id": str(order.driver.id),
            "name": order.driver.name,
            "phone": order.driver.phone,
        }
        extra["eta"] = order_eta_shown(order)
    if reason:
        extra["reason"] = reason
    if event == "order.failed":
        extra["failureReason"] = order.failure_reason
    if event == "order.delivered":
        extra["proof"] = NO_PROOF
    extra.update(event_extra or {})
    return webhook_events.OrderEvent(
        order_id=order.id,
        organization_id=order.organization_id,
        platform=order.platform,
        event=event,
        status=order.status,
        external_ref=order.external_ref,
        extra=extra or None,
    )
