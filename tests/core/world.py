"""A populated organization, built through the public API: one of each object an id can name.

The hostile-input, cross-tenant and schemathesis tests aim at real objects, not only made-up
ids, so every endpoint gets past its lookups and into its logic.
"""

import re
from dataclasses import dataclass, field
from datetime import date, timedelta

from django.conf import settings
from django.core import mail
from rest_framework.test import APIClient

from dispatch.models import Plan, PlanStatus
from tenants.models import Membership, Organization, User
from tests import builders
from webhooks.models import Delivery
from zones.models import GazetteerImport, GazetteerImportStatus

#: nothing listens there; deliveries stay pending (no worker runs in these tests)
WEBHOOK_URL = "http://127.0.0.1:9/hooks"
PLATFORMS = ("partner_a", "partner_b", "partner_c", "erp", "standard")


def next_weekday(day_of_week: int, *, after: date | None = None) -> date:
    """The first date at least 7 days ahead whose weekday is `day_of_week` (0 = Sunday)."""
    start = (after or date.today()) + timedelta(days=7)
    offset = (day_of_week - (start.isoweekday() % 7)) % 7
    return start + timedelta(days=offset)


@dataclass
class World:
    organization: Organization
    admin: User
    token: str
    keys: dict[str, str] = field(default_factory=dict)
    key_ids: dict[str, str] = field(default_factory=dict)
    ids: dict[str, str] = field(default_factory=dict)
    #: the driver's courier API token (docs/contract.md "Couriers")
    courier_token: str = ""

    def key_client(self, platform: str) -> APIClient:
        client = APIClient()
        client.credentials(HTTP_X_API_KEY=self.keys[platform])
        return client

    def manager(self) -> APIClient:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {self.token}")
        return client

    @property
    def org_id(self) -> str:
        return str(self.organization.id)

    @property
    def manage(self) -> str:
        return f"/api/manage/organizations/{self.org_id}"


def _created(response) -> dict:
    assert response.status_code in (200, 201), response.content
    return response.json()


def build_world(name: str | None = None) -> World:
    """An organization with keys of every platform, a manager, a zone with a blackout date, a
    slot template, a driver, a partner order, an ERP order, webhook deliveries and an admin with
    a pending invite."""
    organization = builders.organization(name)
    n = organization.slug
    admin = User.objects.create_user(email=f"admin-{n}@example.com", password=builders.PASSWORD)
    Membership.objects.create(
        organization=organization, user=admin, org_role="admin", is_active=True
    )
    login = APIClient().post(
        "/api/auth/token",
        {"email": admin.email, "password": builders.PASSWORD},
        format="json",
    )
    world = World(organization=organization, admin=admin, token=_created(login)["token"])
    for platform in PLATFORMS:
        issued = builders.api_key(organization, platform, webhook_url=WEBHOOK_URL)
        world.keys[platform] = issued.value
        world.key_ids[platform] = str(issued.api_key.id)
    manager = world.manager()

    zone = _created(
        manager.post(
            f"{world.manage}/zones",
            {
                "name": f"Mitte {n}",
                "purpose": "both",
                "timezone": "Europe/Berlin",
                "geodata": builders.MITTE_GEODATA,
                "depot": {"address": "Alexanderplatz 1", "lat": 52.5219, "lng": 13.4132},
            },
            format="json",
        )
    )
    world.ids["zone_id"] = zone["id"]
    world.ids["zone_name"] = zone["name"]
    template = _created(
        manager.post(
            f"{world.manage}/slot-templates",
            {
                "zoneId": zone["id"],
                "dayOfWeek": 1,
                "startTime": "08:00",
                "durationMinutes": 240,
                "cutoffMinutes": 120,
                "vehicleCapacity": [{"vehicleType": "van", "count": 2, "maxOrdersPerVehicle": 5}],
            },
            format="json",
        )
    )
    world.ids["template_id"] = template["id"]
    world.ids["slot_date"] = next_weekday(1).isoformat()
    driver = _created(
        manager.post(
            f"{world.manage}/drivers",
            {"name": "Dora Driver", "phone": "+491700000001", "vehicleType": "van"},
            format="json",
        )
    )
    world.ids["driver_id"] = driver["id"]
    world.courier_token = _created(
        manager.post(f"{world.manage}/drivers/{driver['id']}/access-token")
    )["token"]

    partner = _created(
        world.key_client("partner_a").post(
            "/api/integrations/partner-a/orders", partner_order_body(f"PO-{n}"), format="json"
        )
    )
    world.ids["partner_ref"] = partner["externalRef"]
    world.ids["order_id"] = partner["id"]
    world.ids["tracking_token"] = partner["trackingToken"]
    erp = _created(
        world.key_client("erp").post(
            "/api/integrations/erp/orders",
            erp_order_body(f"SO-{n}", world.ids["template_id"], world.ids["slot_date"]),
            format="json",
        )
    )
    world.ids["erp_ref"] = erp["externalRef"]
    world.ids["erp_order_id"] = erp["id"]
    hold = _created(
        world.key_client("erp").post(
            "/api/integrations/erp/slot-holds",
            {
                "deliverySlotTemplateId": world.ids["template_id"],
                "deliverySlotDate": world.ids["slot_date"],
                "dropoffLat": builders.partner_order()["dropoffLat"],
                "dropoffLng": builders.partner_order()["dropoffLng"],
            },
            format="json",
        )
    )
    world.ids["hold_id"] = hold["holdId"]
    blackout = _created(
        manager.post(
            f"{world.manage}/zones/{zone['id']}/blackouts",
            {"date": "2039-12-25", "reason": "Christmas"},  # far from every slot date used
            format="json",
        )
    )
    world.ids["blackout_id"] = blackout["id"]
    delivery = Delivery.objects.filter(organization=organization).first()
    assert delivery is not None, "creating orders leaves webhook deliveries"
    world.ids["delivery_id"] = str(delivery.id)

    place = builders.place(
        organization,
        f"Alexanderplatz 1 {n}",
        postal_code="10178",
        locality="Berlin",
        lat=builders.MITTE[0],
        lng=builders.MITTE[1],
    )
    world.ids["place_id"] = str(place.id)
    gazetteer_import = GazetteerImport.objects.create(
        organization=organization,
        file_name=f"places-{n}.csv",
        status=GazetteerImportStatus.IMPORTED,
        rows=1,
        imported=1,
    )
    world.ids["gazetteer_import_id"] = str(gazetteer_import.id)
    _created(manager.get(f"{world.manage}/dispatch-policy"))  # made with the defaults on read
    plan = Plan.objects.create(
        organization=organization,
        date=world.ids["slot_date"],
        zone_ids=[zone["id"]],
        request_key=f"world-{n}",
        status=PlanStatus.READY,
    )
    world.ids["plan_id"] = str(plan.id)

    mail.outbox = []
    invited = _created(
        provisioning_client().post(
            f"/api/provisioning/organizations/{world.org_id}/admins",
            {"email": f"invited-{n}@example.com", "name": "Ivy Invited"},
            format="json",
        )
    )
    world.ids["user_id"] = invited["admin"]["id"]
    token = re.search(r"/invite/([A-Za-z0-9_\-]+)", mail.outbox[-1].body)
    assert token is not None, mail.outbox[-1].body
    world.ids["invite_token"] = token.group(1)
    return world


def provisioning_client() -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_PROVISIONING_SECRET=settings.PROVISIONING_SECRET)
    return client


def partner_order_body(ref: str, **overrides) -> dict:
    """A partner order (`builders.partner_order`) with the reference `ref`."""
    return builders.partner_order(externalRef=ref, **overrides)


def erp_order_body(ref: str, template_id: str, day: str, **overrides) -> dict:
    """An ERP order: a partner order body that books the slot of `template_id` on `day`."""
    return builders.partner_order(
        externalRef=ref, deliverySlotTemplateId=template_id, deliverySlotDate=day, **overrides
    )


__all__ = [
    "World",
    "build_world",
    "erp_order_body",
    "next_weekday",
    "partner_order_body",
]
