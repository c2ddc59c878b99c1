"""Slot holds under load (docs/slot-holds.md), for `make bench`: on slots of capacity 5, 40
clients at once (20 taking holds, 20 booking directly) against the running service, then every
hold booked with its `holdId` while 20 more clients book directly. The invariant: at most 5
places are ever taken, every winner keeps its place, and the counter equals the bookings.

Used by bench/run.py after its load; needs Django set up and the service listening at `base`.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from datetime import time

from django.utils import timezone

from slots.models import SlotBooking, SlotDay, SlotHold
from slots.occurrences import day_of_week
from slots.services import templates as template_services

CAPACITY = 5
CLIENTS = 40
#: one fresh slot per round, after the fixture's hot (18:00) and full (20:00) slots
STARTS = (time(21), time(22), time(23))


def _request(url: str, key: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(  # noqa: S310 - loopback http
        url, data=json.dumps(body).encode(), method="POST"
    )
    request.add_header("X-API-Key", key)
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def _all_at_once(requests: list[tuple[str, dict]], key: str) -> list[tuple[int, dict]]:
    """POSTs every (url, body) from its own thread, all released together by a barrier."""
    barrier = threading.Barrier(len(requests))

    def run(request):
        barrier.wait(timeout=60)
        return _request(request[0], key, request[1])

    with ThreadPoolExecutor(max_workers=len(requests)) as pool:
        return list(pool.map(run, requests))


def _order_body(template, day, ref: str, dropoff, **extra) -> dict:
    return {
        "externalRef": ref,
        "dropoffAddress": "1 Bench Street",
        "dropoffLat": dropoff[0],
        "dropoffLng": dropoff[1],
        "recipientName": "Bench Recipient",
        "recipientPhone": "+491701234567",
        "deliverySlotTemplateId": str(template.id),
        "deliverySlotDate": day.isoformat(),
        **extra,
    }


def race(*, base: str, fixture, dropoff, tag: str) -> tuple[list[str], str, int]:
    """Runs one round per slot of STARTS on the fixture's hot day; returns (problems, summary,
    orders the service answered 201 for)."""
    _hot, day = fixture.hot
    problems: list[str] = []
    held_total = booked_total = refused = orders = 0
    for round_number, start in enumerate(STARTS):
        template = template_services.slot_template_create(
            organization_id=fixture.organization.id,
            zone=fixture.zone,
            day_of_week=day_of_week(day),
            start_time=start,
            duration_minutes=30,
            cutoff_minutes=60,
            vehicle_capacity=[{"vehicleType": "van", "count": 1, "maxOrdersPerVehicle": CAPACITY}],
        )
        hold_body = {
            "deliverySlotTemplateId": str(template.id),
            "deliverySlotDate": day.isoformat(),
            "dropoffLat": dropoff[0],
            "dropoffLng": dropoff[1],
        }
        holds_url = f"{base}/api/integrations/erp/slot-holds"
        orders_url = f"{base}/api/integrations/erp/orders"
        prefix = f"HR-{tag}-{round_number}"
        requests = []
        for n in range(CLIENTS // 2):
            requests.append((holds_url, hold_body))
            requests.append((orders_url, _order_body(template, day, f"{prefix}-B{n}", dropoff)))
        results = _all_at_once(requests, fixture.erp_key)
        winners = [body for status, body in results if status == 201]
        others = [body.get("message") for status, body in results if status != 201]
        refused += len(others)
        hold_ids = [body["holdId"] for body in winners if "holdId" in body]
        held_total += len(hold_ids)
        booked_total += len(winners) - len(hold_ids)
        if len(winners) != CAPACITY:
            problems.append(f"{start:%H:%M}: {len(winners)} places taken of {CAPACITY}")
        if set(others) - {"Delivery slot is full"}:
            problems.append(f"{start:%H:%M}: unexpected answers {sorted(map(str, set(others)))}")
        # Every hold becomes its booking while 20 more clients book directly.
        requests = [
            (orders_url, _order_body(template, day, f"{prefix}-H{n}", dropoff, holdId=hold_id))
            for n, hold_id in enumerate(hold_ids)
        ]
        requests += [
            (orders_url, _order_body(template, day, f"{prefix}-L{n}", dropoff))
            for n in range(CLIENTS // 2)
        ]
        results = _all_at_once(requests, fixture.erp_key)
        converted = sum(1 for status, _ in results[: len(hold_ids)] if status == 201)
        late = sum(1 for status, _ in results[len(hold_ids) :] if status == 201)
        orders += len(winners) - len(hold_ids) + converted + late
        if converted != len(hold_ids):
            problems.append(f"{start:%H:%M}: {converted} of {len(hold_ids)} holds booked")
        if late:
            problems.append(f"{start:%H:%M}: {late} bookings made on a slot held full")
        bookings = SlotBooking.objects.filter(template=template, date=day, released_at=None)
        live_holds = SlotHold.objects.filter(
            template=template, date=day, used_at=None, expires_at__gt=timezone.now()
        )
        counter = SlotDay.objects.filter(template=template, date=day).first()
        taken = bookings.count() + live_holds.count()
        if taken > CAPACITY or bookings.count() != CAPACITY:
            problems.append(
                f"{start:%H:%M}: {bookings.count()} bookings and {live_holds.count()} live holds "
                f"for capacity {CAPACITY}"
            )
        if counter is None or counter.booked != bookings.count():
            problems.append(f"{start:%H:%M}: counter differs from its bookings")
    summary = (
        f"{len(STARTS)} slots of capacity {CAPACITY}, {CLIENTS} clients each: "
        f"{held_total} holds and {booked_total} direct bookings won, {refused} refused as full"
    )
    return problems, summary, orders
