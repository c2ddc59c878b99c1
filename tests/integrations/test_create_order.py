"""POST /api/integrations/partner-a/orders: every field rule and message (contract "Orders")."""

import pytest

from integrations.models import Order, OrderStatusEvent
from tests import builders
from tests.conftest import assert_error

pytestmark = pytest.mark.django_db


def test_created_order_has_the_contract_shape(client, mitte):
    response = builders.create_order(client, notes="Ring twice")

    assert response.status_code == 201, response.content
    body = response.json()
    # trackingUrl: the partner and ERP answers' (the management API's has the token only)
    assert set(body) == builders.PARTNER_ORDER_FIELDS | {"trackingUrl"}
    assert body["status"] == "pending"
    assert body["externalRef"] == "PO-1001"
    assert body["pickupLat"] == 52.53
    assert body["dropoffLng"] == builders.MITTE[1]
    assert body["recipientPhone"] == "+491701234567"
    assert body["packageSize"] == "small"
    assert body["notes"] == "Zone: Mitte; Ring twice"
    assert body["deliveryWindowStart"] is None
    assert body["deliveryWindowEnd"] is None
    order = Order.objects.get(pk=body["id"])
    assert order.zone == mitte
    assert order.family == "partner"
    assert order.platform == "partner_a"
    assert body["trackingToken"] == order.tracking_token
    assert body["trackingUrl"] == f"http://testserver/track/{order.tracking_token}"
    # contract "Tracking": at least 128 bits of randomness (token_urlsafe(24): 192 bits, 32 chars).
    assert len(order.tracking_token) == 32


def test_creation_writes_the_pending_history_row_and_order_created_event(
    client, mitte, organization
):
    body = builders.create_order(client).json()

    history = list(OrderStatusEvent.objects.filter(order_id=body["id"]))
    assert [(e.from_status, e.to_status) for e in history] == [("", "pending")]
    created = builders.events_named("order.created", organization)
    assert len(created) == 1
    assert created[0].family == "partner"
    assert created[0].payload == {"id": body["id"], "status": "pending", "externalRef": "PO-1001"}


def test_notes_prefix_has_temperature_weight_and_zone_before_the_note(client, mitte):
    response = builders.create_order(
        client, temperatureClass="Chilled", weightKg=2.50, packageSize=..., notes="Fragile"
    )

    assert response.status_code == 201, response.content
    assert response.json()["notes"] == "Temperature: Chilled; Weight: 2.5 kg; Zone: Mitte; Fragile"


@pytest.mark.parametrize(
    ("weight", "written"), [(3, "3"), (3.0, "3"), (2.5, "2.5"), (0.125, "0.125"), (12.05, "12.05")]
)
def test_notes_weight_is_the_shortest_decimal(client, mitte, weight, written):
    response = builders.create_order(client, weightKg=weight)

    assert response.json()["notes"] == f"Weight: {written} kg; Zone: Mitte"


def test_notes_without_a_partner_note_end_with_the_zone(client, mitte):
    response = builders.create_order(client, temperatureClass="Frozen")

    assert response.json()["notes"] == "Temperature: Frozen; Zone: Mitte"


def test_zone_is_the_smallest_active_zone_containing_the_dropoff(client, organization, mitte):
    builders.zone(organization, name="Alexanderplatz", geodata=builders.ALEX_GEODATA)

    body = builders.create_order(client, dropoffLat=52.5219, dropoffLng=13.4132).json()

    assert Order.objects.get(pk=body["id"]).zone.name == "Alexanderplatz"
    assert body["notes"] == "Zone: Alexanderplatz"


def test_delivery_zone_by_name_wins_over_the_dropoff_point(client, organization, mitte):
    builders.zone(organization, name="Alexanderplatz", geodata=builders.ALEX_GEODATA)

    body = builders.create_order(
        client, deliveryZone="Mitte", dropoffLat=52.5219, dropoffLng=13.4132
    ).json()

    assert Order.objects.get(pk=body["id"]).zone == mitte
    assert body["notes"] == "Zone: Mitte"


def test_unknown_delivery_zone_name_is_404(client, mitte):
    assert_error(
        builders.create_order(client, deliveryZone="Atlantis"), 404, "Zone Atlantis not found"
    )


def test_disabled_delivery_zone_name_is_404(client, organization):
    builders.zone(organization, name="Closed", enabled=False)

    assert_error(builders.create_order(client, deliveryZone="Closed"), 404, "Zone Closed not found")


def test_slot_only_zone_is_not_a_partner_zone(client, organization):
    builders.zone(organization, name="Slots", purpose="slot")

    assert_error(builders.create_order(client, deliveryZone="Slots"), 404, "Zone Slots not found")
    assert_error(builders.create_order(client), 400, "No delivery zone covers the dropoff location")


def test_dropoff_outside_every_zone_is_400(client, mitte):
    response = builders.create_order(client, **builders.DROPOFF_OUTSIDE)

    assert_error(response, 400, "No delivery zone covers the dropoff location")
    assert not Order.objects.exists()


def test_disabled_zone_does_not_cover_the_dropoff(client, organization):
    builders.zone(organization, enabled=False)

    assert_error(builders.create_order(client), 400, "No delivery zone covers the dropoff location")


def test_duplicate_external_ref_is_409(client, mitte):
    assert builders.create_order(client).status_code == 201

    response = builders.create_order(client, recipientName="Somebody Else")

    assert_error(response, 409, "Order with externalRef PO-1001 already exists")
    assert Order.objects.count() == 1


def test_the_same_external_ref_in_another_organization_is_fine(client, mitte, other_organization):
    builders.zone(other_organization)
    assert builders.create_order(client).status_code == 201

    assert builders.create_order(builders.partner_client(other_organization)).status_code == 201


# ----- geocodeOnIngest -----

#: an order body without coordinates, for the geocoder to fill in
NO_COORDINATES = {"pickupLat": ..., "pickupLng": ..., "dropoffLat": ..., "dropoffLng": ...}


def geocoded_order(client, pickup_address: str, dropoff_address: str):
    """Creates an order with `geocodeOnIngest` and addresses only."""
    return builders.create_order(
        client,
        geocodeOnIngest=True,
        **NO_COORDINATES,
        pickupAddress=pickup_address,
        dropoffAddress=dropoff_address,
    )


def test_geocode_on_ingest_fills_missing_coordinates(client, mitte):
    response = geocoded_order(client, "52.53,13.45", "52.52,13.40")

    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["pickupLat"], body["pickupLng"]) == (52.53, 13.45)
    assert (body["dropoffLat"], body["dropoffLng"]) == (52.52, 13.40)


def test_geocode_on_ingest_keeps_given_coordinates(client, mitte):
    response = builders.create_order(
        client, geocodeOnIngest=True, pickupAddress="Nowhere that any geocoder knows"
    )

    assert response.status_code == 201, response.content
    assert response.json()["pickupLat"] == 52.53


def test_address_that_cannot_be_geocoded_is_400_naming_the_field(client, mitte):
    response = builders.create_order(
        client,
        geocodeOnIngest=True,
        dropoffLat=...,
        dropoffLng=...,
        dropoffAddress="Nowhere that any geocoder knows",
    )

    assert_error(response, 400, ["Could not geocode dropoffAddress"])


def test_both_addresses_failing_to_geocode_are_both_named(client, mitte):
    response = geocoded_order(client, "Unknown pickup place", "Unknown dropoff place")

    assert_error(
        response, 400, ["Could not geocode pickupAddress", "Could not geocode dropoffAddress"]
    )


# ----- validation: one message per problem, each naming its field -----


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"externalRef": ...}, "externalRef required"),
        ({"externalRef": None}, "externalRef required"),
        ({"externalRef": ""}, "externalRef must not be empty"),
        ({"externalRef": 12}, "externalRef must be a string"),
        ({"externalRef": "x" * 101}, "externalRef must be at most 100 characters"),
        ({"externalRef": "has space"}, "externalRef may contain only letters, digits and -_.:/#"),
        ({"externalRef": "ünïcode"}, "externalRef may contain only letters, digits and -_.:/#"),
        ({"pickupAddress": ...}, "pickupAddress required"),
        ({"pickupAddress": "a" * 501}, "pickupAddress must be at most 500 characters"),
        ({"dropoffAddress": ...}, "dropoffAddress required"),
        ({"dropoffAddress": "   "}, "dropoffAddress must not be empty"),
        ({"recipientName": ...}, "recipientName required"),
        ({"recipientName": "n" * 201}, "recipientName must be at most 200 characters"),
        ({"recipientPhone": ...}, "recipientPhone required"),
        (
            {"recipientPhone": "call me"},
            "recipientPhone must be a phone number: + optional, then 7 to 15 digits",
        ),
        (
            {"recipientPhone": "+12345"},
            "recipientPhone must be a phone number: + optional, then 7 to 15 digits",
        ),
        (
            {"recipientPhone": "+1234567890123456"},
            "recipientPhone must be a phone number: + optional, then 7 to 15 digits",
        ),
        ({"recipientPhone": 4915112345678}, "recipientPhone must be a string"),
        ({"pickupLat": 90.5}, "pickupLat must be between -90 and 90"),
        ({"pickupLng": -180.01}, "pickupLng must be between -180 and 180"),
        ({"dropoffLat": -91}, "dropoffLat must be between -90 and 90"),
        ({"dropoffLng": 181}, "dropoffLng must be between -180 and 180"),
        ({"dropoffLat": "52.5"}, "dropoffLat must be a number"),
        ({"dropoffLng": True}, "dropoffLng must be a number"),
        (
            {"dropoffLat": ..., "dropoffLng": ...},
            "dropoffLat/dropoffLng required unless geocodeOnIngest is true",
        ),
        ({"dropoffLng": ...}, "dropoffLat/dropoffLng required unless geocodeOnIngest is true"),
        (
            {"pickupLat": None, "geocodeOnIngest": False},
            "pickupLat/pickupLng required unless geocodeOnIngest is true",
        ),
        ({"geocodeOnIngest": "yes"}, "geocodeOnIngest must be a boolean"),
        ({"packageSize": ...}, "packageSize or weightKg required"),
        ({"packageSize": "huge"}, "packageSize must be one of: small, medium, large"),
        ({"weightKg": 0}, "weightKg must be greater than 0"),
        ({"weightKg": -1.5}, "weightKg must be greater than 0"),
        ({"weightKg": 100001}, "weightKg must be at most 100000"),
        ({"weightKg": 1.2345}, "weightKg must have at most 3 decimal places"),
        ({"weightKg": "2"}, "weightKg must be a number"),
        (
            {"temperatureClass": "chilled"},
            "temperatureClass must be one of: Ambient, Chilled, Frozen",
        ),
        (
            {"deliveryMethod": "bicycle"},
            "deliveryMethod must be one of: motorcycle, car, refrigerated",
        ),
        (
            {"serviceType": "express"},
            "serviceType must be one of: standard, return, click_collect, locker, round",
        ),
        ({"deliveryZone": "z" * 201}, "deliveryZone must be at most 200 characters"),
        ({"notes": "n" * 2001}, "notes must be at most 2000 characters"),
        ({"notes": ["a"]}, "notes must be a string"),
        ({"codAmount": -1}, "codAmount must be at least 0"),
        ({"codAmount": 10.005}, "codAmount must have at most 2 decimal places"),
        ({"codAmount": "10"}, "codAmount must be a number"),
        ({"expectedBarcode": "b" * 201}, "expectedBarcode must be at most 200 characters"),
        (
            {"deliveryWindowStart": "next tuesday"},
            "deliveryWindowStart must be an ISO 8601 date-time",
        ),
        (
            {"deliveryWindowStart": "2030-01-06T09:00:00+01:00", "deliveryWindowEnd": "soon"},
            "deliveryWindowEnd must be an ISO 8601 date-time",
        ),
        (
            {"deliveryWindowEnd": "2030-01-06T11:00:00+01:00"},
            "deliveryWindowStart required when deliveryWindowEnd is given",
        ),
        (
            {
                "deliveryWindowStart": "2030-01-06T11:00:00+01:00",
                "deliveryWindowEnd": "2030-01-06T09:00:00+01:00",
            },
            "deliveryWindowEnd must be after deliveryWindowStart",
        ),
    ],
)
def test_invalid_field_is_400_with_a_message_naming_it(client, mitte, overrides, message):
    response = builders.create_order(client, **overrides)

    body = assert_error(response, 400)
    assert body["message"] == [message]
    assert not Order.objects.exists()


def test_every_problem_is_listed_at_once(client, mitte):
    response = client.post(
        "/api/integrations/partner-a/orders",
        {"pickupAddress": "Somewhere", "recipientPhone": "nope"},
        format="json",
    )

    body = assert_error(response, 400)
    assert sorted(body["message"]) == sorted(
        [
            "externalRef required",
            "dropoffAddress required",
            "recipientName required",
            "recipientPhone must be a phone number: + optional, then 7 to 15 digits",
            # the rules between fields, in the same answer (docs/contract.md "Errors")
            "pickupLat/pickupLng required unless geocodeOnIngest is true",
            "dropoffLat/dropoffLng required unless geocodeOnIngest is true",
            "packageSize or weightKg required",
        ]
    )


def test_a_body_with_only_a_pickup_address_lists_fields_and_rules_together(client, mitte):
    """The contract's example: a missing field and a rule between fields in one array."""
    response = client.post(
        "/api/integrations/partner-a/orders", {"pickupAddress": "Somewhere"}, format="json"
    )

    body = assert_error(response, 400)
    assert "externalRef required" in body["message"]
    assert "dropoffLat/dropoffLng required unless geocodeOnIngest is true" in body["message"]
    # field errors first, then the rules between fields
    assert body["message"].index("externalRef required") < body["message"].index(
        "dropoffLat/dropoffLng required unless geocodeOnIngest is true"
    )


def test_a_rule_is_silent_about_a_field_already_refused(client, mitte):
    response = builders.create_order(
        client, dropoffLat="north", deliveryWindowEnd="2030-01-01T10:00"
    )

    body = assert_error(response, 400)
    assert "dropoffLat must be a number" in body["message"]
    assert "dropoffLat/dropoffLng required unless geocodeOnIngest is true" not in body["message"]
    assert "deliveryWindowStart required when deliveryWindowEnd is given" in body["message"]


def test_rules_between_fields_are_listed_together(client, mitte):
    response = builders.create_order(
        client, pickupLat=..., pickupLng=..., dropoffLat=..., packageSize=...
    )

    body = assert_error(response, 400)
    assert body["message"] == [
        "pickupLat/pickupLng required unless geocodeOnIngest is true",
        "dropoffLat/dropoffLng required unless geocodeOnIngest is true",
        "packageSize or weightKg required",
    ]


def test_phone_separators_are_stripped(client, mitte):
    response = builders.create_order(client, recipientPhone="+49 (170) 123-4567")

    assert response.json()["recipientPhone"] == "+491701234567"


def test_optional_fields_are_stored(client, mitte):
    response = builders.create_order(
        client,
        weightKg=4.2,
        temperatureClass="Ambient",
        deliveryMethod="car",
        codAmount=19.99,
        expectedBarcode="4006381333931",
        serviceType="click_collect",
    )

    assert response.status_code == 201, response.content
    order = Order.objects.get(pk=response.json()["id"])
    assert str(order.weight_kg) == "4.200"
    assert str(order.cod_amount) == "19.99"
    assert order.delivery_method == "car"
    assert order.service_type == "click_collect"
    assert order.expected_barcode == "4006381333931"


def test_service_type_defaults_to_standard(client, mitte):
    order = Order.objects.get(pk=builders.create_order(client).json()["id"])

    assert order.service_type == "standard"


def test_external_ref_may_hold_the_allowed_punctuation(client, mitte):
    response = builders.create_order(client, externalRef="A-1_b.2:c/3#4")

    assert response.status_code == 201, response.content


def test_body_that_is_not_json_is_400(client, mitte):
    response = client.post(
        "/api/integrations/partner-a/orders", "{not json", content_type="application/json"
    )

    assert_error(response, 400, "Request body is not valid JSON")


def test_body_that_is_not_an_object_is_400(client, mitte):
    response = client.post("/api/integrations/partner-a/orders", [1, 2], format="json")

    assert_error(response, 400)


def test_body_that_is_not_json_content_type_is_415(client, mitte):
    response = client.post(
        "/api/integrations/partner-a/orders", "externalRef=x", content_type="text/plain"
    )

    assert_error(response, 415)


def test_window_order_on_a_delivery_day_is_stored_with_its_window(client, mitte):
    response = builders.create_order(
        client,
        deliveryWindowStart=f"{builders.DELIVERY_DAY}T09:00:00+01:00",
        deliveryWindowEnd=f"{builders.DELIVERY_DAY}T11:00:00+01:00",
    )

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["deliveryWindowStart"] == f"{builders.DELIVERY_DAY}T09:00:00+01:00"
    assert body["deliveryWindowEnd"] == f"{builders.DELIVERY_DAY}T11:00:00+01:00"
