"""Zone polygons: validation of client GeoJSON (contract "Slots and windows") and distances in
metres (contract "Geocoding and resolve-zone").

Polygons are kept as GeoJSON (`[lng, lat]` positions) and handled by shapely in that same
longitude/latitude plane: containment is exact there. Distances are never taken in degrees:
`LocalMetricFrame` rescales degrees around a point into metres (an affine map, so polygon edges
stay straight and containment is unchanged) to find the nearest boundary point, and the distance
to that point is then measured on the WGS 84 ellipsoid with geopy's geodesic (Karney).
"""

import itertools
import math
from dataclasses import dataclass

import numpy as np
import shapely
from geopy.distance import geodesic
from shapely.geometry import Point, Polygon

from zones.errors import PolygonInvalid

FIELD = "geodata"
MAX_POINTS = 10_000


def polygon_normalize(geodata, *, field: str = FIELD) -> dict:
    """A client's GeoJSON Polygon, checked and normalized; raises PolygonInvalid (400).

    Accepts `{"type": "Polygon", "coordinates": [ring]}` with one exterior ring of `[lng, lat]`
    positions (an altitude, if any, is dropped). An open ring is closed. The ring must have at
    least 4 positions once closed, coordinates in range, and form a valid polygon (shapely:
    no self-intersection, non-zero area). Holes are refused: the partner export has no way to
    show them. Positions are read on the plane, as GeoJSON says (RFC 7946 3.1.9): a ring that
    crosses the antimeridian or spans more than 180 degrees of longitude is refused
    (`_refuse_beyond_a_hemisphere`).
    """
    if not isinstance(geodata, dict):
        raise PolygonInvalid([f"{field} must be a GeoJSON Polygon object"])
    if geodata.get("type") != "Polygon":
        raise PolygonInvalid([f"{field}.type must be Polygon"])
    rings = geodata.get("coordinates")
    if not isinstance(rings, list) or not rings:
        raise PolygonInvalid([f"{field}.coordinates must be an array holding one linear ring"])
    if len(rings) > 1:
        raise PolygonInvalid([f"{field}.coordinates must hold exactly one ring (no holes)"])
    ring = _positions(rings[0], field=field)
    if ring[0] != ring[-1]:
        ring.append(
            ring[0]
        )  # contract "Slots and windows": an open ring sent by a client is closed
    if len(ring) < 4:
        raise PolygonInvalid([f"{field} ring must have at least 4 positions (first = last)"])
    if len(set(ring)) < 3:
        raise PolygonInvalid([f"{field} ring must have at least 3 distinct positions"])
    _refuse_beyond_a_hemisphere(ring, field=field)
    polygon = Polygon(ring)
    if polygon.convex_hull.area <= 0:
        raise PolygonInvalid([f"{field} polygon must have a non-zero area (collinear positions)"])
    reason = shapely.is_valid_reason(polygon)
    if reason != "Valid Geometry":
        if reason.startswith(("Self-intersection", "Ring Self-intersection")):
            raise PolygonInvalid([f"{field} polygon must not intersect itself ({reason})"])
        raise PolygonInvalid([f"{field} is not a valid polygon ({reason})"])
    return {"type": "Polygon", "coordinates": [[[lng, lat] for lng, lat in ring]]}


#: The widest zone, in degrees of longitude: beyond it a polygon read on the plane covers more
#: than a hemisphere (a whole-world rectangle is 360 wide).
MAX_LONGITUDE_SPAN = 180


def _refuse_beyond_a_hemisphere(ring: list[tuple[float, float]], *, field: str) -> None:
    """Refuses what the lng/lat plane would read as something else than the client meant.

    An edge spanning more than 180 degrees of longitude is almost surely one that crosses the
    antimeridian (175 E to 175 W is 10 degrees that way): on the plane it runs the long way
    round, and the zone would become a 350-degree band. A ring wider than 180 degrees covers
    more than a hemisphere, which no delivery zone does (a whole-world polygon among them).
    """
    for index, ((lng, _), (next_lng, _)) in enumerate(itertools.pairwise(ring)):
        # -180 to 180 goes all the way round (a whole-world ring): the span below says so.
        if MAX_LONGITUDE_SPAN < abs(next_lng - lng) < 360:
            raise PolygonInvalid(
                [
                    f"{field} crosses the antimeridian (the edge from position {index} to "
                    f"{index + 1} spans more than {MAX_LONGITUDE_SPAN} degrees of longitude): "
                    "split it into two zones, one each side of longitude 180"
                ]
            )
    longitudes = [lng for lng, _ in ring]
    span = max(longitudes) - min(longitudes)
    if span > MAX_LONGITUDE_SPAN:
        raise PolygonInvalid(
            [
                f"{field} spans {span:g} degrees of longitude: a zone may span at most "
                f"{MAX_LONGITUDE_SPAN} (more covers more than a hemisphere)"
            ]
        )


def _positions(ring, *, field: str) -> list[tuple[float, float]]:
    if not isinstance(ring, list) or not ring:
        raise PolygonInvalid([f"{field}.coordinates[0] must be an array of [lng, lat] positions"])
    if len(ring) > MAX_POINTS:
        raise PolygonInvalid([f"{field} ring must have at most {MAX_POINTS} positions"])
    positions = []
    for index, position in enumerate(ring):
        where = f"{field}.coordinates[0][{index}]"
        if (
            not isinstance(position, list)
            or len(position) not in (2, 3)
            or not all(_is_number(value) for value in position)
        ):
            raise PolygonInvalid([f"{where} must be a [lng, lat] pair of numbers"])
        lng, lat = float(position[0]), float(position[1])
        if not -180 <= lng <= 180:
            raise PolygonInvalid([f"{where} longitude must be between -180 and 180"])
        if not -90 <= lat <= 90:
            raise PolygonInvalid([f"{where} latitude must be between -90 and 90"])
        positions.append((lng, lat))
    return positions


def _is_number(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value)


def polygon_from_geodata(geodata: dict) -> Polygon:
    """The shapely polygon of a stored (already normalized) `geodata`, in the lng/lat plane."""
    return Polygon(geodata["coordinates"][0])


def exterior_lat_lng(geodata: dict) -> list[tuple[float, float]]:
    """The closed exterior ring as (lat, lng) pairs, for the partner export."""
    return [(lat, lng) for lng, lat in geodata["coordinates"][0]]


def metres_per_degree(lat: float) -> tuple[float, float]:
    """Metres per degree of latitude and of longitude at `lat` on the WGS 84 ellipsoid."""
    phi = math.radians(lat)
    per_lat = 111_132.954 - 559.822 * math.cos(2 * phi) + 1.175 * math.cos(4 * phi)
    per_lng = 111_412.84 * math.cos(phi) - 93.5 * math.cos(3 * phi) + 0.118 * math.cos(5 * phi)
    # Within metres of a pole a degree of longitude is (almost) nothing; never divide by zero.
    return per_lat, max(per_lng, 1e-3)


@dataclass(frozen=True)
class LocalMetricFrame:
    """Degrees around (lat, lng) rescaled to metres, accurate to ~0.1 % within tens of km."""

    lat: float
    lng: float

    @property
    def scale(self) -> tuple[float, float]:
        per_lat, per_lng = metres_per_degree(self.lat)
        return per_lng, per_lat

    def degree_box(self, metres: float) -> Polygon:
        """The lng/lat box reaching at least `metres` from the centre in every direction."""
        per_lng, per_lat = self.scale
        # 1 % margin: the scale changes a little across the box.
        dlng, dlat = metres * 1.01 / per_lng, metres * 1.01 / per_lat
        return shapely.box(self.lng - dlng, self.lat - dlat, self.lng + dlng, self.lat + dlat)

    def to_metres(self, geometries):
        """A geometry or array of geometries in metres, the frame's centre at the origin."""
        per_lng, per_lat = self.scale
        offset = np.array([self.lng, self.lat])
        factor = np.array([per_lng, per_lat])
        return shapely.transform(geometries, lambda xy: (xy - offset) * factor)

    def to_degrees(self, x: float, y: float) -> tuple[float, float]:
        """(lat, lng) of a point given in this frame's metres."""
        per_lng, per_lat = self.scale
        return self.lat + y / per_lat, self.lng + x / per_lng

    def boundary_distances(self, polygons) -> np.ndarray:
        """Approximate metres from the centre to each polygon's boundary (one vectorized call)."""
        return shapely.distance(shapely.boundary(self.to_metres(polygons)), Point(0, 0))

    def geodesic_distance_to_boundary(self, polygon: Polygon) -> float:
        """Metres (geodesic, WGS 84) from the centre to the nearest point of `polygon`'s edge."""
        boundary = self.to_metres(polygon.exterior)
        x, y = shapely.shortest_line(boundary, Point(0, 0)).coords[0]
        lat, lng = self.to_degrees(x, y)
        return geodesic((self.lat, self.lng), (lat, lng)).meters


def polygon_area_m2(polygon: Polygon) -> float:
    """Approximate area in square metres (scaled at the polygon's centroid latitude).

    Only used to rank zones that contain one same point, so "smallest" is compared fairly
    between zones that reach to different latitudes.
    """
    per_lat, per_lng = metres_per_degree(polygon.centroid.y)
    return polygon.area * per_lat * per_lng
