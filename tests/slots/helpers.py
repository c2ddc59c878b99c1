"""The actors of the slot and ERP tests: slot zones with real polygons, templates made through
the services, keys of each platform, a management client, and ERP order bodies."""

from datetime import date, time

from rest_framework.test import APIClient

from integrations.models import Order, OrderStatus
from integrations.services import orders as order_services
from slots import services as slot_services
from slots.models import SlotTemplate
from tenants.models import Driver, Membership, User
from tests.conftest import key_client, make_api_key
from webhooks.models import Event
from zones import services as zone_services

PASSWORD = "a-Strong-passphrase-42"

# Berlin Mitte: a box of about 4 km x 4 km around (52.52, 13.40).
MITTE = (52.52, 13.40)
MITTE_GEODATA = {
    "type": "Polygon",
    "coordinates": [
        [[13.37, 52.50], [13.43, 52.50], [13.43, 52.54], [13.37, 52.54], [13.37, 52.50]]
    ],
}
# A smaller zone inside Mitte, around Alexanderplatz.
ALEX = (52.5219, 13.4132)
ALEX_GEODATA = {
    "type": "Polygon",
    "coordinates": [
        [[13.405, 52.515], [13.42, 52.515], [13.42, 52.53], [13.405, 52.53], [13.405, 52.515]]
    ],
}
# Outside both (Hamburg).
HAMBURG = (53.55, 9.99)

#: Sunday 6 January 2030 (day 0); Berlin is at +01:00 in winter
SUNDAY = date(2030, 1, 6)
MONDAY = date(2030, 1, 7)


def make_zone(organization, name="Mitte", geodata=None, purpose="slot", **fields):
    fields.setdefault("timezone_name", "Europe/Berlin")
    return zone_services.zone_create(
        organization=organization,
        name=name,
        geodata=geodata or MITTE_GEODATA,
        purpose=purpose,
        **fields,
    )


def make_template(
    zone,
    *,
    day_of_week: int = 0,
    start: str = "08:00",
    duration: int = 240,
    cutoff: int = 120,
    capacity: int = 10,
    vehicle_capacity: list[dict] | None = None,
) -> SlotTemplate:
    hours, minutes = (int(part) for part in start.split(":"))
    return slot_services.slot_template_create(
        organization=zone.organization,
        zone=zone,
        day_of_week=day_of_week,
        start_time=time(hours, minutes),
        duration_minutes=duration,
        cutoff_minutes=cutoff,
        vehicle_capacity=vehicle_capacity
        or [{"vehicleType": "van", "count": 1, "maxOrdersPerVehicle": capacity}],
    )


def erp_client(organization, **kwargs) -> APIClient:
    return key_client(make_api_key(organization, "erp", **kwargs))


def standard_client(organization) -> APIClient:
    return key_client(make_api_key(organization, "standard"))


def erp_body(template, day: date, **overrides) -> dict:
    body = {
        "externalRef": "SO-1001",
        "pickupAddress": "Warehouse, Storkower Str. 1, Berlin",
        "pickupLat": 52.53,
        "pickupLng": 13.45,
        "dropoffAddress": "Alexanderplatz 1, Berlin",
        "dropoffLat": MITTE[0],
        "dropoffLng": MITTE[1],
        "recipientName": "Ada Lovelace",
        "recipientPhone": "+491701234567",
        "packageSize": "small",
        "deliverySlotTemplateId": str(template.id) if template is not None else None,
        "deliverySlotDate": day.isoformat() if day is not None else None,
    }
    body.update(overrides)
    return {key: value for key, value in body.items() if value is not ...}


def book(client, template, day: date, ref: str = "SO-1001", **overrides):
    return client.post(
        "/api/integrations/erp/orders",
        erp_body(template, day, externalRef=ref, **overrides),
        format="json",
    )


def manager_client(organization, email="slots-admin@example.com") -> APIClient:
    """A bearer-token client of an admin of `organization` (management API)."""
    user = User.objects.filter(email=email).first() or User.objects.create_user(
        email=email, password=PASSWORD
    )
    Membership.objects.create(
        organization=organization, user=user, org_role="admin", is_active=True
    )
    client = APIClient()
    token = client.post("/api/auth/token", {"email": email, "password": PASSWORD}, format="json")
    assert token.status_code == 200, token.content
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token.json()['token']}")
    return client


def events_named(name: str, organization) -> list[Event]:
    return list(Event.objects.filter(organization=organization, name=name).order_by("created_at"))


def order_cancel(order: Order) -> Order:
    return order_services.order_transition(order=order, to_status=OrderStatus.CANCELLED)


def order_fail(order: Order) -> Order:
    """pending → assigned → failed, through the status machine."""
    driver = Driver.objects.create(organization_id=order.organization_id, name="Dora Driver")
    order = order_services.order_transition(
        order=order, to_status=OrderStatus.ASSIGNED, driver=driver
    )
    return order_services.order_transition(order=order, to_status=OrderStatus.FAILED)


def order_deliver(order: Order) -> Order:
    driver = Driver.objects.create(organization_id=order.organization_id, name="Dora Driver")
    for status in (OrderStatus.ASSIGNED, OrderStatus.PICKED_UP, OrderStatus.IN_TRANSIT):
        order = order_services.order_transition(order=order, to_status=status, driver=driver)
    return order_services.order_transition(order=order, to_status=OrderStatus.DELIVERED)
