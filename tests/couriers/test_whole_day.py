"""A whole day end to end over real HTTP (issue 27's "Done when"): a live server, a real Celery
worker and a loopback webhook receiver. An admin plans and commits tomorrow, each courier picks
up and delivers with proof (one fails with a reason), the failed order is re-attempted the next
day and delivered; the partner receives every event once, in order for each order, signed, and
the tracking page shows the ETA, then the delivery, never the courier's position or the address.
"""

import base64
import hashlib
import hmac
import io
import json
import time
from collections import defaultdict
from datetime import UTC, datetime

import pytest
import requests
import time_machine
from PIL import Image

from tests import builders
from tests.webhooks.conftest import celery_worker, receiver, test_broker  # noqa: F401 - fixtures

#: Tuesday 7 January 2031, 16:00 in Berlin: the admin plans tomorrow
TUESDAY_AFTERNOON = datetime(2031, 1, 7, 15, 0, tzinfo=UTC)
WEDNESDAY = "2031-01-08"
THURSDAY = "2031-01-09"
#: the couriers set out at 09:30 in Berlin, the next day too
WEDNESDAY_MORNING = datetime(2031, 1, 8, 8, 30, tzinfo=UTC)
THURSDAY_MORNING = datetime(2031, 1, 9, 8, 30, tzinfo=UTC)
DEPOT = builders.ALEX
BARCODE = "4006381333931"
#: a position of a courier, which no recipient may see
COURIER_POSITION = (52.51234, 13.39876)


def png(size=(120, 40), color="black") -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, "PNG")
    return out.getvalue()


class Api:
    """JSON over HTTP to the live server with one set of headers."""

    def __init__(self, base: str, **headers):
        self.base = base
        self.session = requests.Session()
        self.session.headers.update(headers)

    def get(self, path: str, **params) -> requests.Response:
        return self.session.get(self.base + path, params=params, timeout=30)

    def post(self, path: str, body=None, **kwargs) -> requests.Response:
        return self.session.post(self.base + path, json=body, timeout=30, **kwargs)

    def put(self, path: str, body) -> requests.Response:
        return self.session.put(self.base + path, json=body, timeout=30)


def ok(response: requests.Response, status: int = 200) -> dict:
    assert response.status_code == status, (response.status_code, response.text)
    return response.json() if response.content else {}


def management(base: str, email: str) -> Api:
    """A management API client signed in now (tokens last 12 hours)."""
    token = ok(Api(base).post("/api/auth/token", {"email": email, "password": builders.PASSWORD}))
    return Api(base, Authorization=f"Bearer {token['token']}")


def planned_and_committed(manager: Api, org: str, day: str, zone_id: str) -> dict:
    """POSTs a plan of `day`, waits for the real worker to solve it, commits it."""
    plans = f"/api/manage/organizations/{org}/dispatch/plans"
    plan = ok(manager.post(plans, {"date": day, "zoneIds": [zone_id]}), 202)
    assert plan["status"] == "planning"
    deadline = time.monotonic() + 60
    while plan["status"] == "planning" and time.monotonic() < deadline:
        time.sleep(0.2)
        plan = ok(manager.get(f"{plans}/{plan['id']}"))
    assert plan["status"] == "ready", plan
    assert plan["unassigned"] == []
    committed = ok(manager.post(f"{plans}/{plan['id']}/commit"))
    assert committed["skipped"] == []
    return plan


def deliver(courier: Api, stop: dict) -> None:
    """The courier at the door: picked up, on the way, delivered with a signature, the
    recipient's name, a photo and the barcode when one is expected."""
    events = f"/api/courier/orders/{stop['orderId']}/events"
    for step in ("picked_up", "in_transit"):
        ok(
            courier.post(
                events, {"type": step}, headers={"Idempotency-Key": f"{step}-{stop['orderId']}"}
            )
        )
    photo = ok(
        courier.post("/api/courier/photos", files={"photo": ("door.png", png(), "image/png")}), 201
    )
    proof = {
        "recipientName": "Ada Lovelace",
        "signature": "data:image/png;base64," + base64.b64encode(png()).decode(),
        "photoIds": [photo["photoId"]],
    }
    if stop["expectedBarcode"]:
        proof["barcode"] = stop["expectedBarcode"]
    body = {
        "type": "delivered",
        "location": {"lat": stop["lat"], "lng": stop["lng"]},
        "proof": proof,
    }
    answer = ok(
        courier.post(events, body, headers={"Idempotency-Key": f"delivered-{stop['orderId']}"})
    )
    assert answer["status"] == "delivered"


def assert_tracking_hides_the_courier(tracking: dict, page: str, address: str) -> None:
    text = json.dumps(tracking)
    for secret in (address, str(COURIER_POSITION[0]), str(COURIER_POSITION[1]), "recipientPhone"):
        assert secret not in text
        assert secret not in page
    assert set(tracking) >= {"eta", "etaWindow", "deliveredAt", "stopsBefore"}
    assert not {"lat", "lng", "location", "position", "address", "dropoffAddress"} & set(tracking)


def test_a_whole_day_over_http(live_server, celery_worker, receiver, settings, organization):  # noqa: F811
    settings.DISPATCH_SOLVER_TIME_LIMIT_SECONDS = 1.0
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True  # the receiver is on loopback
    base, org = live_server.url, str(organization.id)
    manage = f"/api/manage/organizations/{org}"
    builders.admin(organization, "ops@example.com")

    with time_machine.travel(TUESDAY_AFTERNOON, tick=True) as traveller:
        manager = management(base, "ops@example.com")
        zone = ok(
            manager.post(
                f"{manage}/zones",
                {
                    "name": "Mitte",
                    "geodata": builders.MITTE_GEODATA,
                    "timezone": "Europe/Berlin",
                    "windowCapacity": 10,
                    "depot": {"address": "Alexanderplatz 1", "lat": DEPOT[0], "lng": DEPOT[1]},
                },
            ),
            201,
        )
        ok(manager.put(f"{manage}/dispatch-policy", {"requireSignature": True}))
        couriers = {}
        for name in ("Ana Costa", "Bo Lindqvist"):
            driver = ok(
                manager.post(
                    f"{manage}/drivers",
                    {
                        "name": name,
                        "phone": "+4917000111222",
                        "vehicleType": "van",
                        "capacity": 3,
                        "zoneIds": [zone["id"]],
                    },
                ),
                201,
            )
            token = ok(manager.post(f"{manage}/drivers/{driver['id']}/access-token"), 201)["token"]
            couriers[driver["id"]] = Api(base, Authorization=f"Bearer {token}")
        key = ok(
            manager.post(
                f"{manage}/api-keys",
                {"name": "Partner A", "platform": "partner_a", "webhookUrl": receiver.url},
            ),
            201,
        )
        assert key.get("webhookEvents") is None
        partner = Api(base, **{"X-API-Key": key["apiKey"]})

        # Six orders of tomorrow in three windows, dropped off around the depot.
        orders = {}
        for n in range(6):
            lat, lng = builders.offset(*DEPOT, north_m=300 * (n - 2), east_m=250 * (n % 3 - 1))
            ref = f"PO-{n + 1}"
            body = builders.partner_order(
                externalRef=ref,
                dropoffAddress=f"Torstrasse {100 + n}, Berlin",
                dropoffLat=lat,
                dropoffLng=lng,
                deliveryWindowStart=f"{WEDNESDAY}T{10 + n // 2}:00:00+01:00",
                expectedBarcode=BARCODE if n == 0 else None,
            )
            created = ok(partner.post("/api/integrations/partner-a/orders", body), 201)
            orders[created["id"]] = {"ref": ref, "address": body["dropoffAddress"], **created}

        planned_and_committed(manager, org, WEDNESDAY, zone["id"])

        # ----- Wednesday: each courier works their route -----
        traveller.move_to(WEDNESDAY_MORNING)
        manager = management(base, "ops@example.com")
        routes = {
            driver_id: ok(courier.get("/api/courier/route"))
            for driver_id, courier in couriers.items()
        }
        assert all(route["date"] == WEDNESDAY for route in routes.values())
        assert sorted(len(route["stops"]) for route in routes.values()) == [3, 3]
        assert {stop["orderId"] for route in routes.values() for stop in route["stops"]} == set(
            orders
        )

        # The recipient sees the ETA window while the order is assigned.
        for route in routes.values():
            for stop in route["stops"]:
                token = orders[stop["orderId"]]["trackingToken"]
                tracking = ok(Api(base).get(f"/api/track/{token}"))
                assert tracking["status"] == "assigned"
                assert tracking["eta"] is not None and tracking["etaWindow"] is not None
                assert tracking["deliveredAt"] is None
                orders[stop["orderId"]]["driver"] = route["driver"]["id"]

        # One courier's position arrives: no recipient may see it.
        first_driver, second_driver = sorted(routes)
        ok(
            couriers[first_driver].post(
                "/api/courier/locations",
                {
                    "points": [
                        {
                            "lat": COURIER_POSITION[0],
                            "lng": COURIER_POSITION[1],
                            "at": datetime.now(UTC).isoformat(),
                        }
                    ]
                },
            ),
            202,
        )
        failing = routes[first_driver]["stops"][0]
        page = Api(base).get(f"/track/{orders[failing['orderId']]['trackingToken']}")
        assert page.status_code == 200
        assert_tracking_hides_the_courier(
            ok(Api(base).get(f"/api/track/{orders[failing['orderId']]['trackingToken']}")),
            page.text,
            orders[failing["orderId"]]["address"],
        )

        for driver_id, route in routes.items():
            courier = couriers[driver_id]
            for stop in route["stops"]:
                if stop["orderId"] == failing["orderId"]:
                    events = f"/api/courier/orders/{stop['orderId']}/events"
                    ok(courier.post(events, {"type": "picked_up"}))
                    ok(courier.post(events, {"type": "in_transit"}))
                    failed = ok(
                        courier.post(
                            events,
                            {
                                "type": "failed",
                                "failureReason": "recipient_absent",
                                "note": "Nobody home",
                            },
                        )
                    )
                    assert failed["status"] == "failed"
                else:
                    deliver(courier, stop)

        for order_id, order in orders.items():
            tracking = ok(Api(base).get(f"/api/track/{order['trackingToken']}"))
            page = Api(base).get(f"/track/{order['trackingToken']}")
            assert page.status_code == 200
            assert_tracking_hides_the_courier(tracking, page.text, order["address"])
            if order_id == failing["orderId"]:
                assert (tracking["status"], tracking["deliveredAt"], tracking["eta"]) == (
                    "failed",
                    None,
                    None,
                )
            else:
                assert tracking["status"] == "delivered"
                assert tracking["deliveredAt"] is not None
                assert (tracking["eta"], tracking["etaWindow"]) == (None, None)

        # ----- the failed order goes out again on Thursday -----
        reattempted = ok(
            manager.post(
                f"{manage}/orders/{failing['orderId']}/reattempt",
                {"deliveryWindowStart": f"{THURSDAY}T11:00:00+01:00"},
            )
        )
        assert (reattempted["status"], reattempted["attempt"]) == ("pending", 2)
        planned_and_committed(manager, org, THURSDAY, zone["id"])

        traveller.move_to(THURSDAY_MORNING)
        manager = management(base, "ops@example.com")
        thursday = {
            driver_id: ok(courier.get("/api/courier/route"))
            for driver_id, courier in couriers.items()
        }
        ((driver_id, route),) = [(d, r) for d, r in thursday.items() if r["stops"]]
        assert [stop["orderId"] for stop in route["stops"]] == [failing["orderId"]]
        orders[failing["orderId"]]["redriver"] = driver_id
        token = orders[failing["orderId"]]["trackingToken"]
        tracking = ok(Api(base).get(f"/api/track/{token}"))
        assert tracking["status"] == "assigned" and tracking["etaWindow"] is not None
        deliver(couriers[driver_id], route["stops"][0])
        tracking = ok(Api(base).get(f"/api/track/{token}"))
        assert tracking["status"] == "delivered" and tracking["deliveredAt"] is not None

        # ----- what the partner received -----
        expected_count = 6 * 5 + 4  # created, assigned, picked up, in transit, outcome; + 4 again
        received = receiver.wait_for(expected_count, timeout=60)
        time.sleep(1)  # nothing more may come (a duplicate, an eta_updated)
        received = list(receiver.requests)

    assert len(received) == expected_count, [r.json["event"] for r in received]
    secret = key["webhookSecret"].encode()
    for request in received:
        expected = "sha256=" + hmac.new(secret, request.body, hashlib.sha256).hexdigest()
        assert hmac.compare_digest(request.headers["X-Service-Signature"], expected)
        assert request.headers["X-Service-Event"] == request.json["event"]
        assert request.headers["X-Service-Delivery"] == request.json["id"]
    assert len({request.json["id"] for request in received}) == expected_count

    per_order = defaultdict(list)
    for request in received:
        per_order[request.json["payload"]["id"]].append(request.json)
    assert set(per_order) == set(orders)
    day = ["order.created", "order.assigned", "order.picked_up", "order.in_transit"]
    for order_id, events in per_order.items():
        names = [event["event"] for event in events]
        order = orders[order_id]
        assert all(event["payload"]["externalRef"] == order["ref"] for event in events)
        if order_id == failing["orderId"]:
            assert names == [*day, "order.failed", *day[1:], "order.delivered"]
            failed = events[4]["payload"]
            assert (failed["status"], failed["failureReason"]) == ("failed", "recipient_absent")
            assert "occurredAt" in failed
            assigned_again = events[5]["payload"]
            assert assigned_again["driver"]["id"] == order["redriver"]
            assert assigned_again["eta"].startswith(THURSDAY)
        else:
            assert names == [*day, "order.delivered"]
        assigned = events[1]["payload"]
        assert assigned["driver"]["id"] == order["driver"]
        assert {"id", "name", "phone"} <= set(assigned["driver"])
        assert assigned["eta"].startswith(WEDNESDAY)
        delivered = events[-1]["payload"]
        assert delivered["status"] == "delivered"
        assert "occurredAt" in delivered
        assert delivered["proof"]["recipientName"] == "Ada Lovelace"
        assert delivered["proof"]["signature"] is True
        assert delivered["proof"]["photos"] == 1
        assert delivered["proof"]["location"] is not None
        moments = [event["at"] for event in events]
        assert moments == sorted(moments)
