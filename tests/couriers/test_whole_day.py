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
from dataclasses import dataclass, field
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

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
#: a courier's position, which no recipient may see: far enough out (about 40 km) to move the
#: ETAs by more than 10 minutes, so order.eta_updated is recorded (and, not asked for, never sent)
COURIER_POSITION = (52.85123, 13.15456)


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
    """Neither the tracking answer nor the page shows the courier's position, the address, the
    phone, nor anyone's coordinates."""
    text = json.dumps(tracking)
    phone = builders.partner_order()["recipientPhone"]
    for secret in (address, phone, str(COURIER_POSITION[0]), str(COURIER_POSITION[1])):
        assert secret not in text
        assert secret not in page
    assert set(tracking) >= {"eta", "etaWindow", "deliveredAt", "stopsBefore"}
    assert not {"lat", "lng", "location", "position", "address", "dropoffAddress"} & set(tracking)


BERLIN = ZoneInfo("Europe/Berlin")


def parse(moment: str) -> datetime:
    return datetime.fromisoformat(moment.replace("Z", "+00:00"))


def hh_mm(moment: str) -> str:
    return parse(moment).astimezone(BERLIN).strftime("%H:%M")


@dataclass
class Day:
    """What the test set up over HTTP, and what it learnt on the way."""

    base: str
    org: str
    zone_id: str = ""
    couriers: dict = field(default_factory=dict)
    key: dict = field(default_factory=dict)
    #: order id -> the partner's create answer, with `ref`, `address`, `driver` (Wednesday's)
    orders: dict = field(default_factory=dict)

    @property
    def manage(self) -> str:
        return f"/api/manage/organizations/{self.org}"

    def tracking(self, order_id: str) -> tuple[dict, str]:
        """The tracking API's answer and the tracking page of an order, checked to hide the
        courier and the address."""
        token = self.orders[order_id]["trackingToken"]
        answer = ok(Api(self.base).get(f"/api/track/{token}"))
        page = Api(self.base).get(f"/track/{token}")
        assert page.status_code == 200
        assert_tracking_hides_the_courier(answer, page.text, self.orders[order_id]["address"])
        return answer, page.text


def set_up(day: Day, manager: Api, webhook_url: str) -> None:
    """A zone with a depot and partner windows, a policy asking for a signature, two drivers
    with access tokens, a partner key sending every event to the receiver, six orders of
    tomorrow in three windows."""
    zone = ok(
        manager.post(
            f"{day.manage}/zones",
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
    day.zone_id = zone["id"]
    ok(manager.put(f"{day.manage}/dispatch-policy", {"requireSignature": True}))
    for name in ("Ana Costa", "Bo Lindqvist"):
        driver = ok(
            manager.post(
                f"{day.manage}/drivers",
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
        issued = ok(manager.post(f"{day.manage}/drivers/{driver['id']}/access-token"), 201)
        day.couriers[driver["id"]] = Api(day.base, Authorization=f"Bearer {issued['token']}")
    day.key = ok(
        manager.post(
            f"{day.manage}/api-keys",
            {"name": "Partner A", "platform": "partner_a", "webhookUrl": webhook_url},
        ),
        201,
    )
    assert day.key["webhookEvents"] is None
    partner = Api(day.base, **{"X-API-Key": day.key["apiKey"]})
    for n in range(6):
        lat, lng = builders.offset(*DEPOT, north_m=300 * (n - 2), east_m=250 * (n % 3 - 1))
        body = builders.partner_order(
            externalRef=f"PO-{n + 1}",
            dropoffAddress=f"Torstrasse {100 + n}, Berlin",
            dropoffLat=lat,
            dropoffLng=lng,
            deliveryWindowStart=f"{WEDNESDAY}T{10 + n // 2}:00:00+01:00",
            expectedBarcode=BARCODE if n == 0 else None,
        )
        created = ok(partner.post("/api/integrations/partner-a/orders", body), 201)
        day.orders[created["id"]] = {
            **created,
            "ref": body["externalRef"],
            "address": body["dropoffAddress"],
        }


def fail(courier: Api, stop: dict) -> None:
    """Picked up, on the way, and nobody at the door."""
    events = f"/api/courier/orders/{stop['orderId']}/events"
    ok(courier.post(events, {"type": "picked_up"}))
    ok(courier.post(events, {"type": "in_transit"}))
    body = {"type": "failed", "failureReason": "recipient_absent", "note": "Nobody home"}
    assert ok(courier.post(events, body))["status"] == "failed"


def work_wednesday(day: Day) -> str:
    """Each courier works their route; the first stop of one of them fails. Answers the id of
    the failed order."""
    routes = {
        driver_id: ok(courier.get("/api/courier/route"))
        for driver_id, courier in day.couriers.items()
    }
    assert all(route["date"] == WEDNESDAY for route in routes.values())
    assert sorted(len(route["stops"]) for route in routes.values()) == [3, 3]
    stops = [stop for route in routes.values() for stop in route["stops"]]
    assert {stop["orderId"] for stop in stops} == set(day.orders)
    for driver_id, route in routes.items():
        for stop in route["stops"]:
            day.orders[stop["orderId"]]["driver"] = driver_id

    # The recipient sees the ETA window while the order is assigned.
    for stop in stops:
        tracking, page = day.tracking(stop["orderId"])
        assert tracking["status"] == "assigned"
        assert tracking["eta"] is not None
        window = tracking["etaWindow"]
        assert f"{hh_mm(window['from'])}\u2013{hh_mm(window['to'])}" in page
        assert tracking["deliveredAt"] is None

    # A courier's position arrives: no recipient sees it (day.tracking checks every read).
    first_driver = sorted(routes)[0]
    point = {"lat": COURIER_POSITION[0], "lng": COURIER_POSITION[1]}
    batch = {"points": [{**point, "at": datetime.now(UTC).isoformat()}]}
    assert (
        ok(day.couriers[first_driver].post("/api/courier/locations", batch), 202)["etasUpdated"]
        == 3
    )

    for stop in ok(day.couriers[first_driver].get("/api/courier/route"))["stops"]:
        assert parse(stop["windowStart"]) <= parse(stop["eta"]) <= parse(stop["windowEnd"]), stop

    failing = routes[first_driver]["stops"][0]["orderId"]
    for driver_id, route in routes.items():
        for stop in route["stops"]:
            if stop["orderId"] == failing:
                fail(day.couriers[driver_id], stop)
            else:
                deliver(day.couriers[driver_id], stop)

    for order_id in day.orders:
        tracking, page = day.tracking(order_id)
        assert (tracking["eta"], tracking["etaWindow"]) == (None, None)
        if order_id == failing:
            assert (tracking["status"], tracking["deliveredAt"]) == ("failed", None)
        else:
            assert tracking["status"] == "delivered"
            assert hh_mm(tracking["deliveredAt"]) in page
    return failing


def work_thursday(day: Day, failing: str) -> str:
    """The re-attempted order is on one route of Thursday alone, and delivered. Answers its
    driver."""
    routes = {
        driver_id: ok(courier.get("/api/courier/route"))
        for driver_id, courier in day.couriers.items()
    }
    ((driver_id, route),) = [(d, r) for d, r in routes.items() if r["stops"]]
    assert route["date"] == THURSDAY
    assert [stop["orderId"] for stop in route["stops"]] == [failing]
    tracking, page = day.tracking(failing)
    assert tracking["status"] == "assigned"
    window = tracking["etaWindow"]
    assert f"{hh_mm(window['from'])}\u2013{hh_mm(window['to'])}" in page
    deliver(day.couriers[driver_id], route["stops"][0])
    tracking, page = day.tracking(failing)
    assert tracking["status"] == "delivered"
    assert hh_mm(tracking["deliveredAt"]) in page
    return driver_id


def assert_signed(received: list, secret: str) -> None:
    """Every request verifies with the key's webhook secret (docs/webhooks.md), and names its
    event and id in the headers."""
    for request in received:
        expected = "sha256=" + hmac.new(secret.encode(), request.body, hashlib.sha256).hexdigest()
        assert hmac.compare_digest(request.headers["X-Service-Signature"], expected)
        assert request.headers["X-Service-Event"] == request.json["event"]
        assert request.headers["X-Service-Delivery"] == request.json["id"]


def assert_delivered_with_proof(event: dict) -> None:
    payload = event["payload"]
    assert (event["event"], payload["status"]) == ("order.delivered", "delivered")
    assert "occurredAt" in payload
    proof = payload["proof"]
    assert (proof["recipientName"], proof["signature"], proof["photos"]) == (
        "Ada Lovelace",
        True,
        1,
    )
    assert proof["location"] is not None


def test_a_whole_day_over_http(live_server, celery_worker, receiver, settings, organization):  # noqa: F811
    settings.DISPATCH_SOLVER_TIME_LIMIT_SECONDS = 1.0
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True  # the receiver is on loopback
    # docs/webhooks.md "Oldest first": with one delivery in flight per destination, a
    # destination receives its events strictly in the order they happened (with more,
    # neighbours may arrive swapped), so the arrival order below is checked as it comes.
    settings.WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION = 1
    builders.admin(organization, "ops@example.com")
    day = Day(base=live_server.url, org=str(organization.id))

    with time_machine.travel(TUESDAY_AFTERNOON, tick=True) as traveller:
        set_up(day, management(day.base, "ops@example.com"), receiver.url)
        planned_and_committed(
            management(day.base, "ops@example.com"), day.org, WEDNESDAY, day.zone_id
        )

        # The night passes only once the evening's news went out (created and assigned): a
        # clock jumped over deliveries still on the wire would expire their in-flight leases.
        receiver.wait_for(6 * 2, timeout=60)
        traveller.move_to(WEDNESDAY_MORNING)
        failing = work_wednesday(day)
        manager = management(day.base, "ops@example.com")
        reattempted = ok(
            manager.post(
                f"{day.manage}/orders/{failing}/reattempt",
                {"deliveryWindowStart": f"{THURSDAY}T11:00:00+01:00"},
            )
        )
        assert (reattempted["status"], reattempted["attempt"]) == ("pending", 2)
        planned_and_committed(manager, day.org, THURSDAY, day.zone_id)

        receiver.wait_for(6 * 5 + 1, timeout=60)  # Wednesday's, and the re-assignment
        traveller.move_to(THURSDAY_MORNING)
        redriver = work_thursday(day, failing)

        # created, assigned, picked up, in transit and the outcome of six orders; then the
        # re-attempt's assigned, picked up, in transit, delivered
        expected_count = 6 * 5 + 4
        receiver.wait_for(expected_count, timeout=60)
        time.sleep(1)  # nothing more may come: no duplicate, no order.eta_updated
        received = list(receiver.requests)

    assert builders.events_named("order.eta_updated", organization)
    assert len(received) == expected_count, [
        (r.json["payload"]["externalRef"], r.json["event"], r.json["id"], r.at) for r in received
    ]
    assert_signed(received, day.key["webhookSecret"])
    assert len({request.json["id"] for request in received}) == expected_count

    per_order = defaultdict(list)
    for request in received:
        per_order[request.json["payload"]["id"]].append(request.json)
    assert set(per_order) == set(day.orders)
    way = ["order.created", "order.assigned", "order.picked_up", "order.in_transit"]
    for order_id, events in per_order.items():
        order = day.orders[order_id]
        assert all(event["payload"]["externalRef"] == order["ref"] for event in events)
        assert [event["at"] for event in events] == sorted(event["at"] for event in events)
        assigned = events[1]["payload"]
        assert assigned["driver"]["id"] == order["driver"]
        assert {"id", "name", "phone"} <= set(assigned["driver"])
        assert assigned["eta"].startswith(WEDNESDAY)
        assert_delivered_with_proof(events[-1])
        if order_id != failing:
            assert [event["event"] for event in events] == [*way, "order.delivered"]
            continue
        assert [event["event"] for event in events] == [
            *way,
            "order.failed",
            *way[1:],
            "order.delivered",
        ]
        failed = events[4]["payload"]
        assert (failed["status"], failed["failureReason"]) == ("failed", "recipient_absent")
        assert "occurredAt" in failed
        assert events[5]["payload"]["driver"]["id"] == redriver
        assert events[5]["payload"]["eta"].startswith(THURSDAY)
