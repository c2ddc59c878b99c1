"""Tracking fixtures: orders of both families carrying private data that must never show."""

import datetime as dt
import itertools

import pytest

from integrations.models import Order
from integrations.services.orders import order_insert, order_transition
from tenants.models import Driver, Organization
from zones.models import Zone

_sequence = itertools.count(1)

SQUARE = {
    "type": "Polygon",
    "coordinates": [[[13.0, 52.0], [13.1, 52.0], [13.1, 52.1], [13.0, 52.1], [13.0, 52.0]]],
}

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


def make_zone(organization: Organization, *, timezone: str = "Europe/Berlin") -> Zone:
    n = next(_sequence)
    return Zone.objects.create(
        organization=organization,
        name=f"Mitte {n}",
        slug=f"mitte-{n}",
        timezone=timezone,
        geodata=SQUARE,
    )


def make_driver(organization: Organization, name: str = "Samira Haddad") -> Driver:
    return Driver.objects.create(
        organization=organization, name=name, phone="+4917000111222", vehicle_type="van"
    )


def make_order(
    organization: Organization,
    *,
    family: str = "partner",
    zone: Zone | None = None,
    window: tuple[dt.datetime | None, dt.datetime | None] = (WINDOW_START, WINDOW_END),
    **fields,
) -> Order:
    n = next(_sequence)
    return order_insert(
        organization_id=organization.id,
        family=family,
        platform="erp" if family == "erp" else "partner_a",
        external_ref=fields.pop("external_ref", f"REF-{family}-{n}"),
        zone=zone if zone is not None else make_zone(organization),
        delivery_window_start=window[0],
        delivery_window_end=window[1],
        **{**PRIVATE, **fields},
    )


def advance(order: Order, *statuses: str, driver: Driver | None = None) -> Order:
    """Moves `order` through `statuses` with the one transition function (contract "Orders")."""
    for status in statuses:
        order = order_transition(
            order=order,
            to_status=status,
            actor="test",
            driver=driver if status == "assigned" else None,
            reason="Recipient not at home" if status in ("failed", "cancelled") else "",
        )
    return order


def order_in_status(organization: Organization, status: str, **kwargs) -> Order:
    order = make_order(organization, **kwargs)
    driver = make_driver(organization) if "assigned" in PATHS[status] else None
    return advance(order, *PATHS[status], driver=driver)


@pytest.fixture
def zone(organization) -> Zone:
    return make_zone(organization)


@pytest.fixture
def driver(organization) -> Driver:
    return make_driver(organization)
