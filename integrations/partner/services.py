"""The partner family's operations (contract "Orders").

Create (zone resolution, window booking, notes prefix, `order.created`), release, cancel, and
the automatic release of held orders on their delivery day.
"""

import logging
from datetime import datetime
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from integrations import windows
from integrations.errors import (
    DuplicateExternalRef,
    GeocodeFailed,
    NoDeliveryWindow,
    NoZoneCoversDropoff,
    TransitionNotAllowed,
)
from integrations.models import Order, OrderFamily, OrderStatus
from integrations.partner import selectors
from integrations.services import orders as order_services
from integrations.services import windows as window_services
from webhooks import events as webhook_events
from zones import geocoding
from zones import selectors as zone_selectors
from zones.models import DISPATCH_PURPOSES, Zone

logger = logging.getLogger(__name__)

#: held orders released per run of the periodic task (the next run takes the rest)
RELEASE_BATCH_SIZE = 500
SYSTEM_ACTOR = "system"


def shortest_decimal(value: Decimal | float | int) -> str:
    """contract "Orders": `2.5` for 2.5 and 2.50, `3` for 3; never an exponent."""
    number = value if isinstance(value, Decimal) else Decimal(repr(float(value)))
    return f"{number.normalize():f}"


def notes_compose(
    *, temperature_class: str, weight_kg: Decimal | None, zone_name: str, note: str
) -> str:
    """contract "Orders": `Temperature: <class>; Weight: <kg> kg; Zone: <name>; <partner note>`,
    each segment only when its value is present."""
    segments = []
    if temperature_class:
        segments.append(f"Temperature: {temperature_class}")
    if weight_kg is not None:
        segments.append(f"Weight: {shortest_decimal(weight_kg)} kg")
    if zone_name:
        segments.append(f"Zone: {zone_name}")
    if note:
        segments.append(note)
    return "; ".join(segments)


def _geocoded(
    *, organization_id, address: str, lat: float | None, lng: float | None, field: str
) -> tuple[float, float] | str:
    """The given coordinates, or the address geocoded; the field name when it cannot be."""
    if lat is not None and lng is not None:
        return lat, lng
    result = geocoding.geocode(organization_id=organization_id, address=address)
    if result is None:
        return field
    return result.lat, result.lng


def _partner_zone(*, organization_id, name: str | None, lat: float, lng: float) -> Zone:
    """contract "Orders": `deliveryZone` by name, else the active zone containing the dropoff."""
    if name:
        return selectors.partner_zone_get_by_name(organization_id=organization_id, name=name)
    zone = zone_selectors.zone_containing_point(
        organization_id=organization_id, lat=lat, lng=lng, purposes=DISPATCH_PURPOSES
    )
    if zone is None:
        raise NoZoneCoversDropoff()
    return zone


def _held_until(*, start: datetime, tz) -> datetime | None:
    """contract "Orders": a window on a later calendar day (zone time) than today is held until
    00:00 zone time of that day."""
    delivery_day = start.astimezone(tz).date()
    if delivery_day <= timezone.now().astimezone(tz).date():
        return None
    return windows.day_bounds(delivery_day, tz)[0]


def partner_order_create(
    *,
    organization_id,
    platform: str,
    external_ref: str,
    pickup_address: str,
    dropoff_address: str,
    recipient_name: str,
    recipient_phone: str,
    pickup_lat: float | None = None,
    pickup_lng: float | None = None,
    dropoff_lat: float | None = None,
    dropoff_lng: float | None = None,
    geocode_on_ingest: bool = False,
    package_size: str = "",
    weight_kg: Decimal | None = None,
    temperature_class: str = "",
    delivery_method: str = "",
    delivery_zone: str | None = None,
    notes: str = "",
    delivery_window_start: datetime | None = None,
    delivery_window_end: datetime | None = None,
    cod_amount: Decimal | None = None,
    expected_barcode: str = "",
    service_type: str = "standard",
    actor: str = "",
    api_key_id=None,
) -> Order:
    """`POST /integrations/partner-a/orders` after input validation (contract "Orders").

    Geocodes missing coordinates (the serializer only lets them be missing with
    `geocodeOnIngest`), resolves the zone, books the window that contains
    `delivery_window_start` (a naive time is read in the zone's timezone), writes the order
    with its notes prefix and emits `order.created`, all or nothing.
    """
    pickup = _geocoded(
        organization_id=organization_id,
        address=pickup_address,
        lat=pickup_lat,
        lng=pickup_lng,
        field="pickupAddress",
    )
    dropoff = _geocoded(
        organization_id=organization_id,
        address=dropoff_address,
        lat=dropoff_lat,
        lng=dropoff_lng,
        field="dropoffAddress",
    )
    failed = [result for result in (pickup, dropoff) if isinstance(result, str)]
    if failed:
        raise GeocodeFailed(failed)
    (pickup_lat, pickup_lng), (dropoff_lat, dropoff_lng) = pickup, dropoff

    zone = _partner_zone(
        organization_id=organization_id, name=delivery_zone, lat=dropoff_lat, lng=dropoff_lng
    )
    tz = windows.zone_tz(zone.timezone)
    window = None
    held_until = None
    if delivery_window_start is not None:
        requested = delivery_window_start
        if delivery_window_start.tzinfo is None:
            delivery_window_start = delivery_window_start.replace(tzinfo=tz)
        if delivery_window_end is not None and delivery_window_end.tzinfo is None:
            delivery_window_end = delivery_window_end.replace(tzinfo=tz)
        window = windows.window_containing(delivery_window_start, tz)
        if window is None:
            raise NoDeliveryWindow(requested.isoformat())
        if delivery_window_end is None:
            delivery_window_end = window.end
        zone_selectors.zone_blackout_check(zone=zone, day=window.start.astimezone(tz).date())
        held_until = _held_until(start=delivery_window_start, tz=tz)

    with transaction.atomic():
        # A cheap early answer before queueing on the window's lock; the unique constraint in
        # order_insert stays the authority.
        if Order.objects.filter(
            organization_id=organization_id, external_ref=external_ref
        ).exists():
            raise DuplicateExternalRef(external_ref)
        window_load = (
            window_services.window_book(zone=zone, start=window.start, end=window.end)
            if window is not None
            else None
        )
        order = order_services.order_insert(
            organization_id=organization_id,
            family=OrderFamily.PARTNER,
            platform=platform,
            external_ref=external_ref,
            actor=actor,
            api_key_id=api_key_id,
            pickup_address=pickup_address,
            pickup_lat=pickup_lat,
            pickup_lng=pickup_lng,
            dropoff_address=dropoff_address,
            dropoff_lat=dropoff_lat,
            dropoff_lng=dropoff_lng,
            recipient_name=recipient_name,
            recipient_phone=recipient_phone,
            package_size=package_size,
            weight_kg=weight_kg,
            temperature_class=temperature_class,
            delivery_method=delivery_method,
            service_type=service_type,
            cod_amount=cod_amount,
            expected_barcode=expected_barcode,
            notes=notes_compose(
                temperature_class=temperature_class,
                weight_kg=weight_kg,
                zone_name=zone.name,
                note=notes,
            ),
            zone=zone,
            delivery_window_start=delivery_window_start,
            delivery_window_end=delivery_window_end,
            window_load=window_load,
            held_until=held_until,
        )
        webhook_events.order_event_emit(
            order_id=order.id,
            organization_id=organization_id,
            platform=platform,
            event="order.created",
            status=order.status,
            external_ref=order.external_ref,
        )
    return order


def partner_order_release(*, order: Order, actor: str = "") -> Order:
    """contract "Orders": `pending` → `dispatching` with `releasedAt`; already `dispatching`
    answers the order as it is (idempotent); any other status is a 409."""
    with transaction.atomic():
        # Locked first, so two concurrent releases both answer 200.
        locked = Order.objects.select_for_update().get(pk=order.pk)
        if locked.status == OrderStatus.DISPATCHING:
            return locked
        if locked.status != OrderStatus.PENDING:
            # The machine also leads assigned → dispatching (unassign), but that is no release.
            raise TransitionNotAllowed(
                external_ref=locked.external_ref, verb="released", status=locked.status
            )
        return order_services.order_transition(
            order=locked, to_status=OrderStatus.DISPATCHING, actor=actor, reason="Released"
        )


def partner_order_cancel(*, order: Order, actor: str = "", reason: str = "") -> Order:
    """contract "Orders": allowed from `pending`, `dispatching`, `assigned` (the machine's edges to
    `cancelled`); frees the window place; emits `order.cancelled`."""
    return order_services.order_transition(
        order=order, to_status=OrderStatus.CANCELLED, actor=actor, reason=reason
    )


def held_orders_release(*, now: datetime | None = None) -> int:
    """The periodic task: releases held orders whose delivery day has begun (zone time).

    Each order moves in its own transaction; an order that moved meanwhile is skipped, so a
    second run (or two workers) releases nothing twice. Returns how many were released.
    """
    now = now or timezone.now()
    due = list(
        Order.objects.filter(status=OrderStatus.PENDING, held_until__lte=now)
        .order_by("held_until", "id")
        .values_list("id", flat=True)[:RELEASE_BATCH_SIZE]
    )
    released = 0
    for order_id in due:
        order = Order.objects.filter(pk=order_id, status=OrderStatus.PENDING).first()
        if order is None:
            continue
        try:
            order_services.order_transition(
                order=order,
                to_status=OrderStatus.DISPATCHING,
                actor=SYSTEM_ACTOR,
                reason="Delivery day started",
            )
        except TransitionNotAllowed:
            continue
        released += 1
    if released:
        logger.info("released %s held orders", released)
    return released
