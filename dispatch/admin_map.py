"""The dispatcher's map, drawn on the server as inline SVG (contract "Dispatch", "Django admin"):
zone polygons, depots, each route's numbered stops and path in its own colour, and unassigned
orders in grey. Nothing is loaded from elsewhere: no tiles, fonts or scripts.

Positions are projected equirectangularly at the zones' mean latitude (a degree of longitude is
cos(latitude) times a degree of latitude), which keeps a city's shapes true to within a fraction
of a percent; the drawing is then fitted into a fixed viewBox.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

from django.utils.html import format_html
from django.utils.safestring import SafeString

WIDTH = 760
HEIGHT = 520
MARGIN = 28
STOP_RADIUS = 9
#: one colour per route, in the order routes are listed (Tableau 10: distinct, readable on white,
#: white numbers legible on each); a plan with more routes reuses them
ROUTE_COLOURS = (
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
)
UNASSIGNED_COLOUR = "#888888"


def route_colour(index: int) -> str:
    return ROUTE_COLOURS[index % len(ROUTE_COLOURS)]


@dataclass(frozen=True)
class MapZone:
    name: str
    #: the exterior ring, (lng, lat) pairs as GeoJSON has them
    ring: Sequence[Sequence[float]]


@dataclass(frozen=True)
class MapPoint:
    lat: float
    lng: float
    label: str
    #: the tooltip
    title: str


@dataclass(frozen=True)
class MapRoute:
    colour: str
    depot: tuple[float, float]
    stops: Sequence[MapPoint]


@dataclass(frozen=True)
class _Projection:
    cos_lat: float
    west: float
    north: float
    scale: float
    x_offset: float
    y_offset: float

    def __call__(self, lat: float, lng: float) -> tuple[float, float]:
        x = self.x_offset + (lng - self.west) * self.cos_lat * self.scale
        y = self.y_offset + (self.north - lat) * self.scale
        return round(x, 1), round(y, 1)


def _projection(zones: Sequence[MapZone], points: Sequence[tuple[float, float]]) -> _Projection:
    zone_lats = [lat for zone in zones for _, lat in zone.ring]
    every = [*((lat, lng) for zone in zones for lng, lat in zone.ring), *points]
    mean_lat = sum(zone_lats) / len(zone_lats) if zone_lats else every[0][0]
    cos_lat = math.cos(math.radians(mean_lat))
    lats = [lat for lat, _ in every]
    lngs = [lng for _, lng in every]
    west, east, south, north = min(lngs), max(lngs), min(lats), max(lats)
    span_x = max((east - west) * cos_lat, 1e-6)
    span_y = max(north - south, 1e-6)
    scale = min((WIDTH - 2 * MARGIN) / span_x, (HEIGHT - 2 * MARGIN) / span_y)
    # Centred: the spare room of the looser side split on both of its edges.
    x_offset = (WIDTH - span_x * scale) / 2
    y_offset = (HEIGHT - span_y * scale) / 2
    return _Projection(cos_lat, west, north, scale, x_offset, y_offset)


def plan_map_svg(
    *,
    zones: Sequence[MapZone],
    depots: Sequence[MapPoint],
    routes: Sequence[MapRoute],
    unassigned: Sequence[MapPoint] = (),
) -> SafeString:
    """The map as one `<svg>` element: a `<path class="zone">` per zone, a square per depot, per
    route a `<polyline>` from its depot through its stops and back, and a `<circle>` with a
    `<text>` number per stop; unassigned orders are grey circles marked `?`."""
    points = [
        *((point.lat, point.lng) for point in depots),
        *((stop.lat, stop.lng) for route in routes for stop in route.stops),
        *((point.lat, point.lng) for point in unassigned),
    ]
    if not zones and not points:
        return format_html(
            '<svg class="dispatch-map" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {} {}" '
            'role="img" aria-label="Nothing to draw"></svg>',
            WIDTH,
            HEIGHT,
        )
    project = _projection(zones, points)
    parts = [_zone(zone, project) for zone in zones if len(zone.ring) >= 3] + [
        _route_line(route, project) for route in routes if route.stops
    ]
    parts += [_depot(depot, project) for depot in depots]
    parts += [_stop(point, UNASSIGNED_COLOUR, project, "unassigned") for point in unassigned]
    parts += [
        _stop(stop, route.colour, project, "stop") for route in routes for stop in route.stops
    ]
    return format_html(
        '<svg class="dispatch-map" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {} {}" '
        'role="img" aria-label="Map of the plan: zones, depots and each route\'s stops">'
        '<rect width="100%" height="100%" fill="#f8f8f6"/>{}</svg>',
        WIDTH,
        HEIGHT,
        SafeString("".join(parts)),
    )


def _zone(zone: MapZone, project: _Projection) -> str:
    corners = [project(lat, lng) for lng, lat in zone.ring]
    path = "M" + " L".join(f"{x},{y}" for x, y in corners) + " Z"
    label_x = round(sum(x for x, _ in corners) / len(corners), 1)
    label_y = min(y for _, y in corners) + 16
    return format_html(
        '<g class="zone-shape"><path class="zone" d="{}" fill="#e8eef4" fill-opacity="0.6" '
        'stroke="#79aec8" stroke-width="1.5"><title>{}</title></path>'
        '<text class="zone-name" x="{}" y="{}" text-anchor="middle" font-size="13" '
        'fill="#417690">{}</text></g>',
        path,
        zone.name,
        label_x,
        label_y,
        zone.name,
    )


def _route_line(route: MapRoute, project: _Projection) -> str:
    path = [route.depot, *((stop.lat, stop.lng) for stop in route.stops), route.depot]
    return format_html(
        '<polyline class="route" points="{}" fill="none" stroke="{}" stroke-width="2.5" '
        'stroke-opacity="0.8" stroke-linejoin="round"/>',
        " ".join(f"{x},{y}" for x, y in (project(lat, lng) for lat, lng in path)),
        route.colour,
    )


def _depot(depot: MapPoint, project: _Projection) -> str:
    x, y = project(depot.lat, depot.lng)
    return format_html(
        '<g class="depot"><rect x="{}" y="{}" width="16" height="16" fill="#333" stroke="#fff" '
        'stroke-width="1.5"><title>{}</title></rect>'
        '<text x="{}" y="{}" text-anchor="middle" font-size="11" font-weight="bold" '
        'fill="#fff">{}</text></g>',
        round(x - 8, 1),
        round(y - 8, 1),
        depot.title,
        x,
        round(y + 4, 1),
        depot.label,
    )


def _stop(point: MapPoint, colour: str, project: _Projection, css_class: str) -> str:
    x, y = project(point.lat, point.lng)
    return format_html(
        '<g class="{}"><circle cx="{}" cy="{}" r="{}" fill="{}" stroke="#fff" stroke-width="1.5">'
        "<title>{}</title></circle>"
        '<text x="{}" y="{}" text-anchor="middle" font-size="10" font-weight="bold" '
        'fill="#fff" pointer-events="none">{}</text></g>',
        css_class,
        x,
        y,
        STOP_RADIUS,
        colour,
        point.title,
        x,
        round(y + 3.5, 1),
        point.label,
    )
