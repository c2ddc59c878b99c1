"""Per-organization spatial index of zones: a shapely STRtree over prepared polygons, with
the zones' blackout dates (a create's check then costs no query).

Building it costs one query and some CPU, so each process keeps the index of recently used
organizations in memory. A version token per organization lives in Redis and is replaced on
every zone change (`invalidate`), so every process notices the change on its next lookup and
rebuilds: a lookup costs one Redis GET, no database query and no Python loop over all zones.
Blackout writes replace the token too (zones/services.py), so a zone change made outside the
services (the ORM in a shell) is seen only after the next one, or after VERSION_TTL_SECONDS.

Transactions: `invalidate` replaces the token at once and again after commit. A process that
rebuilt between the two from the old rows is invalidated by the second; the connection that made
the change, which sees its uncommitted rows, does not keep an index built from them (the
change could still be rolled back).
"""

import copy
import logging
import threading
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from datetime import date

import numpy as np
import shapely
from django.contrib.postgres.expressions import ArraySubquery
from django.core.cache import cache
from django.db import transaction
from django.db.models import OuterRef
from redis.exceptions import RedisError
from shapely.geometry import Point

from zones.geometry import LocalMetricFrame, polygon_area_m2, polygon_from_geodata
from zones.models import Zone, ZoneBlackout
from zones.version_tokens import version_token_get

logger = logging.getLogger(__name__)

#: how many organizations' indexes one process keeps (least recently used are dropped)
MAX_CACHED_ORGANIZATIONS = 256
VERSION_TTL_SECONDS = 7 * 24 * 3600
#: radii of the widening nearest-zone search, in metres (the caller's maximum is added)
SEARCH_RADII_M = (50.0, 500.0, 2_000.0)


@dataclass(frozen=True)
class NearZone:
    """A zone and the geodesic distance in metres from a point to its boundary."""

    zone: Zone
    distance_m: float
    contains: bool


class ZoneIndex:
    """All zones of one organization (enabled or not), searchable by point."""

    def __init__(self, zones: list[Zone]):
        self._zones = zones
        # (zone id, date) of the zones' blackouts: `blackout_dates`, read with them in index_for.
        self._blackouts = {
            (zone.id, day) for zone in zones for day in getattr(zone, "blackout_dates", ())
        }
        polygons = [polygon_from_geodata(zone.geodata) for zone in zones]
        self._polygons = np.array(polygons, dtype=object)
        shapely.prepare(self._polygons)  # repeated covers() tests reuse the prepared edges
        self._tree = shapely.STRtree(self._polygons)
        self._areas = np.array([polygon_area_m2(polygon) for polygon in polygons])
        self._enabled = np.array([zone.enabled for zone in zones], dtype=bool)
        self._purposes = np.array([zone.purpose for zone in zones], dtype=object)
        self._position = {zone.id: i for i, zone in enumerate(zones)}

    def __len__(self) -> int:
        return len(self._zones)

    def zone(self, zone_id) -> Zone | None:
        """The zone `zone_id` of this index (a copy), or None when it has no such zone."""
        position = self._position.get(zone_id)
        return None if position is None else self._copy(position)

    def blacked_out(self, zone_id, day: date) -> bool:
        """Whether the zone takes no deliveries on `day` (a date in its time zone)."""
        return (zone_id, day) in self._blackouts

    def _eligible(self, indices: np.ndarray, purposes, enabled_only: bool) -> np.ndarray:
        keep = np.ones(len(indices), dtype=bool)
        if enabled_only:
            keep &= self._enabled[indices]
        if purposes is not None:
            keep &= np.isin(self._purposes[indices], list(purposes))
        return indices[keep]

    def _smallest_first(self, indices: np.ndarray) -> np.ndarray:
        # Ties (same area) are broken by the build order: name, then id.
        return indices[np.lexsort((indices, self._areas[indices]))]

    def containing(
        self, lat: float, lng: float, *, purposes=None, enabled_only: bool = True
    ) -> list[Zone]:
        """Zones covering the point (boundary included), smallest first."""
        point = Point(lng, lat)
        candidates = self._tree.query(point)  # bounding boxes only
        candidates = self._eligible(candidates, purposes, enabled_only)
        if len(candidates):
            candidates = candidates[shapely.covers(self._polygons[candidates], point)]
        return [self._copy(i) for i in self._smallest_first(candidates)]

    def distance_to_boundary_m(self, zone: Zone, lat: float, lng: float) -> float:
        """Geodesic metres from the point to the edge of `zone` (a zone of this index)."""
        polygon = self._polygons[self._position[zone.id]]
        return LocalMetricFrame(lat, lng).geodesic_distance_to_boundary(polygon)

    def nearest(
        self,
        lat: float,
        lng: float,
        *,
        max_m: float,
        purposes=None,
        enabled_only: bool = True,
        exclude=None,
    ) -> NearZone | None:
        """The zone whose boundary is nearest the point, if within `max_m` metres (geodesic);
        `exclude` (a zone id) leaves that zone out.

        The STRtree is asked for the zones whose boxes reach a box of radius r around the
        point, r growing (50 m, 500 m, 2 km, ... `max_m`) until one lies within r: so the work
        depends on the zones near the point, never on the organization's zone count. Their
        distances are computed in one vectorized call; the closest are measured geodesically.
        """
        frame = LocalMetricFrame(lat, lng)
        radii = [r for r in SEARCH_RADII_M if r < max_m] + [max_m]
        for radius in radii:
            candidates = self._tree.query(frame.degree_box(radius))
            candidates = self._eligible(candidates, purposes, enabled_only)
            if exclude is not None and exclude in self._position:
                candidates = candidates[candidates != self._position[exclude]]
            if not len(candidates):
                continue
            rough = frame.boundary_distances(self._polygons[candidates])
            # The local frame is accurate to ~0.1 %: keep a margin, then decide geodesically.
            closest = candidates[rough <= min(rough.min(), radius) * 1.002 + 0.5]
            measured = sorted(
                (frame.geodesic_distance_to_boundary(self._polygons[i]), self._areas[i], int(i))
                for i in closest
            )
            if measured and measured[0][0] <= radius:
                distance, _area, index = measured[0]
                contains = bool(self._polygons[index].covers(Point(lng, lat)))
                return NearZone(self._copy(index), distance, contains)
        return None

    def _copy(self, index) -> Zone:
        # Callers get their own instance: the cached one is shared by every request (the JSON
        # fields are copied here, the ring cheaply).
        cached = self._zones[int(index)]
        zone = copy.copy(cached)
        zone.geodata = {
            **cached.geodata,
            "coordinates": [[list(p) for p in ring] for ring in cached.geodata["coordinates"]],
        }
        zone.metadata = copy.deepcopy(cached.metadata)
        return zone


# ----- the per-process cache, versioned in Redis -----

_lock = threading.Lock()
_indexes: "OrderedDict[str, tuple[str, ZoneIndex]]" = OrderedDict()


def _version_key(organization_id: str) -> str:
    return f"zones:index-version:{organization_id}"


def _current_version(organization_id: str) -> str | None:
    """The organization's version token (created when missing); None when Redis is away."""
    try:
        return version_token_get(_version_key(organization_id), timeout=VERSION_TTL_SECONDS)
    except (RedisError, OSError) as exc:
        logger.warning("zone index version unavailable: %s", exc.__class__.__name__)
        return None


def _replace_version(organization_id: str) -> None:
    try:
        cache.set(_version_key(organization_id), uuid.uuid4().hex, VERSION_TTL_SECONDS)
    except (RedisError, OSError):
        logger.error("could not invalidate the zone index of organization %s", organization_id)


def _uncommitted_changes() -> set:
    """Organizations whose zones this connection changed in its still-open transaction."""
    wrapper = transaction.get_connection()
    if not wrapper.in_atomic_block or not hasattr(wrapper, "zones_uncommitted"):
        wrapper.zones_uncommitted = set()
    return wrapper.zones_uncommitted


def invalidate(*, organization_id) -> None:
    """Call in the transaction of every zone create, update or delete."""
    organization_id = str(organization_id)
    _replace_version(organization_id)
    with _lock:
        _indexes.pop(organization_id, None)
    if transaction.get_connection().in_atomic_block:
        pending = _uncommitted_changes()
        pending.add(organization_id)

        def committed() -> None:
            pending.discard(organization_id)
            _replace_version(organization_id)

        transaction.on_commit(committed)


def index_for(*, organization_id) -> ZoneIndex:
    """The organization's index: from process memory when its version is current."""
    return _index(str(organization_id), kept_only=False)


def kept_index_for(*, organization_id) -> ZoneIndex | None:
    """As index_for, or None where this process cannot keep the index (Redis away, or zones
    changed in this connection's open transaction): a caller needing one fact reads it then
    with a query rather than building the whole index for it."""
    return _index(str(organization_id), kept_only=True)


def _index(organization_id: str, *, kept_only: bool) -> ZoneIndex | None:
    version = _current_version(organization_id)
    with _lock:
        cached = _indexes.get(organization_id)
        if cached is not None and version is not None and cached[0] == version:
            _indexes.move_to_end(organization_id)
            return cached[1]
    keep = version is not None and organization_id not in _uncommitted_changes()
    if kept_only and not keep:
        return None
    blackout_dates = ZoneBlackout.objects.filter(zone=OuterRef("pk")).values("date")
    zones = (
        Zone.objects.filter(organization_id=organization_id)
        .annotate(blackout_dates=ArraySubquery(blackout_dates))
        .order_by("name", "id")
    )
    index = ZoneIndex(list(zones))
    if keep:
        with _lock:
            _indexes[organization_id] = (version, index)
            _indexes.move_to_end(organization_id)
            while len(_indexes) > MAX_CACHED_ORGANIZATIONS:
                _indexes.popitem(last=False)
    return index
