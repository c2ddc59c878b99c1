"""The dispatch policy, zone depots and drivers' dispatch fields (contract "Dispatch")."""

import pytest

from dispatch.models import DispatchPolicy, DriverZone
from slots.services.templates import slot_policy_update
from tests import builders
from tests.conftest import assert_error

DEFAULTS = {
    "serviceMinutes": 4,
    "travelSpeedKmh": 25.0,
    "detourFactor": 1.3,
    "autoDispatch": "off",
    "autoDispatchLeadMinutes": 60,
    "requireSignature": False,
    "requirePhoto": False,
    "maxAttempts": 3,
}


def policy_url(organization) -> str:
    return f"/api/manage/organizations/{organization.id}/dispatch-policy"


def drivers_url(organization) -> str:
    return f"/api/manage/organizations/{organization.id}/drivers"


def zones_url(organization) -> str:
    return f"/api/manage/organizations/{organization.id}/zones"


def test_the_policy_is_created_with_the_defaults_on_first_read(client, organization):
    assert DispatchPolicy.objects.count() == 0

    assert client.get(policy_url(organization)).json() == DEFAULTS
    assert client.get(policy_url(organization)).json() == DEFAULTS
    assert DispatchPolicy.objects.count() == 1


def test_put_changes_the_fields_given_and_keeps_the_others(client, organization):
    change = {"serviceMinutes": 6, "autoDispatch": "at_cutoff", "detourFactor": 1.5}

    response = client.put(policy_url(organization), change, format="json")

    assert response.status_code == 200
    assert response.json() == {**DEFAULTS, **change}
    assert client.get(policy_url(organization)).json() == {**DEFAULTS, **change}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"serviceMinutes": 241}, "serviceMinutes: must be between 0 and 240"),
        ({"serviceMinutes": "4"}, "serviceMinutes: must be an integer"),
        ({"travelSpeedKmh": 0.5}, "travelSpeedKmh: must be between 1 and 200"),
        ({"detourFactor": 0.9}, "detourFactor: must be between 1 and 5"),
        ({"autoDispatch": "always"}, "autoDispatch must be one of: off, at_cutoff"),
        ({"autoDispatchLeadMinutes": -1}, "autoDispatchLeadMinutes: must be between 0 and 1440"),
        ({"maxAttempts": 0}, "maxAttempts: must be between 1 and 10"),
        ({"requirePhoto": "yes"}, None),
    ],
)
def test_out_of_range_policy_values_are_a_400(client, organization, body, message):
    response = client.put(policy_url(organization), body, format="json")

    assert_error(response, 400, message, code="validation_failed")
    assert client.get(policy_url(organization)).json() == DEFAULTS


def test_another_organizations_policy_is_404(client, other_organization):
    assert_error(client.get(policy_url(other_organization)), 404, "Organization not found")


def test_a_zone_takes_a_depot_on_create_and_patch_and_shows_it_on_every_read(client, organization):
    body = {"name": "Mitte", "geodata": builders.SQUARE}
    created = client.post(zones_url(organization), body, format="json").json()
    assert created["depot"] is None

    depot = {"address": "Alexanderplatz 1", "lat": 52.5219, "lng": 13.4132}
    patched = client.patch(
        f"{zones_url(organization)}/{created['id']}", {"depot": depot}, format="json"
    )
    assert patched.json()["depot"] == depot
    assert client.get(zones_url(organization)).json()[0]["depot"] == depot
    assert client.get(f"{zones_url(organization)}/{created['id']}").json()["depot"] == depot

    unaddressed = client.patch(
        f"{zones_url(organization)}/{created['id']}",
        {"depot": {"lat": 52.5, "lng": 13.4}},
        format="json",
    )
    assert unaddressed.json()["depot"] == {"address": "", "lat": 52.5, "lng": 13.4}
    removed = client.patch(
        f"{zones_url(organization)}/{created['id']}", {"depot": None}, format="json"
    )
    assert removed.json()["depot"] is None

    second = client.post(
        zones_url(organization),
        {"name": "Pankow", "geodata": builders.square_polygon(13.2), "depot": depot},
        format="json",
    )
    assert second.status_code == 201
    assert second.json()["depot"] == depot


@pytest.mark.parametrize(
    ("depot", "message"),
    [
        ({"lat": 52.5}, "depot.lng required"),
        ({"lat": 91, "lng": 13.4}, "depot.lat must be between -90 and 90"),
        ({"lat": "52.5", "lng": 13.4}, "depot.lat must be a number"),
        ("Alexanderplatz", None),
    ],
)
def test_a_bad_depot_is_a_400(client, organization, depot, message):
    body = {"name": "Mitte", "geodata": builders.SQUARE, "depot": depot}

    assert_error(client.post(zones_url(organization), body, format="json"), 400, message)


def test_drivers_take_capacity_shift_and_zones(client, organization, mitte):
    slot_policy_update(
        organization_id=organization.id,
        default_vehicle_capacity=[{"vehicleType": "bike", "count": 2, "maxOrdersPerVehicle": 6}],
    )
    body = {
        "name": "Bea",
        "vehicleType": "bike",
        "shiftStart": "07:30",
        "shiftEnd": "15:00",
        "zoneIds": [str(mitte.id), str(mitte.id)],
    }

    created = client.post(drivers_url(organization), body, format="json")

    assert created.status_code == 201, created.content
    driver = created.json()
    assert driver["capacity"] is None and driver["effectiveCapacity"] == 6
    assert (driver["shiftStart"], driver["shiftEnd"]) == ("07:30", "15:00")
    assert driver["zoneIds"] == [str(mitte.id)]

    url = f"{drivers_url(organization)}/{driver['id']}"
    patched = client.patch(url, {"capacity": 9, "zoneIds": []}, format="json").json()
    assert (patched["capacity"], patched["effectiveCapacity"], patched["zoneIds"]) == (9, 9, [])
    assert patched["shiftStart"] == "07:30"
    assert DriverZone.objects.count() == 0
    back = client.patch(url, {"capacity": None, "vehicleType": "truck"}, format="json").json()
    assert (back["capacity"], back["effectiveCapacity"]) == (None, 20)
    assert client.get(url).json() == back


def test_bad_driver_dispatch_fields_are_answered_with_the_error_body(
    client, organization, other_organization, mitte
):
    theirs = builders.zone(other_organization, "Theirs")
    url = drivers_url(organization)

    assert_error(
        client.post(url, {"name": "X", "shiftStart": "9:00"}, format="json"),
        400,
        "shiftStart: must be a time HH:MM (00:00 to 23:59)",
    )
    assert_error(
        client.post(url, {"name": "X", "shiftStart": "21:00"}, format="json"),
        400,
        "shiftEnd must be after shiftStart",
    )
    assert_error(client.post(url, {"name": "X", "capacity": 0}, format="json"), 400)
    assert_error(
        client.post(url, {"name": "X", "zoneIds": [str(theirs.id)]}, format="json"),
        404,
        "Zone not found",
    )
    assert_error(client.post(url, {"name": "X", "zoneIds": "all"}, format="json"), 400)
    assert client.get(url).json() == []  # nothing half-made
    driver = client.post(url, {"name": "X"}, format="json").json()
    assert_error(
        client.patch(f"{url}/{driver['id']}", {"shiftEnd": "07:00"}, format="json"),
        400,
        "shiftEnd must be after shiftStart",
    )


def test_a_patch_with_half_a_depot_is_a_400(client, organization):
    zone = builders.zone(organization, "Mitte")

    response = client.patch(
        f"{zones_url(organization)}/{zone.id}", {"depot": {"address": "Alex"}}, format="json"
    )

    body = assert_error(response, 400)
    assert body["message"] == ["depot.lat required", "depot.lng required"]
