"""Reads of the courier API and of proofs (contract "Couriers")."""

import hmac
from dataclasses import dataclass
from datetime import date, datetime, tzinfo
from uuid import UUID

from django.db import connection
from django.db.models import Prefetch, QuerySet
from django.utils import timezone

from couriers import statements
from couriers.errors import ProofNotFound
from couriers.models import CourierPhoto, DriverAccessToken, StopProof
from delivery.fields import parse_uuid
from delivery.timezones import zone_tz
from dispatch.models import PlanRoute, PlanStatus, PlanStop, StopKind
from integrations.errors import OrderNotFound
from integrations.models import Order, OrderStatus, OrderStatusEvent, ServiceType
from tenants import keycache
from tenants.errors import InvalidToken
from tenants.models import Driver
from tenants.services import secret_digest


def driver_token_authenticate(*, value: str) -> Driver:
    """The active driver (of an active organization) whose token `value` is; 401 otherwise.

    Through the key cache (tenants/keycache.py: a new token, a revoke, a driver or organization
    made inactive end it in every process at once), else one indexed query by the token's digest
    (statements.DRIVER_BY_TOKEN); the digest is compared again in constant time."""
    digest = secret_digest(value)

    def load() -> Driver | None:
        drivers = Driver.objects.raw(statements.DRIVER_BY_TOKEN, {"digest": digest})
        return next(iter(drivers), None)

    driver = keycache.through(f"driver-token:{digest}", load, keep_missing=False)
    if driver is None or not hmac.compare_digest(driver.token_digest, digest):
        raise InvalidToken()
    return driver


def driver_token_get(*, driver: Driver) -> DriverAccessToken | None:
    return DriverAccessToken.objects.filter(driver=driver).first()


# ----- which orders a driver reaches -----


def driver_orders(*, driver: Driver) -> QuerySet[Order]:
    """The orders on the driver's own routes (contract "Couriers": any other is 404).

    An order is on a driver's route from the moment it is assigned to them (a committed plan
    or an admin's assignment, both through the status machine, which sets its driver) and stays
    theirs once delivered or failed; a re-plan that gives it to another driver takes it away."""
    return Order.objects.filter(organization_id=driver.organization_id, driver=driver)


# ----- the day's route -----


def driver_timezone(*, driver: Driver) -> tzinfo:
    """The driver's zone time: the time zone of a zone they serve, else the organization's
    slot policy's (contract "Slots and windows": a zone's own time zone defaults to it)."""
    with connection.cursor() as cursor:
        cursor.execute(
            statements.DRIVER_TIMEZONE,
            {"driver": driver.id, "organization": driver.organization_id},
        )
        (name,) = cursor.fetchone()
    return zone_tz(name)


def driver_today(*, driver: Driver, now: datetime | None = None) -> date:
    return timezone.localtime(now or timezone.now(), driver_timezone(driver=driver)).date()


@dataclass(frozen=True)
class DriverRoute:
    """A driver's committed route of one day (`route` None: none committed) and its stops in
    order, each with its order."""

    day: date
    driver: Driver
    route: PlanRoute | None
    stops: list[PlanStop]
    tz: tzinfo


def committed_route(*, driver: Driver, day: date) -> PlanRoute | None:
    """The driver's route of `day` in a committed plan (at most one: contract "Dispatch")."""
    return (
        PlanRoute.objects.filter(driver=driver, date=day, plan__status=PlanStatus.COMMITTED)
        .select_related("zone")
        .order_by("-plan__committed_at", "-plan__created_at")
        .first()
    )


def driver_route(*, driver: Driver, day: date | None = None) -> DriverRoute:
    """The route `GET /courier/route` shows: the committed route of `day` (default: today in the
    driver's zone time), stops by sequence."""
    day = day or driver_today(driver=driver)
    route = committed_route(driver=driver, day=day)
    if route is None:
        return DriverRoute(day, driver, None, [], driver_timezone(driver=driver))
    stops = list(route.stops.select_related("order").order_by("sequence"))
    return DriverRoute(day, driver, route, stops, zone_tz(route.zone.timezone))


@dataclass(frozen=True)
class ProofPolicy:
    """What the organization's dispatch policy asks of a delivery's proof (nothing without a
    policy)."""

    require_signature: bool = False
    require_photo: bool = False


@dataclass(frozen=True)
class OrderStop:
    """An order as a stop of the courier API: its place on the driver's committed route, or,
    for an order assigned outside any committed route, the order alone (no sequence or ETA);
    with the proof its organization's policy asks of a delivery, read with it."""

    order: Order
    order_id: UUID
    sequence: int | None
    eta: datetime | None
    window_start: datetime | None
    window_end: datetime | None
    kind: str
    lat: float | None
    lng: float | None
    proof_policy: ProofPolicy


def driver_order_check(*, driver: Driver, order_id: UUID | str) -> None:
    """404 `Order not found` unless `order_id` is the driver's order, judged as
    `driver_order_stop` judges it, without reading the order."""
    parsed = parse_uuid(order_id)
    theirs = (
        parsed is not None
        and Order.objects.filter(
            pk=parsed, organization_id=driver.organization_id, driver_id=driver.id
        ).exists()
    )
    if not theirs:
        raise OrderNotFound()


def driver_order_stop(
    *, driver: Driver, order_id: UUID | str, lock: bool = False
) -> tuple[OrderStop, tzinfo]:
    """The driver's order `order_id` as their stop (and the zone time its times are shown in):
    its place on the driver's committed route, or the order alone when it is on none. 404
    `Order not found` for a malformed or unknown id, and for another driver's order. With
    `lock`, the order's row is locked (FOR UPDATE) in the caller's transaction.

    One query (statements.DRIVER_ORDER_STOP) for the order, its stop, their zone times and the
    proof policy: a courier's every event reads it."""
    parsed = parse_uuid(order_id)
    if parsed is None:
        raise OrderNotFound()
    read = statements.DRIVER_ORDER_STOP_LOCKED if lock else statements.DRIVER_ORDER_STOP
    found = Order.objects.raw(
        read,
        {
            "order": parsed,
            "organization": driver.organization_id,
            "driver": driver.id,
            "committed": PlanStatus.COMMITTED.value,
        },
    )
    order = next(iter(found), None)
    if order is None:
        raise OrderNotFound()
    policy = ProofPolicy(bool(order.policy_require_signature), bool(order.policy_require_photo))
    if order.stop_kind is not None:
        shown = OrderStop(
            order,
            order.id,
            order.stop_sequence,
            order.stop_eta,
            order.stop_window_start,
            order.stop_window_end,
            order.stop_kind,
            order.stop_lat,
            order.stop_lng,
            policy,
        )
        return shown, zone_tz(order.stop_timezone)
    tz = zone_tz(order.order_timezone) if order.zone_id else driver_timezone(driver=driver)
    kind = StopKind.PICKUP if order.service_type == ServiceType.RETURN else StopKind.DELIVERY
    shown = OrderStop(
        order,
        order.id,
        None,
        None,
        order.delivery_window_start,
        order.delivery_window_end,
        kind,
        order.dropoff_lat,
        order.dropoff_lng,
        policy,
    )
    return shown, tz


# ----- proof -----


@dataclass(frozen=True)
class OrderProof:
    """What proof of an order's outcome the service holds (contract "Couriers", "Proof"): the
    courier's last record of it, or, for an outcome set by an admin, the status change alone."""

    order: Order
    status: str
    at: datetime
    proof: StopProof | None
    failure_reason: str


def order_proof(*, order: Order) -> OrderProof:
    """404 `Proof not found` while the order is neither delivered nor failed."""
    if order.status not in (OrderStatus.DELIVERED, OrderStatus.FAILED):
        raise ProofNotFound()
    proof = (
        StopProof.objects.filter(order=order, status=order.status)
        .prefetch_related(Prefetch("photos", queryset=CourierPhoto.objects.order_by("created_at")))
        .order_by("-created_at", "-id")
        .first()
    )
    changed = (
        OrderStatusEvent.objects.filter(order=order, to_status=order.status)
        .order_by("-at", "-id")
        .values_list("at", flat=True)
        .first()
    )
    if proof is not None and (changed is None or proof.created_at >= changed):
        return OrderProof(order, proof.status, proof.at, proof, proof.failure_reason)
    return OrderProof(order, order.status, changed or order.updated_at, None, order.failure_reason)
