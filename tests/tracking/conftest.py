"""Tracking fixtures: orders of both families carrying private data that must never show."""

import datetime as dt

import pytest

from integrations.models import Order
from tenants.models import Driver, Organization
from tests import builders
from zones.models import Zone

#: private values put on every test order; none may appear in a tracking answer
PRIVATE = {
    "recipient_name": "Rosalind Recipientova",
    "recipient_phone": "+4915199887766",
    "pickup_address": "Depot Lane 7, 10115 Berlin",
    "pickup_lat": 52.0123456,
    "pickup_lng": 13.0123456,
    "dropoff_address": "Hidden Garden Street 42, 10117 Berlin",
    "dropoff_lat": 52.0654321,
    "dropoff_lng": 13.0654321,
    "notes": "Leave with the neighbour, door code 4711",
    "expected_barcode": "BARCODE-SECRET-998877",
}

#: 09:00-11:00 UTC on Tuesday 4 March 2031, 10:00-12:00 in Berlin (CET)
WINDOW_START = dt.datetime(2031, 3, 4, 9, 0, tzinfo=dt.UTC)
WINDOW_END = dt.datetime(2031, 3, 4, 11, 0, tzinfo=dt.UTC)

#: a path through the status machine (contract "Orders") to each status, from `pending`
PATHS: dict[str, tuple[str, ...]] = {
    "pending": (),
    "dispatching": ("dispatching",),
    "assigned": ("dispatching", "assigned"),
    "picked_up": ("dispatching", "assigned", "picked_up"),
    "in_transit": ("dispatching", "assigned", "picked_up", "in_transit"),
    "delivered": ("dispatching", "assigned", "picked_up", "in_transit", "delivered"),
    "failed": ("dispatching", "assigned", "picked_up", "failed"),
    "cancelled": ("cancelled",),
}


def make_order(
    organization: Organization,
    *,
    zone: Zone | None = None,
    window: tuple[dt.datetime | None, dt.datetime | None] = (WINDOW_START, WINDOW_END),
    **fields,
) -> Order:
    """An order carrying PRIVATE, in a Berlin zone unless told, delivered in WINDOW unless told."""
    zone = zone if zone is not None else builders.zone_row(organization, timezone="Europe/Berlin")
    return builders.order_row(organization, zone=zone, window=window, **{**PRIVATE, **fields})


def order_in_status(organization: Organization, status: str, **kwargs) -> Order:
    order = make_order(organization, **kwargs)
    driver = builders.driver(organization) if "assigned" in PATHS[status] else None
    return builders.advance(order, *PATHS[status], driver=driver)


@pytest.fixture
def zone(organization) -> Zone:
    return builders.zone_row(organization, timezone="Europe/Berlin")


@pytest.fixture
def driver(organization) -> Driver:
    return builders.driver(organization)
