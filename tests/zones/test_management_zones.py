"""Management API zones CRUD (contract "Slots and windows", "Management API"): validation,
isolation, events, index."""

import datetime as dt

import pytest
import time_machine

from slots.services import templates as template_services
from tests import builders
from tests.conftest import assert_error
from webhooks.models import Event
from zones.models import Zone

pytestmark = pytest.mark.django_db

SQUARE = {
    "type": "Polygon",
    "coordinates": [
        [[13.40, 52.51], [13.42, 52.51], [13.42, 52.53], [13.40, 52.53], [13.40, 52.51]]
    ],
}


@pytest.fixture
def admin_client(organization):
    return builders.manager_client(organization, "zones-admin@example.com")


def zones_url(organization, zone_id=None) -> str:
    base = f"/api/manage/organizations/{organization.id}/zones"
    return f"{base}/{zone_id}" if zone_id else base


def polygon_events(organization):
    return Event.objects.filter(organization=organization, name="erp.polygon.updated")


def test_create_answers_201_with_the_zone(admin_client, organization):
    sent = {
        "name": "Mitte Nord",
        "purpose": "slot",
        "enabled": True,
        "timezone": "Europe/Berlin",
        "geodata": SQUARE,
        "metadata": {"hub": "Alex"},
        "windowCapacity": 35,
    }
    response = admin_client.post(zones_url(organization), sent, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    zone = Zone.objects.get(pk=body["id"])
    assert zone.organization_id == organization.id
    assert {key: body[key] for key in body if key not in ("id", "createdAt", "updatedAt")} == {
        **sent,
        "slug": "mitte-nord",
        "depot": None,
    }


def test_create_defaults(admin_client, organization):
    body = admin_client.post(
        zones_url(organization), {"name": "Z", "geodata": SQUARE}, format="json"
    ).json()
    assert (body["purpose"], body["enabled"], body["timezone"], body["metadata"]) == (
        "both",
        True,
        "UTC",
        {},
    )
    assert body["windowCapacity"] == 20


def test_an_open_ring_is_closed(admin_client, organization):
    open_ring = {"type": "Polygon", "coordinates": [SQUARE["coordinates"][0][:-1]]}
    body = admin_client.post(
        zones_url(organization), {"name": "Open", "geodata": open_ring}, format="json"
    ).json()
    assert body["geodata"] == SQUARE


def test_self_intersecting_polygon_is_400(admin_client, organization):
    bow_tie = {
        "type": "Polygon",
        "coordinates": [
            [[13.40, 52.51], [13.42, 52.53], [13.42, 52.51], [13.40, 52.53], [13.40, 52.51]]
        ],
    }
    body = assert_error(
        admin_client.post(
            zones_url(organization), {"name": "Bow", "geodata": bow_tie}, format="json"
        ),
        400,
    )
    assert body["message"] == [
        "geodata polygon must not intersect itself (Self-intersection[13.41 52.52])"
    ]
    assert not Zone.objects.exists()


@pytest.mark.parametrize(
    ("geodata", "message"),
    [
        (None, "geodata must be a GeoJSON Polygon object"),
        ("POLYGON((0 0))", "geodata must be a GeoJSON Polygon object"),
        ({"type": "Point", "coordinates": [13.4, 52.5]}, "geodata.type must be Polygon"),
        (
            {"type": "Polygon", "coordinates": []},
            "geodata.coordinates must be an array holding one linear ring",
        ),
        (
            {"type": "Polygon", "coordinates": [[[13.4, 52.5], [13.5, 52.5], [13.4, 52.5]]]},
            "geodata ring must have at least 4 positions (first = last)",
        ),
        (
            {
                "type": "Polygon",
                "coordinates": [[[13.4, 52.5], [13.5, 52.5], [13.6, 52.5], [13.4, 52.5]]],
            },
            "geodata polygon must have a non-zero area (collinear positions)",
        ),
        (
            {"type": "Polygon", "coordinates": [[[13.4, 52.5], [13.5, 95], [13.6, 52.5]]]},
            "geodata.coordinates[0][1] latitude must be between -90 and 90",
        ),
        (
            {"type": "Polygon", "coordinates": [[[13.4, 52.5], [181, 52.6], [13.6, 52.5]]]},
            "geodata.coordinates[0][1] longitude must be between -180 and 180",
        ),
        (
            {"type": "Polygon", "coordinates": [[[13.4, 52.5], ["13.5", 52.6], [13.6, 52.5]]]},
            "geodata.coordinates[0][1] must be a [lng, lat] pair of numbers",
        ),
        (
            {
                "type": "Polygon",
                "coordinates": [SQUARE["coordinates"][0], SQUARE["coordinates"][0]],
            },
            "geodata.coordinates must hold exactly one ring (no holes)",
        ),
    ],
)
def test_invalid_geodata_is_400_naming_the_field(admin_client, organization, geodata, message):
    response = admin_client.post(
        zones_url(organization), {"name": "Bad", "geodata": geodata}, format="json"
    )
    body = assert_error(response, 400)
    assert len(body["message"]) == 1
    assert body["message"][0].startswith("geodata")
    assert body["message"][0] == message


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"timezone": "Mars/Olympus"}, "timezone Mars/Olympus is not an IANA time zone name"),
        ({"purpose": "everything"}, "purpose must be one of: dispatch, slot, both"),
        ({"enabled": "yes"}, "enabled: must be a boolean"),
        ({"windowCapacity": "20"}, "windowCapacity: must be an integer"),
        (
            {"windowCapacity": -1},
            "windowCapacity: Ensure this value is greater than or equal to 0.",
        ),
        ({"metadata": [1]}, "metadata must be an object"),
        ({"name": ""}, "name must not be empty"),
        (
            {"slug": "Not A Slug"},
            "slug must be lower-case letters and digits separated by single hyphens, "
            "at most 63 characters",
        ),
    ],
)
def test_invalid_fields_are_400(admin_client, organization, fields, message):
    response = admin_client.post(
        zones_url(organization), {"name": "Z", "geodata": SQUARE, **fields}, format="json"
    )
    assert_error(response, 400, [message])


def test_name_and_geodata_are_required(admin_client, organization):
    response = admin_client.post(zones_url(organization), {}, format="json")
    assert_error(response, 400, ["name is required", "geodata is required"])


def test_names_are_unique_per_organization_and_slugs_get_a_suffix(admin_client, organization):
    builders.zone(organization, "Mitte", SQUARE)
    builders.zone(builders.organization(), "Mitte", SQUARE)  # another tenant's name does not count
    assert_error(
        admin_client.post(
            zones_url(organization), {"name": "Mitte", "geodata": SQUARE}, format="json"
        ),
        400,
        ["name Mitte is already taken"],
    )
    body = admin_client.post(
        zones_url(organization), {"name": "Mitte!", "geodata": SQUARE}, format="json"
    ).json()
    assert body["slug"] == "mitte-2"
    assert_error(
        admin_client.post(
            zones_url(organization),
            {"name": "Other", "slug": "mitte", "geodata": SQUARE},
            format="json",
        ),
        400,
        ["slug mitte is already taken"],
    )


def test_list_and_get(admin_client, organization):
    b = builders.zone(organization, "B zone", SQUARE)
    a = builders.zone(organization, "A zone", SQUARE)
    builders.zone(builders.organization(), "Foreign", SQUARE)
    listed = admin_client.get(zones_url(organization)).json()
    assert [zone["id"] for zone in listed] == [str(a.id), str(b.id)]
    detail = admin_client.get(zones_url(organization, b.id)).json()
    assert (detail["name"], detail["geodata"]) == ("B zone", SQUARE)


def test_patch_changes_only_given_fields(admin_client, organization):
    zone = builders.zone(organization, "Mitte", SQUARE, metadata={"a": 1})
    moved = builders.box(*builders.BERLIN, width_m=500, height_m=500)
    response = admin_client.patch(
        zones_url(organization, zone.id), {"enabled": False, "geodata": moved}, format="json"
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["enabled"], body["name"], body["metadata"]) == (False, "Mitte", {"a": 1})
    assert body["geodata"] == moved
    zone.refresh_from_db()
    assert zone.enabled is False


def test_patch_validates_like_create(admin_client, organization):
    zone = builders.zone(organization, "Mitte", SQUARE)
    builders.zone(organization, "Kreuzberg", SQUARE)
    bad = {"type": "Polygon", "coordinates": [[[0, 0], [1, 1], [1, 0], [0, 1], [0, 0]]]}
    assert_error(
        admin_client.patch(zones_url(organization, zone.id), {"geodata": bad}, format="json"), 400
    )
    assert_error(
        admin_client.patch(zones_url(organization, zone.id), {"name": "Kreuzberg"}, format="json"),
        400,
        ["name Kreuzberg is already taken"],
    )


def test_delete_answers_204_then_404(admin_client, organization):
    zone = builders.zone(organization, "Mitte", SQUARE)
    response = admin_client.delete(zones_url(organization, zone.id))
    assert response.status_code == 204
    assert response.content == b""
    assert_error(admin_client.get(zones_url(organization, zone.id)), 404, "Zone not found")


def test_a_zone_with_orders_is_not_deleted(admin_client, organization):
    zone = builders.slot_zone(organization)
    template = builders.slot_template(zone)
    with time_machine.travel(dt.datetime(2030, 1, 1, 9, tzinfo=dt.UTC), tick=False):
        booked = builders.book(builders.erp_client(organization), template, builders.SUNDAY)
    assert booked.status_code == 201, booked.content

    response = admin_client.delete(zones_url(organization, zone.id))

    assert_error(response, 409, "Zone Mitte is in use and cannot be deleted; disable it instead")
    assert Zone.objects.filter(pk=zone.pk).exists()
    assert not polygon_events(organization).filter(payload__deleted=True).exists()


def test_a_zone_with_slot_templates_cannot_become_a_dispatch_zone(admin_client, organization):
    zone = builders.slot_zone(organization)
    template = builders.slot_template(zone)

    response = admin_client.patch(
        zones_url(organization, zone.id), {"purpose": "dispatch"}, format="json"
    )

    assert_error(
        response,
        409,
        "Zone Mitte has slot templates; delete them before making it a dispatch zone",
    )
    assert Zone.objects.get(pk=zone.pk).purpose == "slot"
    template_services.slot_template_delete(template=template)
    response = admin_client.patch(
        zones_url(organization, zone.id), {"purpose": "dispatch"}, format="json"
    )
    assert response.status_code == 200, response.content


def test_every_change_emits_polygon_updated(admin_client, organization):
    created = admin_client.post(
        zones_url(organization), {"name": "Mitte", "geodata": SQUARE}, format="json"
    ).json()
    event = polygon_events(organization).get()
    assert event.event_id.startswith(f"erp.polygon.updated:{created['id']}:")
    assert event.payload["polygon_id"] == created["id"]
    assert event.payload["geodata"] == SQUARE
    admin_client.patch(zones_url(organization, created["id"]), {"enabled": False}, format="json")
    # Same hour, not yet sent: the update replaces the payload of the pending event (contract
    # "Webhooks").
    assert polygon_events(organization).get().payload["enabled"] is False
    admin_client.delete(zones_url(organization, created["id"]))
    assert polygon_events(organization).get().payload["deleted"] is True


def test_a_failed_validation_emits_nothing(admin_client, organization):
    admin_client.post(zones_url(organization), {"name": "Z", "geodata": {}}, format="json")
    assert not polygon_events(organization).exists()


def test_changes_reach_resolve_zone_at_once(admin_client, organization):
    resolver = builders.key_client(builders.api_key(organization, "standard"))
    zone = builders.zone(
        organization, "Mitte", builders.box(*builders.BERLIN, width_m=1000, height_m=1000)
    )
    elsewhere = builders.offset(*builders.BERLIN, east_m=20_000)

    def resolve(point):
        return resolver.post(
            "/api/promises/resolve-zone", {"address": builders.literal(point)}, format="json"
        )

    assert resolve(builders.BERLIN).json()["confidence"] == "high"
    assert resolve(elsewhere).status_code == 404
    admin_client.patch(
        zones_url(organization, zone.id),
        {"geodata": builders.box(*elsewhere, width_m=1000, height_m=1000)},
        format="json",
    )
    assert resolve(builders.BERLIN).status_code == 404
    assert resolve(elsewhere).json()["zone"]["id"] == str(zone.id)
    admin_client.delete(zones_url(organization, zone.id))
    assert resolve(elsewhere).status_code == 404


def test_admin_of_another_organization_gets_404(organization, other_organization):
    builders.admin(other_organization, "other-admin@example.com")
    other_client = builders.bearer_login("other-admin@example.com")[0]
    zone = builders.zone(organization, "Mitte", SQUARE)
    for response in (
        other_client.get(zones_url(organization)),
        other_client.post(zones_url(organization), {"name": "X", "geodata": SQUARE}, format="json"),
        other_client.get(zones_url(organization, zone.id)),
        other_client.patch(zones_url(organization, zone.id), {"enabled": False}, format="json"),
        other_client.delete(zones_url(organization, zone.id)),
    ):
        assert_error(response, 404, "Organization not found")
    zone.refresh_from_db()
    assert zone.enabled is True


def test_another_organizations_zone_is_not_found_under_ones_own(admin_client, organization):
    foreign = builders.zone(builders.organization(), "Foreign", SQUARE)
    for response in (
        admin_client.get(zones_url(organization, foreign.id)),
        admin_client.patch(zones_url(organization, foreign.id), {"enabled": False}, format="json"),
        admin_client.delete(zones_url(organization, foreign.id)),
        admin_client.get(zones_url(organization, "not-a-uuid")),
    ):
        assert_error(response, 404, "Zone not found")
    assert Zone.objects.filter(pk=foreign.pk, enabled=True).exists()


def test_without_a_token_is_401(api_client, organization):
    assert_error(api_client.get(zones_url(organization)), 401, "Invalid or missing token")


def test_member_who_is_not_admin_gets_404(organization):
    user = builders.admin(organization, "member@example.com")
    user.memberships.update(org_role="member")
    assert_error(
        builders.bearer_login("member@example.com")[0].get(zones_url(organization)),
        404,
        "Organization not found",
    )


def test_timezone_defaults_to_the_slot_policy(admin_client, organization):
    slots_models = pytest.importorskip("slots.models")
    slots_models.SlotPolicy.objects.update_or_create(
        organization=organization, defaults={"timezone": "Europe/Berlin"}
    )
    organization.refresh_from_db()
    body = admin_client.post(
        zones_url(organization), {"name": "Z", "geodata": SQUARE}, format="json"
    ).json()
    assert body["timezone"] == "Europe/Berlin"
