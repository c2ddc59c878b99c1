"""What `manage.py demo` needs from dispatch (contract "Dispatch", "Running it"): a depot on each
dispatch zone, three drivers serving them, a day of partner orders to plan, and the lines that
show where to plan them.

Everything goes through the services the management and partner APIs use (zone depots, drivers
with their zones, `partner_order_create` with its window booking and `order.created`), and every
step is idempotent: what exists is kept.
"""

import json
import shlex
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from urllib.parse import urlencode

from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from shapely.geometry import Point

from dispatch.services import drivers as driver_services
from integrations import windows
from integrations.errors import DeliveryWindowFull
from integrations.models import Order
from integrations.partner import services as partner_services
from tenants.models import ApiKey, Driver, Organization
from zones import selectors as zone_selectors
from zones import services as zone_services
from zones.geometry import polygon_from_geodata
from zones.models import DISPATCH_PURPOSES, Zone

#: how far ahead the demo looks for a day every dispatch zone takes deliveries
LOOKAHEAD_DAYS = 14
#: demo orders per run's delivery day
ORDER_COUNT = 12

#: depots by zone slug (zones/demo.py); a dispatch zone not named here, or whose depot point it
#: no longer contains, gets its polygon's representative point
DEMO_DEPOTS = {
    "berlin-mitte": {"address": "Alexanderplatz 1, 10178 Berlin", "lat": 52.5219, "lng": 13.4132},
    "kreuzberg": {"address": "Oranienstraße 25, 10999 Berlin", "lat": 52.5010, "lng": 13.4190},
}

#: three drivers with different vehicles, so the plan shows vehicle fit (the two chilled orders
#: go to the refrigerated van only) and a later shift
DEMO_DRIVERS = (
    {
        "name": "Anna Demo",
        "phone": "+4915112300001",
        "vehicle_type": "car",
        "capacity": 10,
        "shift_start": time(8),
        "shift_end": time(18),
    },
    {
        "name": "Ben Demo",
        "phone": "+4915112300002",
        "vehicle_type": "motorcycle",
        "capacity": 6,
        "shift_start": time(8),
        "shift_end": time(18),
    },
    {
        "name": "Cem Demo",
        "phone": "+4915112300003",
        "vehicle_type": "refrigerated",
        "capacity": 8,
        "shift_start": time(10),
        "shift_end": time(20),
    },
)

#: drop-offs by zone slug: (address, lat, lng); each is checked against the zone's polygon
DEMO_DROPOFFS = {
    "berlin-mitte": (
        ("Friedrichstraße 100, 10117 Berlin", 52.5203, 13.3880),
        ("Torstraße 120, 10119 Berlin", 52.5290, 13.4000),
        ("Rosenthaler Straße 40, 10178 Berlin", 52.5262, 13.4020),
        ("Invalidenstraße 50, 10115 Berlin", 52.5290, 13.3780),
        ("Leipziger Straße 60, 10117 Berlin", 52.5100, 13.3950),
        ("Karl-Liebknecht-Straße 13, 10178 Berlin", 52.5230, 13.4100),
    ),
    "kreuzberg": (
        ("Oranienstraße 180, 10999 Berlin", 52.5000, 13.4220),
        ("Bergmannstraße 30, 10961 Berlin", 52.4895, 13.3950),
        ("Wiener Straße 20, 10999 Berlin", 52.4980, 13.4330),
        ("Mehringdamm 50, 10961 Berlin", 52.4920, 13.3880),
        ("Skalitzer Straße 80, 10997 Berlin", 52.5000, 13.4400),
        ("Gneisenaustraße 60, 10961 Berlin", 52.4910, 13.4050),
    ),
}

RECIPIENTS = (
    "Lena Fischer",
    "Jonas Weber",
    "Mia Schulz",
    "Paul Wagner",
    "Emma Becker",
    "Felix Hoffmann",
    "Hannah Koch",
    "Lukas Richter",
    "Sofia Klein",
    "Noah Wolf",
    "Clara Neumann",
    "Elias Braun",
)


@dataclass(frozen=True)
class DemoDispatch:
    """What the demo set up for dispatch: the delivery day of its orders (None when no day in
    the next two weeks takes deliveries in every dispatch zone), the dispatch zones, the demo
    drivers in `DEMO_DRIVERS` order and the day's demo orders (those this run created and those
    earlier runs did)."""

    day: date | None
    zones: list[Zone]
    drivers: list[Driver]
    orders: list[Order]


def _dispatch_zones(zones: list[Zone]) -> list[Zone]:
    return [zone for zone in zones if zone.purpose in DISPATCH_PURPOSES]


def _point_inside(zone: Zone, lat: float, lng: float) -> tuple[float, float]:
    """(lat, lng) itself when inside the zone, else the zone's representative point."""
    polygon = polygon_from_geodata(zone.geodata)
    if polygon.contains(Point(lng, lat)):
        return lat, lng
    point = polygon.representative_point()
    return round(point.y, 6), round(point.x, 6)


def demo_depots_set(*, zones: list[Zone]) -> list[Zone]:
    """A depot on each dispatch zone of `zones` that has none (contract "Dispatch": routes start
    and end there), through `zone_update`; the zones as they are now."""
    updated = []
    for zone in zones:
        if zone.purpose not in DISPATCH_PURPOSES or zone.depot_lat is not None:
            updated.append(zone)
            continue
        spec = DEMO_DEPOTS.get(zone.slug, {"address": f"{zone.name} depot", "lat": 0, "lng": 0})
        lat, lng = _point_inside(zone, spec["lat"], spec["lng"])
        depot = {"address": spec["address"], "lat": lat, "lng": lng}
        updated.append(zone_services.zone_update(zone=zone, depot=depot))
    return updated


def demo_drivers_create(*, organization: Organization, zones: list[Zone]) -> list[Driver]:
    """The three demo drivers, each created (serving the dispatch zones of `zones`) when the
    organization has no driver of that name; existing ones are kept as they are."""
    zone_ids = [zone.id for zone in _dispatch_zones(zones)]
    drivers = []
    for spec in DEMO_DRIVERS:
        driver = Driver.objects.filter(organization=organization, name=spec["name"]).first()
        if driver is None:
            driver = driver_services.driver_create(
                organization_id=organization.id, zone_ids=zone_ids, **spec
            )
        drivers.append(driver)
    return drivers


def demo_delivery_day(
    *, zones: list[Zone], now: datetime | None = None
) -> tuple[date, list[windows.Window]] | None:
    """The next delivery day of the dispatch zones (contract "Orders": windows 08:00-12:00,
    12:00-16:00, 16:00-20:00 zone time, none on Friday and Saturday, none on a zone's blackout
    dates) with its windows still to start: today while a window has yet to start, else the
    first later day every dispatch zone takes deliveries. None when the next two weeks have
    none. The demo zones share one time zone; the first zone's is used."""
    dispatch_zones = _dispatch_zones(zones)
    if not dispatch_zones:
        return None
    now = now or timezone.now()
    tz = windows.zone_tz(dispatch_zones[0].timezone)
    today = now.astimezone(tz).date()
    for offset in range(LOOKAHEAD_DAYS):
        day = today + timedelta(days=offset)
        ahead = [window for window in windows.windows_for_day(day, tz) if window.start > now]
        blacked_out = any(
            zone_selectors.zone_blackout_on(zone_id=zone.id, day=day) for zone in dispatch_zones
        )
        if ahead and not blacked_out:
            return day, ahead
    return None


def demo_external_ref(day: date, number: int) -> str:
    """`DEMO-<yyyymmdd>-<nn>`: one day's demo orders, the same on every run of that day."""
    return f"DEMO-{day:%Y%m%d}-{number:02d}"


def _order_draft(
    *, number: int, zone: Zone, dropoff: tuple[str, float, float], window: windows.Window, day: date
) -> partner_services.PartnerOrderDraft:
    address, lat, lng = dropoff
    lat, lng = _point_inside(zone, lat, lng)
    chilled = number in (4, 10)  # two chilled orders: only the refrigerated van takes them
    return partner_services.PartnerOrderDraft(
        external_ref=demo_external_ref(day, number),
        pickup_address=zone.depot_address or f"{zone.name} depot",
        pickup_lat=zone.depot_lat,
        pickup_lng=zone.depot_lng,
        dropoff_address=address,
        dropoff_lat=lat,
        dropoff_lng=lng,
        recipient_name=RECIPIENTS[(number - 1) % len(RECIPIENTS)],
        recipient_phone=f"+49151123401{number:02d}",
        package_size="medium" if number % 3 == 0 else "small",
        weight_kg=Decimal("1.5") + number % 4,
        temperature_class="Chilled" if chilled else "Ambient",
        delivery_zone=zone.name,
        delivery_window_start=window.start,
        notes="Demo order: ring twice" if number % 2 else "Demo order",
    )


def demo_orders_create(
    *,
    organization: Organization,
    api_key: ApiKey,
    zones: list[Zone],
    day: date,
    day_windows: list[windows.Window],
) -> list[Order]:
    """`ORDER_COUNT` partner orders of `api_key` on `day`, alternating between the dispatch zones
    and spread over `day_windows`, through `partner_order_create` (window booking, notes,
    `order.created`), as `POST /integrations/partner-a/orders` creates them. An order whose
    external ref exists is skipped, and so is one whose window is full (each order has its own
    savepoint). The day's demo orders, oldest first."""
    dispatch_zones = [
        zone for zone in _dispatch_zones(zones) if zone.depot_lat is not None
    ] or _dispatch_zones(zones)
    for number in range(1, ORDER_COUNT + 1):
        external_ref = demo_external_ref(day, number)
        if Order.objects.filter(organization=organization, external_ref=external_ref).exists():
            continue
        zone = dispatch_zones[(number - 1) % len(dispatch_zones)]
        dropoffs = DEMO_DROPOFFS.get(zone.slug)
        if dropoffs:
            dropoff = dropoffs[(number - 1) // len(dispatch_zones) % len(dropoffs)]
        else:
            point = polygon_from_geodata(zone.geodata).representative_point()
            dropoff = (f"{number} Demo Street", point.y, point.x)
        window = day_windows[(number - 1) % len(day_windows)]
        try:
            with transaction.atomic():
                partner_services.partner_order_create(
                    organization_id=organization.id,
                    platform=api_key.platform,
                    draft=_order_draft(
                        number=number, zone=zone, dropoff=dropoff, window=window, day=day
                    ),
                    actor=f"api-key {api_key.name} ({api_key.platform})",
                    api_key_id=api_key.id,
                )
        except DeliveryWindowFull:
            continue
    refs = [demo_external_ref(day, number) for number in range(1, ORDER_COUNT + 1)]
    return list(
        Order.objects.filter(organization=organization, external_ref__in=refs).order_by(
            "external_ref"
        )
    )


@transaction.atomic
def demo_dispatch_seed(
    *, organization: Organization, api_key: ApiKey, zones: list[Zone]
) -> DemoDispatch:
    """Depots, drivers and the next delivery day's orders of the demo (idempotent)."""
    zones = demo_depots_set(zones=zones)
    drivers = demo_drivers_create(organization=organization, zones=zones)
    found = demo_delivery_day(zones=zones)
    orders = []
    day = None
    if found is not None:
        day, day_windows = found
        orders = demo_orders_create(
            organization=organization,
            api_key=api_key,
            zones=zones,
            day=day,
            day_windows=day_windows,
        )
    return DemoDispatch(day=day, zones=_dispatch_zones(zones), drivers=drivers, orders=orders)


def demo_dispatcher_url(*, base_url: str, zone: Zone, day: date | None) -> str:
    """The dispatcher's page in Django admin on `zone` and `day`."""
    query = {"zone": str(zone.id)}
    if day is not None:
        query["date"] = day.isoformat()
    path = reverse("admin:dispatch_plan_dispatcher")
    return f"{base_url.rstrip('/')}{path}?{urlencode(query)}"


def demo_plan_curl_line(*, base_url: str, organization_id, day: date) -> str:
    """A `curl` that asks the management API for a plan of `day` over every zone with orders
    (202 `planning`), with the bearer token in `$TOKEN`."""
    plans = f"{base_url.rstrip('/')}/api/manage/organizations/{organization_id}/dispatch/plans"
    body = json.dumps({"date": day.isoformat()})
    return (
        f'curl -s -X POST {shlex.quote(plans)} -H "Authorization: Bearer $TOKEN" '
        f"-H 'Content-Type: application/json' -d {shlex.quote(body)}"
    )
