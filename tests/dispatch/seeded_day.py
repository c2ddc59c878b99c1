"""A dispatcher's day in Berlin for the admin page: three zones with depots, drivers serving them,
and about thirty orders with windows, one excluded (click & collect), one unservable (frozen, and
no refrigerated vehicle) and one without coordinates."""

import random
from datetime import UTC, date, datetime, time
from zoneinfo import ZoneInfo

from dispatch.models import DriverZone
from tests import builders

BERLIN_TZ = ZoneInfo("Europe/Berlin")
#: Wednesday 8 January 2031 (+01:00)
DAY = date(2031, 1, 8)
#: zone name -> (centre, width and height in metres); Mitte comes first by name
ZONES = {
    "Mitte": ((52.5219, 13.4032), 4200, 3000),
    "Neukölln": ((52.4811, 13.4350), 3000, 2600),
    "Prenzlauer Berg": ((52.5390, 13.4240), 2600, 2200),
}
#: two-hour windows, Berlin time
WINDOWS = ((8, 10), (10, 12), (12, 14), (14, 16))
MITTE_ORDERS = 24


def at(hour: int, day: date = DAY) -> datetime:
    return datetime.combine(day, time(hour), tzinfo=BERLIN_TZ).astimezone(UTC)


def seed_day(organization) -> dict:
    """The day's zones by name, drivers by name and Mitte's orders by reference."""
    rng = random.Random(7)
    zones = {}
    for name, (centre, width, height) in ZONES.items():
        zones[name] = builders.zone(
            organization,
            name,
            builders.box(*centre, width_m=width, height_m=height),
            depot={"address": f"Depot {name}", "lat": centre[0], "lng": centre[1]},
        )
    drivers = {}
    for name, zone_name in (
        ("Ana Petrova", "Mitte"),
        ("Ben Okafor", "Mitte"),
        ("Chloé Martin", "Mitte"),
        ("Dmitri Volkov", "Neukölln"),
        ("Eva Lindqvist", "Prenzlauer Berg"),
    ):
        drivers[name] = builders.driver(organization, name, capacity=10)
        DriverZone.objects.create(driver=drivers[name], zone=zones[zone_name])

    orders = {}
    (lat, lng), width, height = ZONES["Mitte"]

    def mitte_order(ref: str, window, **fields):
        north = rng.uniform(-0.4, 0.4) * height
        east = rng.uniform(-0.4, 0.4) * width
        drop_lat, drop_lng = builders.offset(lat, lng, north_m=north, east_m=east)
        fields = {"dropoff_lat": drop_lat, "dropoff_lng": drop_lng, **fields}
        orders[ref] = builders.order_row(
            organization,
            zone=zones["Mitte"],
            window=window,
            external_ref=ref,
            dropoff_address=f"Torstraße {len(orders) + 1}, 10119 Berlin",
            **fields,
        )

    for n in range(MITTE_ORDERS):
        start, end = WINDOWS[n % len(WINDOWS)]
        mitte_order(f"SO-{1001 + n}", (at(start), at(end)))
    mitte_order("SO-FROZEN", (at(10), at(12)), temperature_class="Frozen")
    mitte_order("SO-COLLECT", (at(12), at(14)), service_type="click_collect")
    mitte_order("SO-NOWHERE", (at(8), at(10)), dropoff_lat=None, dropoff_lng=None)
    for name in ("Neukölln", "Prenzlauer Berg"):
        (z_lat, z_lng), _, _ = ZONES[name]
        for n in range(2):
            drop_lat, drop_lng = builders.offset(z_lat, z_lng, north_m=300 * n, east_m=-200)
            builders.order_row(
                organization,
                zone=zones[name],
                window=(at(10), at(14)),
                external_ref=f"{name[:3].upper()}-{n + 1}",
                dropoff_lat=drop_lat,
                dropoff_lng=drop_lng,
                dropoff_address=f"Somewhere in {name}",
            )
    return {"zones": zones, "drivers": drivers, "orders": orders}
