"""Reads of the partner family: its orders by `externalRef`, its zones by name, and the
availability of its standard delivery windows (contract "Orders")."""

from dataclasses import dataclass
from datetime import date, datetime
from uuid import UUID

from integrations import selectors as order_selectors
from integrations import windows
from integrations.models import DeliveryWindowLoad, Order, OrderFamily
from zones import geocoding
from zones import selectors as zone_selectors
from zones.errors import NoZoneForAddress, ZoneNameNotFound
from zones.models import DISPATCH_PURPOSES, Zone, ZoneBlackout


def partner_order_get(*, organization_id: UUID | str, external_ref: str) -> Order:
    """A partner-family order of the organization, by `externalRef` (ERP orders: 404)."""
    return order_selectors.order_get_by_external_ref(
        organization_id=organization_id, external_ref=external_ref, family=OrderFamily.PARTNER
    )


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


def partner_zone_get_by_name(*, organization_id: UUID | str, name: str) -> Zone:
    """A zone partners can use, by name: enabled, of purpose dispatch or both (the zones the
    export lists as active); 404 `Zone <name> not found` otherwise."""
    zone = zone_selectors.zone_get_by_name(organization_id=organization_id, name=name)
    if not zone.enabled or zone.purpose not in DISPATCH_PURPOSES:
        raise ZoneNameNotFound(name)
    return zone


def windows_by_zone_name(*, organization_id: UUID | str, name: str, day: date) -> ZoneWindows:
    zone = partner_zone_get_by_name(organization_id=organization_id, name=name)
    return zones_windows(zones=[zone], day=day)[0]


def windows_by_address(
    *, organization_id: UUID | str, address: str, day: date
) -> list[ZoneWindows]:
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
