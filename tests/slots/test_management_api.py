"""Management API: slot policy, slot templates and seeding (contract "Management API", "Slots and
windows"), and the
`erp.slots.updated` events they emit (contract "Webhooks"; contract "Webhooks")."""

from datetime import UTC, datetime

import pytest
import time_machine

from slots.models import SlotPolicy, SlotTemplate
from tests import builders
from tests.conftest import assert_error
from webhooks.events import hour_bucket_event_id

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("traveller")]

VAN = [{"vehicleType": "van", "count": 1, "maxOrdersPerVehicle": 10}]


@pytest.fixture
def client(manager):
    return manager


@pytest.fixture
def base(organization):
    return f"/api/manage/organizations/{organization.id}"


# ----- policy -----


def test_every_organization_has_a_policy_with_the_defaults(client, base):
    response = client.get(f"{base}/slot-policy")
    assert response.status_code == 200, response.content
    assert response.json() == {
        "timezone": "UTC",
        "defaultDurationMinutes": 240,
        "defaultCutoffMinutes": 120,
        "defaultVehicleCapacity": VAN,
        "defaultPickupAddress": None,
    }


def test_put_policy_changes_the_given_fields(organization, client, base):
    response = client.put(
        f"{base}/slot-policy",
        {
            "timezone": "Europe/Berlin",
            "defaultDurationMinutes": 120,
            "defaultVehicleCapacity": [
                {"vehicleType": "bike", "count": 4, "maxOrdersPerVehicle": 6}
            ],
            "defaultPickupAddress": "Depot, Storkower Str. 1",
        },
        format="json",
    )
    assert response.status_code == 200, response.content
    expected = {
        "timezone": "Europe/Berlin",
        "defaultDurationMinutes": 120,
        "defaultCutoffMinutes": 120,
        "defaultVehicleCapacity": [{"vehicleType": "bike", "count": 4, "maxOrdersPerVehicle": 6}],
        "defaultPickupAddress": "Depot, Storkower Str. 1",
    }
    assert response.json() == expected
    assert client.get(f"{base}/slot-policy").json() == expected
    assert SlotPolicy.objects.filter(organization=organization).count() == 1


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"timezone": "Mars/Olympus"}, "timezone Mars/Olympus is not an IANA time zone name"),
        ({"defaultDurationMinutes": 0}, "defaultDurationMinutes: must be between 1 and 1440"),
        ({"defaultDurationMinutes": "60"}, "defaultDurationMinutes: must be an integer"),
        ({"defaultCutoffMinutes": -1}, "defaultCutoffMinutes: must be between 0 and 10080"),
        (
            {"defaultVehicleCapacity": []},
            "defaultVehicleCapacity: Ensure this field has at least 1 elements.",
        ),
        (
            {"defaultVehicleCapacity": [{"vehicleType": "van", "count": 1}]},
            "defaultVehicleCapacity.maxOrdersPerVehicle: This field is required.",
        ),
    ],
)
def test_policy_validation(client, base, body, message):
    assert_error(client.put(f"{base}/slot-policy", body, format="json"), 400, message)


def test_policy_of_another_organization_is_404(client):
    other = builders.organization("Elsewhere")
    response = client.get(f"/api/manage/organizations/{other.id}/slot-policy")
    assert_error(response, 404, "Organization not found")


def test_policy_needs_a_token(api_client, base):
    assert_error(api_client.get(f"{base}/slot-policy"), 401, "Invalid or missing token")


# ----- templates -----


def test_create_template_with_end_time_derives_the_duration(client, base, zone):
    response = client.post(
        f"{base}/slot-templates",
        {
            "zoneId": str(zone.id),
            "dayOfWeek": 1,
            "startTime": "09:30",
            "endTime": "11:00",
            "cutoffMinutes": 60,
            "vehicleCapacity": [
                {"vehicleType": "van", "count": 2, "maxOrdersPerVehicle": 8},
                {"vehicleType": "bike", "count": 1, "maxOrdersPerVehicle": 5},
            ],
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    template = SlotTemplate.objects.get()
    assert body == {
        "id": str(template.id),
        "zoneId": str(zone.id),
        "dayOfWeek": 1,
        "startTime": "09:30",
        "endTime": "11:00",
        "durationMinutes": 90,
        "cutoffMinutes": 60,
        "cutoffDayBeforeAt": None,
        "cutoffRule": "minutes_before_start",
        "vehicleCapacity": [
            {"vehicleType": "van", "count": 2, "maxOrdersPerVehicle": 8},
            {"vehicleType": "bike", "count": 1, "maxOrdersPerVehicle": 5},
        ],
        "capacity": 21,
        "createdAt": "2030-01-01T09:00:00Z",
        "updatedAt": "2030-01-01T09:00:00Z",
    }


def test_create_template_with_duration_derives_the_end_and_takes_policy_defaults(
    client, base, zone
):
    response = client.post(
        f"{base}/slot-templates",
        {"zoneId": str(zone.id), "dayOfWeek": 0, "startTime": "18:00", "durationMinutes": 360},
        format="json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["endTime"], body["durationMinutes"]) == ("00:00", 360)
    assert (body["cutoffMinutes"], body["vehicleCapacity"], body["capacity"]) == (120, VAN, 10)


def test_create_template_with_neither_end_nor_duration_takes_the_policy_duration(
    organization, client, base, zone
):
    client.put(f"{base}/slot-policy", {"defaultDurationMinutes": 90}, format="json")
    body = client.post(
        f"{base}/slot-templates",
        {"zoneId": str(zone.id), "dayOfWeek": 0, "startTime": "08:00"},
        format="json",
    ).json()
    assert (body["endTime"], body["durationMinutes"]) == ("09:30", 90)


def test_end_time_of_midnight_ends_the_day(client, base, zone):
    body = client.post(
        f"{base}/slot-templates",
        {"zoneId": str(zone.id), "dayOfWeek": 0, "startTime": "20:00", "endTime": "00:00"},
        format="json",
    ).json()
    assert (body["endTime"], body["durationMinutes"]) == ("00:00", 240)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, ["zoneId is required", "dayOfWeek is required", "startTime is required"]),
        ({"dayOfWeek": 7}, "dayOfWeek must be between 0 (Sunday) and 6 (Saturday)"),
        ({"dayOfWeek": "1"}, "dayOfWeek: must be an integer"),
        ({"startTime": "8:00"}, "startTime: must be a time HH:MM (00:00 to 23:59)"),
        ({"startTime": "24:00"}, "startTime: must be a time HH:MM (00:00 to 23:59)"),
        ({"endTime": "07:00"}, "endTime must be after startTime"),
        (
            {"endTime": "12:00", "durationMinutes": 60},
            "durationMinutes must equal the minutes from startTime to endTime when both are given",
        ),
        ({"durationMinutes": 0}, "durationMinutes: must be between 1 and 1440"),
        (
            {"startTime": "22:00", "durationMinutes": 240},
            "durationMinutes: a slot must end by midnight of its day",
        ),
        ({"cutoffMinutes": -5}, "cutoffMinutes: must be between 0 and 10080"),
        (
            {"vehicleCapacity": [{"vehicleType": "van", "count": -1, "maxOrdersPerVehicle": 3}]},
            "vehicleCapacity.count: must be between 0 and 100000",
        ),
        (
            {"vehicleCapacity": "lots"},
            'vehicleCapacity: Expected a list of items but got type "str".',
        ),
    ],
)
def test_template_validation(client, base, zone, body, message):
    full = {"zoneId": str(zone.id), "dayOfWeek": 1, "startTime": "08:00"}
    payload = body if body == {} else {**full, **body}
    response = client.post(f"{base}/slot-templates", payload, format="json")
    assert_error(response, 400, message)
    assert not SlotTemplate.objects.exists()


def test_templates_only_for_zones_of_purpose_slot_or_both(organization, client, base):
    dispatch = builders.slot_zone(organization, "Depot", purpose="dispatch")
    both = builders.slot_zone(organization, "Both", purpose="both", geodata=builders.ALEX_GEODATA)
    body = {"dayOfWeek": 1, "startTime": "08:00"}
    assert_error(
        client.post(f"{base}/slot-templates", {**body, "zoneId": str(dispatch.id)}, format="json"),
        400,
        ["zoneId: slot templates can only be assigned to zones of purpose slot or both"],
    )
    response = client.post(
        f"{base}/slot-templates", {**body, "zoneId": str(both.id)}, format="json"
    )
    assert response.status_code == 201


@pytest.mark.parametrize("zone_id", ["nope", "00000000-0000-4000-8000-000000000000", "FOREIGN"])
def test_unknown_or_foreign_zone_is_404(client, base, zone_id):
    if zone_id == "FOREIGN":
        zone_id = str(builders.slot_zone(builders.organization("Elsewhere")).id)
    response = client.post(
        f"{base}/slot-templates",
        {"zoneId": zone_id, "dayOfWeek": 1, "startTime": "08:00"},
        format="json",
    )
    assert_error(response, 404, "Zone not found")


def test_a_second_template_at_the_same_start_is_409(client, base, zone):
    body = {"zoneId": str(zone.id), "dayOfWeek": 1, "startTime": "08:00"}
    assert client.post(f"{base}/slot-templates", body, format="json").status_code == 201
    assert_error(
        client.post(f"{base}/slot-templates", body, format="json"),
        409,
        "A slot template of this zone already starts at 08:00 on day 1",
    )


def test_list_get_patch_delete(client, base, organization, zone):
    alex = builders.slot_zone(organization, "Alex", geodata=builders.ALEX_GEODATA)
    monday = builders.slot_template(zone, day_of_week=1, start="12:00")
    sunday = builders.slot_template(zone, day_of_week=0, start="08:00")
    alex_slot = builders.slot_template(alex, day_of_week=0, start="08:00")

    listed = client.get(f"{base}/slot-templates").json()
    assert [item["id"] for item in listed] == [str(alex_slot.id), str(sunday.id), str(monday.id)]
    only_mitte = client.get(f"{base}/slot-templates", {"zoneId": str(zone.id)}).json()
    assert [item["id"] for item in only_mitte] == [str(sunday.id), str(monday.id)]
    assert_error(
        client.get(f"{base}/slot-templates", {"zoneId": "x"}), 400, ["zoneId must be a UUID"]
    )

    assert client.get(f"{base}/slot-templates/{monday.id}").json()["startTime"] == "12:00"

    patched = client.patch(
        f"{base}/slot-templates/{monday.id}", {"startTime": "13:00"}, format="json"
    ).json()
    assert (patched["startTime"], patched["endTime"], patched["durationMinutes"]) == (
        "13:00",
        "17:00",
        240,
    )
    patched = client.patch(
        f"{base}/slot-templates/{monday.id}",
        {
            "endTime": "14:00",
            "vehicleCapacity": [{"vehicleType": "van", "count": 3, "maxOrdersPerVehicle": 5}],
        },
        format="json",
    ).json()
    assert (patched["durationMinutes"], patched["capacity"]) == (60, 15)
    moved = client.patch(
        f"{base}/slot-templates/{monday.id}", {"zoneId": str(alex.id)}, format="json"
    ).json()
    assert moved["zoneId"] == str(alex.id)

    response = client.delete(f"{base}/slot-templates/{monday.id}")
    assert response.status_code == 204
    assert_error(client.get(f"{base}/slot-templates/{monday.id}"), 404, "Slot not found")
    assert_error(client.delete(f"{base}/slot-templates/{monday.id}"), 404, "Slot not found")
    assert str(monday.id) not in {
        item["id"] for item in client.get(f"{base}/slot-templates").json()
    }


def test_patch_validation(client, base, zone):
    template = builders.slot_template(zone, start="08:00", duration=240)
    path = f"{base}/slot-templates/{template.id}"
    assert_error(
        client.patch(path, {"startTime": "21:00"}, format="json"),
        400,
        ["durationMinutes: a slot must end by midnight of its day"],
    )
    assert_error(
        client.patch(path, {"endTime": "08:00"}, format="json"),
        400,
        ["endTime must be after startTime"],
    )
    other = builders.slot_template(zone, start="14:00")
    assert_error(
        client.patch(f"{base}/slot-templates/{other.id}", {"startTime": "08:00"}, format="json"),
        409,
    )


def test_patch_with_an_incomplete_vehicle_entry_is_400(client, base, zone):
    """Found by schemathesis: a PATCH made the entries partial too; a missing field was a 500."""
    template = builders.slot_template(zone)
    response = client.patch(
        f"{base}/slot-templates/{template.id}",
        {"vehicleCapacity": [{"count": 1, "maxOrdersPerVehicle": 5}]},
        format="json",
    )
    assert_error(response, 400, ["vehicleCapacity.vehicleType: This field is required."])
    template.refresh_from_db()
    assert template.vehicle_capacity == [
        {"vehicleType": "van", "count": 1, "maxOrdersPerVehicle": 10}
    ]


@pytest.mark.parametrize(
    "template_id", ["seedling", "00000000-0000-4000-8000-000000000000", "FOREIGN"]
)
def test_unknown_or_foreign_template_is_404(client, base, template_id):
    if template_id == "FOREIGN":
        template_id = str(
            builders.slot_template(builders.slot_zone(builders.organization("Elsewhere"))).id
        )
    for method in ("get", "patch", "delete"):
        response = getattr(client, method)(
            f"{base}/slot-templates/{template_id}", {}, format="json"
        )
        assert_error(response, 404, "Slot not found")


def test_template_changes_emit_erp_slots_updated(organization, client, base, zone):
    response = client.post(
        f"{base}/slot-templates",
        {"zoneId": str(zone.id), "dayOfWeek": 0, "startTime": "08:00"},
        format="json",
    )
    template_id = response.json()["id"]

    (event,) = builders.events_named("erp.slots.updated", organization)
    assert event.event_id == f"erp.slots.updated:{zone.id}:2030-01-01T09"
    assert event.event_id == hour_bucket_event_id("erp.slots.updated", zone.id)
    payload = event.payload
    assert (payload["polygon_id"], payload["polygon_name"], payload["zone_purpose"]) == (
        str(zone.id),
        "Mitte",
        "slot",
    )
    assert payload["geodata"] == zone.geodata
    assert payload["slots"] == [
        {
            "id": template_id,
            "dayOfWeek": 0,
            "startTime": "08:00",
            "endTime": "12:00",
            "durationMinutes": 240,
            "cutoffMinutes": 120,
            "vehicleCapacity": VAN,
            "capacity": 10,
        }
    ]
    # 14 days from today (Tuesday 1 January): two Sundays.
    assert payload["availability"] == [
        {
            "date": "2030-01-06",
            "templateId": template_id,
            "capacity": 10,
            "booked": 0,
            "available": 10,
        },
        {
            "date": "2030-01-13",
            "templateId": template_id,
            "capacity": 10,
            "booked": 0,
            "available": 10,
        },
    ]

    # Within the hour, later changes replace the payload of the unsent event (contract "Webhooks").
    client.patch(f"{base}/slot-templates/{template_id}", {"startTime": "09:00"}, format="json")
    (event,) = builders.events_named("erp.slots.updated", organization)
    assert event.payload["slots"][0]["startTime"] == "09:00"
    client.delete(f"{base}/slot-templates/{template_id}")
    (event,) = builders.events_named("erp.slots.updated", organization)
    assert (event.payload["slots"], event.payload["availability"]) == ([], [])

    # The next hour opens a new event.
    with time_machine.travel(datetime(2030, 1, 1, 10, 5, tzinfo=UTC), tick=False):
        builders.slot_template(zone, day_of_week=2, start="08:00")
    events = builders.events_named("erp.slots.updated", organization)
    assert [e.event_id for e in events] == [
        f"erp.slots.updated:{zone.id}:2030-01-01T09",
        f"erp.slots.updated:{zone.id}:2030-01-01T10",
    ]


# ----- seed -----


def test_seed_with_defaults_covers_every_slot_zone_days_0_to_4_from_8_to_20(
    organization, client, base, zone
):
    both = builders.slot_zone(organization, "Both", purpose="both", geodata=builders.ALEX_GEODATA)
    builders.slot_zone(organization, "Depot", purpose="dispatch", geodata=builders.ALEX_GEODATA)

    response = client.post(f"{base}/slot-templates/seed", {}, format="json")

    assert response.status_code == 201, response.content
    created = response.json()
    assert len(created) == 2 * 5 * 3
    assert {item["zoneId"] for item in created} == {str(zone.id), str(both.id)}
    assert sorted({item["dayOfWeek"] for item in created}) == [0, 1, 2, 3, 4]
    mitte_sunday = [
        (item["startTime"], item["endTime"])
        for item in created
        if item["zoneId"] == str(zone.id) and item["dayOfWeek"] == 0
    ]
    assert mitte_sunday == [("08:00", "12:00"), ("12:00", "16:00"), ("16:00", "20:00")]
    assert {(item["cutoffMinutes"], item["capacity"]) for item in created} == {(120, 10)}
    assert len(builders.events_named("erp.slots.updated", organization)) == 2  # one per zone


def test_seeding_twice_creates_nothing_new(client, base, zone):
    assert len(client.post(f"{base}/slot-templates/seed", {}, format="json").json()) == 15
    response = client.post(f"{base}/slot-templates/seed", {}, format="json")
    assert (response.status_code, response.json()) == (201, [])
    assert SlotTemplate.objects.count() == 15


def test_seed_with_zones_days_and_hours_follows_the_policy(organization, client, base, zone):
    other = builders.slot_zone(organization, "Alex", geodata=builders.ALEX_GEODATA)
    client.put(
        f"{base}/slot-policy",
        {"defaultDurationMinutes": 120, "defaultCutoffMinutes": 30},
        format="json",
    )
    response = client.post(
        f"{base}/slot-templates/seed",
        {
            "zoneIds": [str(other.id)],
            "daysOfWeek": [6, 5],
            "firstStart": "10:00",
            "lastEnd": "15:00",
        },
        format="json",
    )
    created = response.json()
    assert [(i["dayOfWeek"], i["startTime"], i["endTime"]) for i in created] == [
        (5, "10:00", "12:00"),
        (5, "12:00", "14:00"),
        (6, "10:00", "12:00"),
        (6, "12:00", "14:00"),
    ]
    assert {(i["zoneId"], i["cutoffMinutes"]) for i in created} == {(str(other.id), 30)}


def test_seed_skips_existing_slots_only(client, base, zone):
    builders.slot_template(zone, day_of_week=0, start="12:00", capacity=3)
    created = client.post(f"{base}/slot-templates/seed", {"daysOfWeek": [0]}, format="json").json()
    assert [item["startTime"] for item in created] == ["08:00", "16:00"]


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"zoneIds": ["nope"]}, 404, "Zone not found"),
        ({"daysOfWeek": [7]}, 400, ["daysOfWeek: must be between 0 and 6"]),
        ({"firstStart": "25:00"}, 400, ["firstStart: must be a time HH:MM (00:00 to 23:59)"]),
        ({"firstStart": "20:00", "lastEnd": "08:00"}, 400, ["firstStart must be before lastEnd"]),
        ({"zoneIds": "all"}, 400, ['zoneIds: Expected a list of items but got type "str".']),
    ],
)
def test_seed_validation(client, base, zone, body, status, message):
    assert_error(client.post(f"{base}/slot-templates/seed", body, format="json"), status, message)
    assert not SlotTemplate.objects.exists()


def test_seed_of_a_dispatch_zone_is_400(organization, client, base):
    depot = builders.slot_zone(organization, "Depot", purpose="dispatch")
    response = client.post(
        f"{base}/slot-templates/seed", {"zoneIds": [str(depot.id)]}, format="json"
    )
    assert_error(
        response,
        400,
        ["zoneId: slot templates can only be assigned to zones of purpose slot or both"],
    )


def test_seed_without_slot_zones_creates_nothing(client, base):
    response = client.post(f"{base}/slot-templates/seed", {}, format="json")
    assert (response.status_code, response.json()) == (201, [])


def test_get_on_the_seed_path_is_405(client, base):
    assert_error(client.get(f"{base}/slot-templates/seed"), 405)
