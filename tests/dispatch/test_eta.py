"""`eta` in the partner and ERP order reads (null until assigned) and in `order.assigned`
(contract "Dispatch")."""

from zoneinfo import ZoneInfo

import pytest

from dispatch.services import routes_of_day
from tests import builders
from tests.dispatch import committed_world as world

pytestmark = pytest.mark.django_db
BERLIN = ZoneInfo("Europe/Berlin")


@pytest.fixture
def mitte(organization):
    return world.depot_zone(organization)


def test_the_partner_read_shows_the_eta_once_assigned(organization, mitte):
    client = builders.partner_client(organization)
    start = f"{world.DAY.isoformat()}T09:00:00+01:00"
    created = builders.create_order(client, externalRef="E-1", deliveryWindowStart=start)
    assert created.status_code == 201, created.content
    assert client.get("/api/integrations/partner-a/orders/E-1").json()["eta"] is None
    order = mitte.orders.get(external_ref="E-1")

    routes_of_day.order_assign(order=order, driver=builders.driver(organization), actor="test")

    order.refresh_from_db()
    body = client.get("/api/integrations/partner-a/orders/E-1").json()
    assert body["eta"] == order.eta.astimezone(BERLIN).isoformat()
    assert body["eta"] == start  # the window opens at 09:00: the driver waits for it
    (event,) = builders.events_named("order.assigned", organization)
    assert event.payload["eta"] == body["eta"]


def test_unassigning_clears_the_eta(organization, mitte):
    order = world.window_order(organization, mitte, "E-2")
    routes_of_day.order_assign(order=order, driver=builders.driver(organization), actor="test")

    order = builders.advance(order, "dispatching")

    assert order.eta is None


def test_the_erp_read_shows_the_eta(organization, mitte):
    client = builders.erp_client(organization)
    template = builders.slot_template(mitte, day_of_week=0, start="10:00")
    booked = builders.book(client, template, world.DAY, ref="SO-9")
    assert booked.status_code == 201, booked.content
    assert client.get("/api/integrations/erp/orders/SO-9").json()["eta"] is None
    order = mitte.orders.get(external_ref="SO-9")

    routes_of_day.order_assign(order=order, driver=builders.driver(organization), actor="test")

    body = client.get("/api/integrations/erp/orders/SO-9").json()
    assert body["eta"] == f"{world.DAY.isoformat()}T10:00:00+01:00"
