import datetime as dt
from decimal import Decimal

import pytest
import time_machine

from tests import builders

#: Thursday 26 November 2026, 09:00 UTC (10:00 in Berlin): the day's route starts now
NOW = dt.datetime(2026, 11, 26, 9, 0, tzinfo=dt.UTC)
DAY = dt.date(2026, 11, 26)
BARCODE = "4006381333931"


@pytest.fixture(autouse=True)
def _proofs_in_a_temporary_directory(settings, tmp_path):
    """Photos and signatures of each test go to a directory of its own."""
    settings.STORAGES = {
        **settings.STORAGES,
        "proofs": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "proofs"), "base_url": None},
        },
    }


@pytest.fixture
def clock():
    with time_machine.travel(NOW, tick=False) as traveller:
        yield traveller


@pytest.fixture
def zone(organization):
    return builders.zone_row(organization, timezone="Europe/Berlin")


@pytest.fixture
def driver(organization):
    return builders.driver(organization)


@pytest.fixture
def courier(driver):
    return builders.courier_client(driver)


def stop_order(organization, zone, **fields):
    """A partner order in Mitte, in the route's window."""
    return builders.order_row(
        organization,
        zone=zone,
        window=(NOW, NOW + dt.timedelta(hours=2)),
        dropoff_address="Alexanderplatz 1, Berlin",
        dropoff_lat=builders.ALEX[0],
        dropoff_lng=builders.ALEX[1],
        recipient_name="Ada Lovelace",
        recipient_phone="+491701234567",
        **fields,
    )


@pytest.fixture
def route_orders(clock, organization, zone, driver):
    """Three orders on the driver's committed route of DAY: a plain one, one with an expected
    barcode, one cash on delivery."""
    orders = [
        stop_order(organization, zone, external_ref="SO-1"),
        stop_order(organization, zone, external_ref="SO-2", expected_barcode=BARCODE),
        stop_order(organization, zone, external_ref="SO-3", cod_amount=Decimal("24.90")),
    ]
    builders.committed_route(driver, orders, day=DAY, zone=zone, start=NOW)
    return orders
