"""`dispatch.demo`: the demo's delivery day follows the partner windows and the zones'
blackouts; depots, drivers and orders are created once (the command's own test covers the rest,
tests/tenants/test_demo_command.py)."""

import datetime as dt

import pytest

from dispatch.demo import demo_delivery_day, demo_dispatch_seed
from integrations.models import Order
from tenants.models import ApiKey, Driver
from tenants.services import api_key_create
from zones import services as zone_services
from zones.demo import demo_zones_create

pytestmark = pytest.mark.django_db

BERLIN = dt.timezone(dt.timedelta(hours=1))  # November: CET


def _at(day: int, hour: int) -> dt.datetime:
    return dt.datetime(2026, 11, day, hour, tzinfo=BERLIN)


def test_today_while_a_window_has_yet_to_start(organization):
    zones = demo_zones_create(organization=organization)

    day, windows = demo_delivery_day(zones=zones, now=_at(26, 9))  # Thursday 09:00

    assert day == dt.date(2026, 11, 26)
    assert [window.start.hour for window in windows] == [12, 16]


def test_after_the_last_window_starts_the_next_day_with_windows_and_no_blackout(organization):
    zones = demo_zones_create(organization=organization)
    assert demo_delivery_day(zones=zones, now=_at(26, 17))[0] == dt.date(2026, 11, 29)  # Sunday

    kreuzberg = next(zone for zone in zones if zone.slug == "kreuzberg")
    zone_services.zone_blackout_create(zone=kreuzberg, day=dt.date(2026, 11, 29), reason="Demo")

    day, windows = demo_delivery_day(zones=zones, now=_at(26, 17))
    assert day == dt.date(2026, 11, 30)
    assert [window.start.hour for window in windows] == [8, 12, 16]


def test_seeding_twice_creates_depots_drivers_and_orders_once(organization):
    zones = demo_zones_create(organization=organization)
    key = api_key_create(organization_id=organization.id, name="Demo", platform="partner_a").api_key
    key = ApiKey.objects.get(pk=key.pk)

    first = demo_dispatch_seed(organization=organization, api_key=key, zones=zones)
    second = demo_dispatch_seed(organization=organization, api_key=key, zones=zones)

    assert [zone.depot_address for zone in second.zones] == [
        "Alexanderplatz 1, 10178 Berlin",
        "Oranienstraße 25, 10999 Berlin",
    ]
    assert [driver.id for driver in second.drivers] == [driver.id for driver in first.drivers]
    assert Driver.objects.filter(organization=organization).count() == 3
    assert [order.id for order in second.orders] == [order.id for order in first.orders]
    assert Order.objects.filter(organization=organization).count() == 12
    assert {order.zone.name for order in second.orders} == {"Berlin Mitte", "Kreuzberg"}
    chilled = [order for order in second.orders if "Temperature: Chilled" in order.notes]
    assert len(chilled) == 2
