"""The partner family's writes (contract "Orders").

Create (zone resolution, window booking, notes prefix, `order.created`), release, cancel, and
the automatic release of held orders on their delivery day. The status machine, window
capacity and idempotency they stand on are shared with the ERP family in
`integrations/services/`.
"""

import logging
from dataclasses import dataclass
from datetime import datetime, tzinfo
from decimal import Decimal
from typing import Any
from uuid import UUID

from django.db import transaction
from django.utils import timezone

from integrations import windows
from integrations.errors import (
    DeliveryWindowFull,
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


@dataclass(frozen=True)
class PartnerOrderDraft:
    """A partner order as `POST /integrations/partner-a/orders` validated it (contract "Orders"):
    the fields of the request body, before its zone, window and notes are worked out. Fields
    the body left out keep the model's blank value."""

    external_ref: str
    pickup_address: str
    dropoff_address: str
    recipient_name: str
    recipient_phone: str
    pickup_lat: float | None = None
    pickup_lng: float | None = None
    dropoff_lat: float | None = None
    dropoff_lng: float | None = None
    #: only lets the serializer accept missing coordinates; the service geocodes whatever is missing
    geocode_on_ingest: bool = False
    package_size: str = ""
    weight_kg: Decimal | None = None
    temperature_class: str = ""
    delivery_method: str = ""
    delivery_zone: str | None = None
    notes: str = ""
    delivery_window_start: datetime | None = None
    delivery_window_end: datetime | None = None
    cod_amount: Decimal | None = None
    expected_barcode: str = ""
    service_type: str = "standard"


@dataclass(frozen=True)
class _WindowChoice:
    """The standard window an order books, with the order's own bounds inside it (aware)."""

    window: windows.Window
    start: datetime
    end: datetime
    held_until: datetime | None


#: the body's fields an order keeps as they came (contract "Orders")
_KEPT_AS_GIVEN = (
    "pickup_address",
    "dropoff_address",
    "recipient_name",
    "recipient_phone",
    "package_size",
    "weight_kg",
    "temperature_class",
    "delivery_method",
    "service_type",
    "cod_amount",
    "expected_barcode",
)


def _geocoded(
    organization_id: UUID | str, address: str, lat: float | None, lng: float | None
) -> tuple[float, float] | None:
    """The given coordinates, or the address geocoded; None when it cannot be."""
    if lat is not None and lng is not None:
        return lat, lng
    result = geocoding.geocode(organization_id=organization_id, address=address)
    if result is None:
        return None
    return result.lat, result.lng


def _addresses_located(
    *, organization_id: UUID | str, draft: PartnerOrderDraft
) -> tuple[tuple[float, float], tuple[float, float]]:
    """The pickup and the dropoff as (lat, lng); 400 naming every address that cannot be
    geocoded (the serializer only lets coordinates be missing with `geocodeOnIngest`)."""
    pickup = _geocoded(organization_id, draft.pickup_address, draft.pickup_lat, draft.pickup_lng)
    dropoff = _geocoded(
        organization_id, draft.dropoff_address, draft.dropoff_lat, draft.dropoff_lng
    )
    named = (("pickupAddress", pickup), ("dropoffAddress", dropoff))
    failed = [field for field, point in named if point is None]
    if failed:
        raise GeocodeFailed(failed)
    return pickup, dropoff


def _partner_zone(*, organization_id: UUID | str, name: str | None, lat: float, lng: float) -> Zone:
    """contract "Orders": `deliveryZone` by name, else the active zone containing the dropoff."""
    if name:
        return selectors.partner_zone_get_by_name(organization_id=organization_id, name=name)
    zone = zone_selectors.zone_containing_point(
        organization_id=organization_id, lat=lat, lng=lng, purposes=DISPATCH_PURPOSES
    )
    if zone is None:
        raise NoZoneCoversDropoff()
    return zone


def _held_until(*, start: datetime, tz: tzinfo) -> datetime | None:
    """contract "Orders": a window on a later calendar day (zone time) than today is held until
    00:00 zone time of that day."""
    delivery_day = start.astimezone(tz).date()
    if delivery_day <= timezone.now().astimezone(tz).date():
        return None
    return windows.day_bounds(delivery_day, tz)[0]


def _window_chosen(*, draft: PartnerOrderDraft, zone: Zone) -> _WindowChoice | None:
    """The standard window containing `deliveryWindowStart` (a naive time is read in the zone's
    timezone; no end: the window's), or None without a start. 400 when no window contains it or
    the zone takes no deliveries that day."""
    if draft.delivery_window_start is None:
        return None
    return _window_at(start=draft.delivery_window_start, end=draft.delivery_window_end, zone=zone)


def _window_at(*, start: datetime, end: datetime | None, zone: Zone) -> _WindowChoice:
    """The standard window containing `start` (naive: zone time) in `zone`; 400 when none does
    or the day is a blackout."""
    given = start
    tz = windows.zone_tz(zone.timezone)
    if start.tzinfo is None:
        start = start.replace(tzinfo=tz)
    if end is not None and end.tzinfo is None:
        end = end.replace(tzinfo=tz)
    window = windows.window_containing(start, tz)
    if window is None:
        raise NoDeliveryWindow(given.isoformat())
    zone_selectors.zone_blackout_check(zone=zone, day=window.start.astimezone(tz).date())
    return _WindowChoice(
        window=window,
        start=start,
        end=end if end is not None else window.end,
        held_until=_held_until(start=start, tz=tz),
    )


def _window_book(*, organization_id: UUID | str, external_ref: str, zone: Zone, choice):
    """The chosen window's place, when there is one. The unique constraint in order_insert
    answers a duplicate `externalRef` (409, the place goes back with the rollback); a full
    window answers 400 only when the order is not a duplicate, which is asked then alone."""
    if choice is None:
        return None
    try:
        return window_services.window_book(
            zone=zone, start=choice.window.start, end=choice.window.end
        )
    except DeliveryWindowFull:
        orders = Order.objects.filter(organization_id=organization_id, external_ref=external_ref)
        if orders.exists():
            raise DuplicateExternalRef(external_ref) from None
        raise


def _order_fields(
    *,
    draft: PartnerOrderDraft,
    pickup: tuple[float, float],
    dropoff: tuple[float, float],
    zone: Zone,
    choice: _WindowChoice | None,
) -> dict[str, Any]:
    """The order's own fields (contract "Orders"): the body's as given, the located coordinates,
    the notes with their prefix, the zone, and the window's bounds and hold when it has one."""
    fields = {name: getattr(draft, name) for name in _KEPT_AS_GIVEN}
    fields["pickup_lat"], fields["pickup_lng"] = pickup
    fields["dropoff_lat"], fields["dropoff_lng"] = dropoff
    fields["notes"] = notes_compose(
        temperature_class=draft.temperature_class,
        weight_kg=draft.weight_kg,
        zone_name=zone.name,
        note=draft.notes,
    )
    fields["zone"] = zone
    if choice is not None:
        fields["delivery_window_start"], fields["delivery_window_end"] = choice.start, choice.end
        fields["held_until"] = choice.held_until
    return fields


def partner_order_create(
    *,
    organization_id: UUID | str,
    platform: str,
    draft: PartnerOrderDraft,
    actor: str = "",
    api_key_id: UUID | str | None = None,
) -> Order:
    """`POST /integrations/partner-a/orders` after input validation (contract "Orders").

    Locates the pickup and dropoff, chooses the zone, finds the window of
    `deliveryWindowStart`, then books the window, writes the order with its notes prefix and
    emits `order.created`, all or nothing.
    """
    pickup, dropoff = _addresses_located(organization_id=organization_id, draft=draft)
    zone = _partner_zone(
        organization_id=organization_id, name=draft.delivery_zone, lat=dropoff[0], lng=dropoff[1]
    )
    choice = _window_chosen(draft=draft, zone=zone)
    # Joins the request's transaction without a savepoint (two round trips per order): any
    # failure here ends the request, and its transaction rolls back whole (the view opens it,
    # or idempotent_run with the stored answer). A caller that wants to go on after a failure
    # opens a savepoint itself.
    with transaction.atomic(savepoint=False):
        window_load = _window_book(
            organization_id=organization_id,
            external_ref=draft.external_ref,
            zone=zone,
            choice=choice,
        )
        order = order_services.order_insert(
            organization_id=organization_id,
            family=OrderFamily.PARTNER,
            platform=platform,
            external_ref=draft.external_ref,
            actor=actor,
            api_key_id=api_key_id,
            window_load=window_load,
            **_order_fields(draft=draft, pickup=pickup, dropoff=dropoff, zone=zone, choice=choice),
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


def order_window_rebook(*, locked: Order, start: datetime) -> None:
    """Books `locked` (an order whose row the caller has locked, holding no window place: a
    failed order gave its back) on the standard window containing `start` in its zone, with the
    checks of creation (400 no window there, blackout, `Delivery window is full`), and saves the
    window's bounds, place and hold on the order, in the caller's transaction (a re-attempt,
    contract "Couriers")."""
    zone = locked.zone
    if zone is None:
        raise NoZoneCoversDropoff()
    choice = _window_at(start=start, end=None, zone=zone)
    locked.window_load = window_services.window_book(
        zone=zone, start=choice.window.start, end=choice.window.end
    )
    locked.delivery_window_start, locked.delivery_window_end = choice.start, choice.end
    locked.held_until = choice.held_until
    locked.updated_at = timezone.now()
    locked.save(
        update_fields=[
            "window_load",
            "delivery_window_start",
            "delivery_window_end",
            "held_until",
            "updated_at",
        ]
    )


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
