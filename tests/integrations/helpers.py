"""The actors of the partner tests: an organization's zones (real polygons), keys and bodies."""

from rest_framework.test import APIClient

from tenants.models import Membership, User
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
# Far from every zone (Hamburg).
NOWHERE = (53.55, 9.99)

# Sunday 6 January 2030, a delivery day (Berlin is at +01:00 in winter).
DELIVERY_DAY = "2030-01-06"


def make_zone(organization, name="Mitte", geodata=None, **fields):
    fields.setdefault("timezone_name", "Europe/Berlin")
    return zone_services.zone_create(
        organization=organization, name=name, geodata=geodata or MITTE_GEODATA, **fields
    )


def partner_client(organization, platform="partner_a") -> APIClient:
    return key_client(make_api_key(organization, platform))


def order_body(**overrides) -> dict:
    body = {
        "externalRef": "PO-1001",
        "pickupAddress": "Warehouse, Storkower Str. 1, Berlin",
        "pickupLat": 52.53,
        "pickupLng": 13.45,
        "dropoffAddress": "Alexanderplatz 1, Berlin",
        "dropoffLat": MITTE[0],
        "dropoffLng": MITTE[1],
        "recipientName": "Ada Lovelace",
        "recipientPhone": "+491701234567",
        "packageSize": "small",
    }
    body.update(overrides)
    return {key: value for key, value in body.items() if value is not ...}


def create_order(client, path="/api/integrations/partner-a/orders", **overrides):
    return client.post(path, order_body(**overrides), format="json")


def events_named(name: str, organization) -> list[Event]:
    return list(Event.objects.filter(organization=organization, name=name).order_by("created_at"))


def manager_client(organization, email="ops@example.com") -> tuple[APIClient, User]:
    """A bearer-token client of an admin of `organization` (management API)."""
    user = User.objects.create_user(email=email, password=PASSWORD)
    Membership.objects.create(
        organization=organization, user=user, org_role="admin", is_active=True
    )
    client = APIClient()
    token = client.post("/api/auth/token", {"email": email, "password": PASSWORD}, format="json")
    assert token.status_code == 200, token.content
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token.json()['token']}")
    return client, user
