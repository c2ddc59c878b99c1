"""Reads on zones: by id, by name, by point, and address → zone resolution (contract "Slots and
windows", "Geocoding and resolve-zone").

Every function takes the organization: no zone is ever looked up across tenants, and another
organization's zone answers exactly like an unknown one (404).

Point lookups go through `zones.spatial_index` (an STRtree per organization, cached in process
memory and versioned in Redis): they cost no database query once the index is warm, whatever the
number of zones. The zones they return are fresh copies: callers may use them freely.
"""

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from enum import StrEnum
from uuid import UUID

from django.db.models import QuerySet

from delivery.fields import parse_uuid
from zones import geocoding, spatial_index
from zones.errors import (
    BlackoutNotFound,
    NoZoneForAddress,
    ZoneBlackedOut,
    ZoneNameNotFound,
    ZoneNotFound,
)
from zones.models import DISPATCH_PURPOSES, Zone, ZoneBlackout

#: contract "Geocoding and resolve-zone": within this distance of a zone's boundary (either side)
#: the answer is `medium`
BOUNDARY_BAND_M = 50.0
#: contract "Geocoding and resolve-zone": the nearest active zone within this distance answers `low`
NEAREST_ZONE_MAX_M = 5_000.0


def zone_list(*, organization_id: UUID | str) -> QuerySet[Zone]:
    """All zones of the organization, by name."""
    return Zone.objects.filter(organization_id=organization_id).order_by("name", "id")


def zone_export_list(*, organization_id: UUID | str) -> QuerySet[Zone]:
    """contract "Orders": every zone of purpose `dispatch` or `both`, disabled ones included."""
    return zone_list(organization_id=organization_id).filter(purpose__in=DISPATCH_PURPOSES)


def zone_get(*, organization_id: UUID | str, zone_id: UUID | str) -> Zone:
    """The organization's zone `zone_id`; 404 `Zone not found` when unknown or malformed."""
    parsed = parse_uuid(zone_id)
    zone = (
        Zone.objects.filter(organization_id=organization_id, pk=parsed).first() if parsed else None
    )
    if zone is None:
        raise ZoneNotFound()
    return zone


def zone_get_by_name(*, organization_id: UUID | str, name: str) -> Zone:
    """The organization's zone named exactly `name` (enabled or not); 404 `Zone <name> not found`.

    Callers that need an active zone check `zone.enabled` themselves.
    """
    zone = Zone.objects.filter(organization_id=organization_id, name=name).first()
    if zone is None:
        raise ZoneNameNotFound(name)
    return zone


def zones_containing_point(
    *,
    organization_id: UUID | str,
    lat: float,
    lng: float,
    purposes: Iterable[str] | None = None,
    enabled_only: bool = True,
) -> list[Zone]:
    """The organization's zones whose polygon covers (lat, lng), boundary included, smallest first.

    `purposes` keeps only zones of those purposes (e.g. `SLOT_PURPOSES`); `enabled_only` (the
    default) leaves disabled zones out. "Smallest" compares areas in square metres.
    """
    index = spatial_index.index_for(organization_id=organization_id)
    return index.containing(lat, lng, purposes=_purposes(purposes), enabled_only=enabled_only)


def zone_containing_point(
    *,
    organization_id: UUID | str,
    lat: float,
    lng: float,
    purposes: Iterable[str] | None = None,
    enabled_only: bool = True,
) -> Zone | None:
    """The smallest zone covering (lat, lng), or None; filters as in `zones_containing_point`."""
    zones = zones_containing_point(
        organization_id=organization_id,
        lat=lat,
        lng=lng,
        purposes=purposes,
        enabled_only=enabled_only,
    )
    return zones[0] if zones else None


def _purposes(purposes: Iterable[str] | None) -> tuple[str, ...] | None:
    return None if purposes is None else tuple(str(purpose) for purpose in purposes)


# ----- resolve-zone -----


class Confidence(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


@dataclass(frozen=True)
class NextBestZone:
    zone: Zone
    distance_m: float


@dataclass(frozen=True)
class ResolveEvidence:
    """What a resolve-zone answer rests on, in metres (see `zone_resolve_evidence`)."""

    distance_m: float
    boundary_distance_m: float
    geocoder_precision: str
    next_best: NextBestZone | None


@dataclass(frozen=True)
class ResolvedZone:
    zone: Zone
    lat: float
    lng: float
    confidence: Confidence
    evidence: ResolveEvidence | None = None


def zone_resolve_point(
    *, organization_id: UUID | str, lat: float, lng: float, precise: bool = True
) -> ResolvedZone | None:
    """The zone of a geocoded point with the confidence of contract "Geocoding and resolve-zone", or
    None.

    - precise, inside an enabled zone and more than 50 m from its boundary: `high` (the
      smallest such zone);
    - inside a zone but within 50 m of its boundary, or within 50 m outside a zone, or any
      approximate geocode inside or within 50 m of a zone: `medium` (that zone);
    - otherwise the enabled zone whose boundary is nearest, within 5 km: `low`;
    - nothing within 5 km: None.
    Distances are geodesic, in metres (WGS 84).
    """
    index = spatial_index.index_for(organization_id=organization_id)
    containing = index.containing(lat, lng)
    if containing:
        zone = containing[0]
        near_boundary = index.distance_to_boundary_m(zone, lat, lng) <= BOUNDARY_BAND_M
        confidence = Confidence.HIGH if precise and not near_boundary else Confidence.MEDIUM
        return ResolvedZone(zone, lat, lng, confidence)
    nearest = index.nearest(lat, lng, max_m=NEAREST_ZONE_MAX_M)
    if nearest is None:
        return None
    if nearest.distance_m <= BOUNDARY_BAND_M:
        return ResolvedZone(nearest.zone, lat, lng, Confidence.MEDIUM)
    return ResolvedZone(nearest.zone, lat, lng, Confidence.LOW)


def zone_resolve(*, organization_id: UUID | str, address: str) -> ResolvedZone:
    """`POST /promises/resolve-zone`: geocode `address`, then `zone_resolve_point`.

    404 `No delivery zone found for the given address` when the address cannot be geocoded or
    no enabled zone lies within 5 km.
    """
    geocoded = geocoding.geocode(organization_id=organization_id, address=address)
    if geocoded is None:
        raise NoZoneForAddress()
    resolved = zone_resolve_point(
        organization_id=organization_id,
        lat=geocoded.lat,
        lng=geocoded.lng,
        precise=geocoded.precise,
    )
    if resolved is None:
        raise NoZoneForAddress()
    return dataclasses.replace(
        resolved,
        evidence=zone_resolve_evidence(
            organization_id=organization_id, resolved=resolved, precise=geocoded.precise
        ),
    )


def zone_resolve_evidence(
    *, organization_id: UUID | str, resolved: ResolvedZone, precise: bool
) -> ResolveEvidence:
    """The evidence of a resolved zone, so a caller can weigh a `medium` or `low` answer:

    - `distance_m`: from the point to the zone (0 when the zone covers it);
    - `boundary_distance_m`: how far inside the zone the point lies (0 when outside);
    - `geocoder_precision`: `precise` or `approximate` (the geocoder's own judgement);
    - `next_best`: the best other enabled zone by the same ranking (the smallest other zone
      covering the point, distance 0; else the nearest other zone within 5 km), or None.

    Distances are geodesic metres (WGS 84) to the nearest boundary point, that point found
    in a local equirectangular frame around the point (accurate to ~0.1 % within tens of km).
    """
    index = spatial_index.index_for(organization_id=organization_id)
    lat, lng, zone = resolved.lat, resolved.lng, resolved.zone
    edge = index.distance_to_boundary_m(zone, lat, lng)
    # The resolved zone is always enabled, so one lookup of the enabled zones answers both.
    covering = index.containing(lat, lng)
    inside = any(other.id == zone.id for other in covering)
    next_best = None
    others = [other for other in covering if other.id != zone.id]
    if others:
        next_best = NextBestZone(others[0], 0.0)
    else:
        near = index.nearest(lat, lng, max_m=NEAREST_ZONE_MAX_M, exclude=zone.id)
        if near is not None:
            next_best = NextBestZone(near.zone, near.distance_m)
    return ResolveEvidence(
        distance_m=0.0 if inside else edge,
        boundary_distance_m=edge if inside else 0.0,
        geocoder_precision="precise" if precise else "approximate",
        next_best=next_best,
    )


# ----- blackout days -----


def zone_blackout_list(*, zone: Zone) -> QuerySet[ZoneBlackout]:
    """The zone's blackout dates, ascending."""
    return ZoneBlackout.objects.filter(zone_id=zone.id).order_by("date", "id")


def zone_blackout_get(*, zone: Zone, blackout_id: UUID | str) -> ZoneBlackout:
    """The zone's blackout `blackout_id`; 404 `Blackout not found` when unknown, of another
    zone or malformed."""
    parsed = parse_uuid(blackout_id)
    blackout = ZoneBlackout.objects.filter(zone_id=zone.id, pk=parsed).first() if parsed else None
    if blackout is None:
        raise BlackoutNotFound()
    return blackout


def zone_blackout_on(*, zone_id: UUID | str, day: date) -> bool:
    """Whether the zone takes no deliveries on `day` (a date in the zone's time zone)."""
    return ZoneBlackout.objects.filter(zone_id=zone_id, date=day).exists()


def zone_kept(*, organization_id: UUID | str, zone_id: UUID | str) -> Zone | None:
    """The organization's zone `zone_id` from the kept zone index (a copy; no query while the
    index is current), or None where this process keeps no index or the index lacks the zone
    (created a moment ago): the caller reads it then."""
    index = spatial_index.kept_index_for(organization_id=organization_id)
    return None if index is None else index.zone(zone_id)


def zone_blackout_check(*, zone: Zone, day: date) -> None:
    """400 `Zone <name> takes no deliveries on <date>` on a blackout date of the zone. A zone
    the zone index gave carries its dates (`blackout_dates`, read with the index this request
    used); another is checked against the kept index (no query while it is current)."""
    carried = getattr(zone, "blackout_dates", None)
    if carried is not None:
        blacked_out = day in carried
    elif (index := spatial_index.kept_index_for(organization_id=zone.organization_id)) is None:
        blacked_out = zone_blackout_on(zone_id=zone.id, day=day)
    else:
        blacked_out = index.blacked_out(zone.id, day)
    if blacked_out:
        raise ZoneBlackedOut(name=zone.name, day=day)
