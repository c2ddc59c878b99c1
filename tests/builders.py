"""The one set of test builders: organizations, keys, polygons, zones, slot templates, drivers,
orders (bodies and rows), admins and their clients.

Plain functions with keyword arguments and defaults. Test data is made through the services
(`*/services.py`) where one exists, and every such call for building data lives here, so a change
of a service's signature is mended in this file alone. Callers import the module
(`from tests import builders`) and write `builders.zone(organization)`: the names stay clear of
the fixtures named `organization`, `zone` and `driver`.
"""

import itertools
from datetime import UTC, date, datetime, time, timedelta

from django.test import Client
from geopy.distance import geodesic
from rest_framework.test import APIClient

from couriers.services import tokens as courier_token_services
from dispatch.models import Plan, PlanRoute, PlanStatus, PlanStop
from integrations.models import Order, OrderStatus
from integrations.services import orders as order_services
from slots.models import SlotTemplate
from slots.services import templates as template_services
from tenants import services as tenant_services
from tenants.models import Driver, Membership, Organization, User
from webhooks import events as webhook_events
from webhooks.models import Event
from zones import services as zone_services
from zones.models import Place, Zone

#: numbers for default names: organizations, and rows (zones, order references)
_organization_numbers = itertools.count(1)
_row_numbers = itertools.count(1)

PASSWORD = "a-Strong-passphrase-42"

# ----- places and polygons -----

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
# Berlin, Alexanderplatz: the centre of the polygons measured in metres.
BERLIN = ALEX
# Far from every zone here.
HAMBURG = (53.55, 9.99)
#: body fields that drop an order off in Hamburg, outside every zone
DROPOFF_OUTSIDE = {"dropoffLat": HAMBURG[0], "dropoffLng": HAMBURG[1]}

#: Sunday 6 January 2030 (day 0 of slot templates), a delivery day; Berlin is at +01:00 in winter
SUNDAY = date(2030, 1, 6)
MONDAY = date(2030, 1, 7)
DELIVERY_DAY = SUNDAY.isoformat()
#: Tuesday 1 January 2030, 09:00 UTC: the slots of the Sunday after are open for booking
NOW = datetime(2030, 1, 1, 9, 0, tzinfo=UTC)


def square_polygon(west: float = 13.0, south: float = 52.0, side: float = 0.1) -> dict:
    """A GeoJSON square of `side` degrees whose south-west corner is (south, west)."""
    east, north = west + side, south + side
    return {
        "type": "Polygon",
        "coordinates": [
            [[west, south], [east, south], [east, north], [west, north], [west, south]]
        ],
    }


#: 13.0-13.1 E, 52.0-52.1 N: the zone of tests whose orders need a zone but no real place
SQUARE = square_polygon()


def offset(lat: float, lng: float, *, north_m: float = 0.0, east_m: float = 0.0):
    """The point `north_m` then `east_m` metres (geodesic, WGS 84) away from (lat, lng)."""
    point = geodesic(meters=abs(north_m)).destination((lat, lng), 0 if north_m >= 0 else 180)
    point = geodesic(meters=abs(east_m)).destination(
        (point.latitude, point.longitude), 90 if east_m >= 0 else 270
    )
    return point.latitude, point.longitude


def box(lat: float, lng: float, *, width_m: float, height_m: float) -> dict:
    """A GeoJSON rectangle centred on (lat, lng): edges along meridians and parallels."""
    north, _ = offset(lat, lng, north_m=height_m / 2)
    south, _ = offset(lat, lng, north_m=-height_m / 2)
    _, east = offset(lat, lng, east_m=width_m / 2)
    _, west = offset(lat, lng, east_m=-width_m / 2)
    return {
        "type": "Polygon",
        "coordinates": [
            [[west, south], [east, south], [east, north], [west, north], [west, south]]
        ],
    }


def east_edge(geodata: dict) -> float:
    return max(lng for lng, _ in geodata["coordinates"][0])


def north_edge(geodata: dict) -> float:
    return max(lat for _, lat in geodata["coordinates"][0])


def literal(point) -> str:
    """A point as the `lat,lng` text of query strings."""
    return f"{point[0]:.8f},{point[1]:.8f}"


# ----- organizations, keys, admins and their clients -----


def organization(name: str | None = None) -> Organization:
    return tenant_services.organization_create(name=name or f"Org {next(_organization_numbers)}")


def api_key(
    organization: Organization, platform: str = "partner_a", **fields
) -> tenant_services.IssuedApiKey:
    return tenant_services.api_key_create(
        organization_id=organization.id,
        name=fields.pop("name", f"{platform} key"),
        platform=platform,
        **fields,
    )


def key_client(issued: tenant_services.IssuedApiKey) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=issued.value)
    return client


def platform_client(organization: Organization, platform: str = "partner_a", **fields) -> APIClient:
    """A client with a new key of `platform` (fields as for `api_key`)."""
    return key_client(api_key(organization, platform, **fields))


def partner_client(organization: Organization, platform: str = "partner_a") -> APIClient:
    return platform_client(organization, platform)


def erp_client(organization: Organization, **fields) -> APIClient:
    return platform_client(organization, "erp", **fields)


def standard_client(organization: Organization) -> APIClient:
    return platform_client(organization, "standard")


def admin(
    organization: Organization | None,
    email: str = "admin@example.com",
    name: str = "",
    **membership,
) -> User:
    """A user (PASSWORD) with a membership of `organization`: an active admin unless
    `membership` says otherwise; no membership for None."""
    user = User.objects.filter(email=email).first() or User.objects.create_user(
        email=email, password=PASSWORD, name=name
    )
    if organization is not None:
        Membership.objects.create(
            organization=organization,
            user=user,
            **{"org_role": "admin", "is_active": True, **membership},
        )
    return user


def bearer_login(email: str = "admin@example.com") -> tuple[APIClient, dict]:
    """A client carrying the bearer token of `email` (POST /api/auth/token), and that answer."""
    client = APIClient()
    response = client.post("/api/auth/token", {"email": email, "password": PASSWORD}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {body['token']}")
    return client, body


def manager_client(
    organization: Organization, email: str = "ops@example.com", name: str = ""
) -> APIClient:
    """A bearer-token client of a new admin of `organization` (management API)."""
    admin(organization, email, name)
    return bearer_login(email)[0]


def admin_site_client(
    organization: Organization, email: str = "admin@example.com", name: str = ""
) -> Client:
    """A Django admin session of a new admin of `organization`."""
    admin(organization, email, name)
    return admin_site_login(email)


def admin_site_login(email: str = "admin@example.com") -> Client:
    """A Django admin session of `email` (logged in with PASSWORD)."""
    client = Client()
    assert client.login(username=email, password=PASSWORD)
    return client


# ----- zones, slot templates, drivers -----


def zone(
    organization: Organization,
    name: str = "Mitte",
    geodata: dict | None = None,
    *,
    timezone_name: str | None = "Europe/Berlin",
    **fields,
) -> Zone:
    """A zone made by the service (it emits erp.polygon.updated); Mitte in Berlin time unless
    told; `timezone_name=None` leaves the time zone to the service (the organization's)."""
    return zone_services.zone_create(
        organization_id=organization.id,
        name=name,
        geodata=geodata or MITTE_GEODATA,
        timezone_name=timezone_name,
        **fields,
    )


def slot_zone(organization: Organization, name: str = "Mitte", **fields) -> Zone:
    """A zone for slot booking only (purpose `slot`) unless told otherwise."""
    fields.setdefault("purpose", "slot")
    return zone(organization, name, **fields)


def zone_row(
    organization: Organization, name: str | None = None, *, geodata: dict = SQUARE, **fields
) -> Zone:
    """A zone row written directly, without the service's erp.polygon.updated event: for tests
    that count events and deliveries."""
    name = name or f"Mitte {next(_row_numbers)}"
    return Zone.objects.create(
        organization=organization,
        name=name,
        slug=name.lower().replace(" ", "-"),
        geodata=geodata,
        **fields,
    )


def place(organization: Organization, address: str, **fields) -> Place:
    """A gazetteer address of `organization` (contract "Geocoding and resolve-zone"); `fields`:
    lat and lng (52.5, 13.4 unless told), postal_code and locality (empty unless told)."""
    fields = {"postal_code": "", "locality": "", "lat": 52.5, "lng": 13.4, **fields}
    return zone_services.place_save(
        place=Place(organization=organization, address=address, **fields)
    )


def alexanderplatz(organization: Organization, address: str = "Alexanderplatz 1") -> Place:
    """The gazetteer's Alexanderplatz (10178 Berlin) at BERLIN, under `address`."""
    return place(
        organization,
        address,
        postal_code="10178",
        locality="Berlin",
        lat=BERLIN[0],
        lng=BERLIN[1],
    )


def slot_template(
    zone: Zone,
    *,
    day_of_week: int = 0,
    start: str | time = "08:00",
    duration: int | None = 240,
    cutoff: int | None = 120,
    capacity: int | None = 10,
    vehicle_capacity: list[dict] | None = None,
    **fields,
) -> SlotTemplate:
    """A template of `zone`: one van of `capacity` places unless `vehicle_capacity` says more;
    a None leaves that value to the organization's slot policy."""
    if vehicle_capacity is None and capacity is not None:
        vehicle_capacity = [{"vehicleType": "van", "count": 1, "maxOrdersPerVehicle": capacity}]
    if isinstance(start, str):
        hours, minutes = (int(part) for part in start.split(":"))
        start = time(hours, minutes)
    fields = {"duration_minutes": duration, "cutoff_minutes": cutoff, **fields}
    return template_services.slot_template_create(
        organization_id=zone.organization_id,
        zone=zone,
        day_of_week=day_of_week,
        start_time=start,
        vehicle_capacity=vehicle_capacity,
        **fields,
    )


def driver(organization: Organization, name: str = "Samira Haddad", **fields) -> Driver:
    fields = {"phone": "+4917000111222", "vehicle_type": "van", **fields}
    return Driver.objects.create(organization=organization, name=name, **fields)


def courier_token(driver: Driver) -> str:
    """A new courier access token of `driver` (contract "Couriers")."""
    return courier_token_services.driver_token_issue(driver=driver).value


def courier_client(driver: Driver) -> APIClient:
    """A courier API client signed in with a new token of `driver`."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {courier_token(driver)}")
    return client


def committed_route(
    driver: Driver, orders: list[Order], *, day: date, zone: Zone, start: datetime
) -> PlanRoute:
    """`orders` assigned to `driver` (through the status machine) as the stops, in order, of
    the driver's route of `day` in a committed plan; stop n arrives n x 15 minutes after
    `start`, each in a window of the 2 hours from `start`. Rows written directly: dispatch's
    planning services are not what these tests are about."""
    plan = Plan.objects.create(
        organization_id=driver.organization_id,
        date=day,
        zone_ids=[zone.id],
        request_key=f"test-{next(_row_numbers)}",
        status=PlanStatus.COMMITTED,
        origin=start,
        committed_at=start,
    )
    route = PlanRoute.objects.create(
        plan=plan,
        driver=driver,
        date=day,
        zone=zone,
        capacity=20,
        shift_start=start,
        shift_end=start + timedelta(hours=10),
        depot_lat=MITTE[0],
        depot_lng=MITTE[1],
        start_at=start,
    )
    for sequence, order in enumerate(orders, start=1):
        order_services.order_transition(order=order, to_status="assigned", driver=driver)
        PlanStop.objects.create(
            plan=plan,
            route=route,
            order=order,
            sequence=sequence,
            eta=start + timedelta(minutes=15 * sequence),
            window_start=start,
            window_end=start + timedelta(hours=2),
            lat=order.dropoff_lat,
            lng=order.dropoff_lng,
            service_seconds=240,
        )
    return route


# ----- orders: request bodies, requests, rows, transitions -----


#: the fields of the answer to creating a partner order (contract "Orders"); the management
#: API's order items show them too
PARTNER_ORDER_FIELDS = {
    "id",
    "status",
    "pickupAddress",
    "pickupLat",
    "pickupLng",
    "dropoffAddress",
    "dropoffLat",
    "dropoffLng",
    "recipientName",
    "recipientPhone",
    "packageSize",
    "externalRef",
    "notes",
    "deliveryWindowStart",
    "deliveryWindowEnd",
    "trackingToken",
    "createdAt",
    "updatedAt",
}


def partner_order(**overrides) -> dict:
    """A partner order body (contract "Orders"), dropped off in Mitte; a value `...` drops the
    field."""
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


def erp_order(template: SlotTemplate | None, day: date | None, **overrides) -> dict:
    """An ERP order body: a partner order that books the slot of `template` on `day`."""
    return partner_order(
        **{
            "externalRef": "SO-1001",
            "deliverySlotTemplateId": str(template.id) if template is not None else None,
            "deliverySlotDate": day.isoformat() if day is not None else None,
            **overrides,
        }
    )


def create_order(client, path: str = "/api/integrations/partner-a/orders", **overrides):
    return client.post(path, partner_order(**overrides), format="json")


def book(
    client, template: SlotTemplate | None, day: date | None, ref: str = "SO-1001", **overrides
):
    return client.post(
        "/api/integrations/erp/orders",
        erp_order(template, day, externalRef=ref, **overrides),
        format="json",
    )


def order_row(
    organization: Organization,
    *,
    family: str = "partner",
    zone: Zone | None = None,
    window: tuple[datetime | None, datetime | None] = (None, None),
    **fields,
) -> Order:
    """An order inserted by the service, without a request (and without a zone unless told)."""
    n = next(_row_numbers)
    return order_services.order_insert(
        organization_id=organization.id,
        family=family,
        platform="erp" if family == "erp" else "partner_a",
        external_ref=fields.pop("external_ref", f"REF-{family}-{n}"),
        zone=zone,
        delivery_window_start=window[0],
        delivery_window_end=window[1],
        **fields,
    )


def advance(order: Order, *statuses: str, driver: Driver | None = None) -> Order:
    """Moves `order` through `statuses` with the one transition function (contract "Orders")."""
    for status in statuses:
        order = order_services.order_transition(
            order=order,
            to_status=status,
            actor="test",
            driver=driver if status == "assigned" else None,
            reason="Recipient not at home" if status in ("failed", "cancelled") else "",
            failure_reason="recipient_absent" if status == "failed" else "",
        )
    return order


def _dora(order: Order) -> Driver:
    return Driver.objects.create(organization_id=order.organization_id, name="Dora Driver")


def order_cancel(order: Order) -> Order:
    return order_services.order_transition(order=order, to_status=OrderStatus.CANCELLED)


def order_fail(order: Order) -> Order:
    """pending → assigned → failed, through the status machine."""
    order = order_services.order_transition(
        order=order, to_status=OrderStatus.ASSIGNED, driver=_dora(order)
    )
    return order_services.order_transition(
        order=order, to_status=OrderStatus.FAILED, failure_reason="recipient_absent"
    )


def order_deliver(order: Order) -> Order:
    driver = _dora(order)
    for status in (OrderStatus.ASSIGNED, OrderStatus.PICKED_UP, OrderStatus.IN_TRANSIT):
        order = order_services.order_transition(order=order, to_status=status, driver=driver)
    return order_services.order_transition(order=order, to_status=OrderStatus.DELIVERED)


# ----- webhook events -----

#: the order id of events emitted for an order that need not exist
ORDER_ID = "5f0c6a52-1d8e-4a8e-9a59-6f1f0f7c1a11"


def order_event(organization: Organization, ref: str = "SO-1", **overrides) -> None:
    """Emits a partner order event (webhooks outbox) for the order `ref`, which need not exist:
    `order.created`, pending, of ORDER_ID on partner_a unless `overrides` (order_id, platform,
    event, status, extra) say otherwise."""
    fields = {
        "order_id": ORDER_ID,
        "platform": "partner_a",
        "event": "order.created",
        "status": "pending",
        **overrides,
    }
    webhook_events.order_event_emit(organization_id=organization.id, external_ref=ref, **fields)


# ----- reading back -----


def events_named(name: str, organization: Organization) -> list[Event]:
    return list(Event.objects.filter(organization=organization, name=name).order_by("created_at"))
