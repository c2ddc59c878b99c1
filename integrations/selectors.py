"""Reads on orders. Every read takes the organization, except the public tracking lookup."""

from dataclasses import dataclass
from datetime import date, datetime

from django.db.models import (
    DateField,
    DateTimeField,
    F,
    Func,
    Prefetch,
    QuerySet,
    Value,
    prefetch_related_objects,
)
from django.db.models.functions import Cast, Coalesce

from delivery.fields import parse_uuid
from delivery.queries import CompiledQuery, Param, unique_row
from integrations import windows
from integrations.errors import OrderNotFound
from integrations.external_refs import could_be_stored
from integrations.models import DeliveryWindowLoad, Order, OrderFamily, OrderStatusEvent
from zones import geocoding
from zones import selectors as zone_selectors
from zones.errors import NoZoneForAddress, ZoneNameNotFound
from zones.models import DISPATCH_PURPOSES, Zone, ZoneBlackout


def _with_relations(queryset: QuerySet[Order]) -> QuerySet[Order]:
    # The zone's polygon is never shown with an order, and is the largest column read.
    return queryset.select_related("zone", "driver").defer("zone__geodata")


def _order_by_ref(**family):
    return _with_relations(
        Order.objects.filter(
            organization_id=Param("organization_id"), external_ref=Param("external_ref"), **family
        )
    ).order_by()[:1]


# An order read by its ref is the partner's hottest read: compiled once (delivery/queries.py).
_ORDER_BY_REF = CompiledQuery(_order_by_ref)
_ORDER_OF_FAMILY_BY_REF = CompiledQuery(lambda: _order_by_ref(family=Param("family")))


def order_get_by_external_ref(
    *, organization_id, external_ref: str, family: str | None = None
) -> Order:
    """The organization's order `external_ref` (of `family` when given); 404 `Order not found`
    otherwise, another organization's order included (contract "Authentication and scope")."""
    if not could_be_stored(external_ref):
        # Text no ref can hold (a NUL from the path, say) is unknown without asking the database.
        raise OrderNotFound()
    if family is None:
        order = _ORDER_BY_REF.first(organization_id=organization_id, external_ref=external_ref)
    else:
        order = _ORDER_OF_FAMILY_BY_REF.first(
            organization_id=organization_id, external_ref=external_ref, family=family
        )
    if order is None:
        raise OrderNotFound()
    return order


def order_get(*, organization_id, order_id) -> Order:
    """The organization's order by id; 404 `Order not found` for a malformed or unknown id."""
    parsed = parse_uuid(order_id)
    order = (
        unique_row(
            _with_relations(Order.objects.filter(organization_id=organization_id, pk=parsed))
        )
        if parsed
        else None
    )
    if order is None:
        raise OrderNotFound()
    return order


def order_get_by_tracking_token(*, tracking_token: str) -> Order:
    """The order of a public tracking token (no organization: the token is the credential)."""
    order = (
        unique_row(_with_relations(Order.objects.filter(tracking_token=tracking_token)))
        if isinstance(tracking_token, str) and tracking_token
        else None
    )
    if order is None:
        raise OrderNotFound()
    return order


def partner_order_get(*, organization_id, external_ref: str) -> Order:
    """A partner-family order of the organization, by `externalRef` (ERP orders: 404)."""
    return order_get_by_external_ref(
        organization_id=organization_id, external_ref=external_ref, family=OrderFamily.PARTNER
    )


def order_status_events(*, order: Order) -> QuerySet[OrderStatusEvent]:
    """The order's status history, oldest first (its creation, `pending`, first)."""
    return OrderStatusEvent.objects.filter(order=order).order_by("at", "id")


# ----- partner delivery windows -----


@dataclass(frozen=True)
class WindowAvailability:
    start: datetime
    end: datetime
    scheduled_count: int
    capacity_limit: int

    @property
    def available(self) -> bool:
        return self.scheduled_count < self.capacity_limit


@dataclass(frozen=True)
class ZoneWindows:
    zone: Zone
    date: date
    timezone: str
    windows: list[WindowAvailability]


def zones_windows(*, zones: list[Zone], day: date) -> list[ZoneWindows]:
    """The standard windows of `day` for each zone, with their counts (contract "Orders"): one query
    for all the zones' counts, whatever their number.

    `scheduledCount` is the window counter, which cancelled and failed orders leave at once
    (contract "Orders"); `capacityLimit` is the zone's `window_capacity`.
    """
    # A blackout date of a zone has no windows, like a Friday (one query for all the zones).
    blacked_out = set(
        ZoneBlackout.objects.filter(zone__in=[zone.id for zone in zones], date=day).values_list(
            "zone_id", flat=True
        )
    )
    per_zone = {}
    for zone in zones:
        per_zone[zone.id] = (
            []
            if zone.id in blacked_out
            else windows.windows_for_day(day, windows.zone_tz(zone.timezone))
        )
    starts = {window.start for zone_windows in per_zone.values() for window in zone_windows}
    booked = {}
    if starts:
        rows = DeliveryWindowLoad.objects.filter(
            zone__in=[zone.id for zone in zones], window_start__in=starts
        ).values_list("zone_id", "window_start", "booked")
        booked = {(zone_id, start): count for zone_id, start, count in rows}
    return [
        ZoneWindows(
            zone=zone,
            date=day,
            timezone=str(windows.zone_tz(zone.timezone)),
            windows=[
                WindowAvailability(
                    start=window.start,
                    end=window.end,
                    scheduled_count=booked.get((zone.id, window.start), 0),
                    capacity_limit=zone.window_capacity,
                )
                for window in per_zone[zone.id]
            ],
        )
        for zone in zones
    ]


def partner_zone_get_by_name(*, organization_id, name: str) -> Zone:
    """A zone partners can use, by name: enabled, of purpose dispatch or both (the zones the
    export lists as active); 404 `Zone <name> not found` otherwise."""
    zone = zone_selectors.zone_get_by_name(organization_id=organization_id, name=name)
    if not zone.enabled or zone.purpose not in DISPATCH_PURPOSES:
        raise ZoneNameNotFound(name)
    return zone


def windows_by_zone_name(*, organization_id, name: str, day: date) -> ZoneWindows:
    zone = partner_zone_get_by_name(organization_id=organization_id, name=name)
    return zones_windows(zones=[zone], day=day)[0]


def windows_by_address(*, organization_id, address: str, day: date) -> list[ZoneWindows]:
    """One entry per active partner zone containing the geocoded address, smallest zone
    first; 404 `No delivery zone found for the given address` when there is none."""
    result = geocoding.geocode(organization_id=organization_id, address=address)
    if result is None:
        raise NoZoneForAddress()
    zones = zone_selectors.zones_containing_point(
        organization_id=organization_id,
        lat=result.lat,
        lng=result.lng,
        purposes=DISPATCH_PURPOSES,
    )
    if not zones:
        raise NoZoneForAddress()
    return zones_windows(zones=zones, day=day)


# ----- management API -----


@dataclass(frozen=True)
class OrderPage:
    items: list[Order]
    page: int
    page_size: int
    total: int


def _delivery_day():
    """The local calendar day (zone time, UTC without a zone) of the order's window start."""
    local_time = Func(
        Coalesce(F("zone__timezone"), Value("UTC")),
        F("delivery_window_start"),
        function="timezone",
        output_field=DateTimeField(),
    )
    return Cast(local_time, DateField())


def order_list(
    *, organization_id, status: str | None = None, day: date | None = None, zone_id=None
) -> QuerySet[Order]:
    """The organization's orders, newest first (a stable order: ties broken by id), with
    zone and driver joined. `day` keeps orders whose window starts on that day, zone time."""
    qs = _with_relations(Order.objects.filter(organization_id=organization_id))
    if status:
        qs = qs.filter(status=status)
    if zone_id:
        qs = qs.filter(zone_id=zone_id)
    if day:
        qs = qs.annotate(delivery_day=_delivery_day()).filter(delivery_day=day)
    return qs.order_by("-created_at", "-id")


def order_page(
    *,
    organization_id,
    status: str | None,
    day: date | None,
    zone_id,
    page: int,
    page_size: int,
) -> OrderPage:
    """One page of `order_list`: two queries (rows and count), whatever the page holds."""
    qs = order_list(organization_id=organization_id, status=status, day=day, zone_id=zone_id)
    offset = (page - 1) * page_size
    return OrderPage(
        items=list(qs[offset : offset + page_size]),
        page=page,
        page_size=page_size,
        total=qs.count(),
    )


def order_get_with_history(*, organization_id, order_id) -> Order:
    """`order_get` with its status history prefetched, oldest first."""
    order = order_get(organization_id=organization_id, order_id=order_id)
    prefetch_related_objects(
        [order], Prefetch("status_events", queryset=OrderStatusEvent.objects.order_by("at", "id"))
    )
    return order
