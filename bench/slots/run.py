"""Slot benchmarks (docs/performance.md): availability and ERP booking under load.

The service runs as in production (gunicorn `-c gunicorn.conf.py` on 127.0.0.1:8012, sync
workers, persistent connections, Celery worker and beat, `RATELIMIT_ENABLE=false`,
`BENCH_ENDPOINTS=true`) on a fresh database holding:

- one slot zone (Europe/Berlin) with 5 templates on each day of the week;
- 10,000 existing ERP orders booked on those slots over the next 14 days;
- one extra "hot" template of very large capacity.

Scenarios, each against its reference endpoint in the same run, interleaved, `--rounds` times
(medians reported), wrk pinned to core 1 with 16 connections:

| scenario                                                   | reference           |
|------------------------------------------------------------|---------------------|
| GET bulk availability, 14 days (70 slots, 10,000 orders)   | GET /api/bench/dbread  |
| POST ERP order, all on one hot slot                        | POST /api/bench/bookhot |
| POST ERP order, spread over 50 distinct slots              | POST /api/bench/dbwrite |

Afterwards the invariants are checked: no slot over capacity, every counter equal to its
active bookings, one order per 2xx booking (allowing for the requests wrk stopped counting
while they were in flight).

    .venv/bin/python bench/slots/run.py [--rounds 3] [--seconds 8] [--connections 16]
"""

from __future__ import annotations

import argparse
import os
import sys
import time as wall_clock
import uuid
from datetime import date, time, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench import harness  # noqa: E402 - needs the repository root on the path

DATABASE = "delivery_bench_slots"
PORT = 8012
REDIS_URL = os.environ.get("BENCH_SLOTS_REDIS_URL", "redis://127.0.0.1:6379/12")
ENV = harness.bench_env(DATABASE, PORT, REDIS_URL=REDIS_URL)
os.environ.update(ENV)
os.environ["DJANGO_SETTINGS_MODULE"] = "delivery.settings"

import django  # noqa: E402 - configured from the benchmark's environment above

django.setup()

from django.db import connection, transaction  # noqa: E402
from django.db.models import Count  # noqa: E402
from django.utils import timezone  # noqa: E402

from integrations.models import Order, OrderFamily, OrderStatus, OrderStatusEvent  # noqa: E402
from slots.models import SlotBooking, SlotDay, SlotTemplate  # noqa: E402
from slots.occurrences import day_of_week, occurrence, zone_tz  # noqa: E402
from slots.services import templates as template_services  # noqa: E402
from tenants.services import api_key_create, organization_create  # noqa: E402
from zones import services as zone_services  # noqa: E402

LUA_BOOK = Path(__file__).with_name("book.lua")
BASE = f"http://127.0.0.1:{PORT}"
EXISTING_ORDERS = 10_000
DAYS = 14
STARTS = (time(8), time(10), time(12), time(14), time(16))  # 5 templates a day, 2 hours each
ZONE_GEODATA = {
    "type": "Polygon",
    "coordinates": [
        [[13.37, 52.50], [13.43, 52.50], [13.43, 52.54], [13.37, 52.54], [13.37, 52.50]]
    ],
}
DROPOFF = (52.52, 13.40)
BIG = [{"vehicleType": "van", "count": 1000, "maxOrdersPerVehicle": 1000}]


class Fixture:
    """The benchmark's data, created in the fresh database."""

    def __init__(self) -> None:
        self.organization = organization_create(name="Bench Slots", slug="bench-slots")
        self.erp_key = api_key_create(
            organization_id=self.organization.id, name="bench erp", platform="erp"
        ).value
        self.standard_key = api_key_create(
            organization_id=self.organization.id, name="bench std", platform="standard"
        ).value
        template_services.slot_policy_update(
            organization_id=self.organization.id, default_pickup_address="Bench depot"
        )
        self.zone = zone_services.zone_create(
            organization_id=self.organization.id,
            name="Bench zone",
            geodata=ZONE_GEODATA,
            purpose="slot",
            timezone_name="Europe/Berlin",
        )
        tz = zone_tz(self.zone.timezone)
        self.first = timezone.now().astimezone(tz).date() + timedelta(days=1)
        self.last = self.first + timedelta(days=DAYS - 1)
        self.templates = [
            template_services.slot_template_create(
                organization_id=self.organization.id,
                zone=self.zone,
                day_of_week=weekday,
                start_time=start,
                duration_minutes=120,
                cutoff_minutes=60,
                vehicle_capacity=BIG,
            )
            for weekday in range(7)
            for start in STARTS
        ]
        hot_day = self.first + timedelta(days=7)
        self.hot = (
            template_services.slot_template_create(
                organization_id=self.organization.id,
                zone=self.zone,
                day_of_week=day_of_week(hot_day),
                start_time=time(18),
                duration_minutes=60,
                cutoff_minutes=60,
                vehicle_capacity=BIG,
            ),
            hot_day,
        )
        self.slots = [
            (template, day)
            for offset in range(DAYS)
            for day in [self.first + timedelta(days=offset)]
            for template in self.templates
            if template.day_of_week == day_of_week(day)
        ]
        #: orders made before the load (bench/history.py adds its year of history)
        self.existing_orders = EXISTING_ORDERS
        self._existing_orders(tz)

    def _existing_orders(self, tz) -> None:
        """10,000 ERP orders spread over the 70 slots of the 14 days, bulk-inserted with their
        history rows, bookings and counters (what 10,000 bookings would have left)."""
        now = timezone.now()
        orders, bookings, counts = [], [], {}
        for n in range(EXISTING_ORDERS):
            template, day = self.slots[n % len(self.slots)]
            slot = occurrence(
                day=day,
                start_time=template.start_time,
                duration_minutes=template.duration_minutes,
                cutoff_minutes=template.cutoff_minutes,
                tz=tz,
            )
            order = Order(
                organization=self.organization,
                family=OrderFamily.ERP,
                platform="erp",
                external_ref=f"EXISTING-{n}",
                dropoff_address="1 Bench Street",
                dropoff_lat=DROPOFF[0],
                dropoff_lng=DROPOFF[1],
                recipient_name="Existing",
                recipient_phone="+491701234567",
                zone=self.zone,
                delivery_window_start=slot.window_start,
                delivery_window_end=slot.window_end,
                created_at=now,
                updated_at=now,
            )
            orders.append(order)
            bookings.append(
                SlotBooking(
                    organization=self.organization, order=order, template=template, date=day
                )
            )
            counts[(template.id, day)] = counts.get((template.id, day), 0) + 1
        capacity_of = {template.id: template.capacity for template in self.templates}
        with transaction.atomic():
            Order.objects.bulk_create(orders, batch_size=2000)
            OrderStatusEvent.objects.bulk_create(
                [OrderStatusEvent(order=o, to_status=OrderStatus.PENDING, at=now) for o in orders],
                batch_size=2000,
            )
            SlotBooking.objects.bulk_create(bookings, batch_size=2000)
            SlotDay.objects.bulk_create(
                [
                    # As the service leaves a counter: `capacity` is the template's.
                    SlotDay(
                        template_id=template_id,
                        date=day,
                        booked=booked,
                        capacity=capacity_of[template_id],
                    )
                    for (template_id, day), booked in counts.items()
                ]
            )
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")

    def slots_env(self, slots: list[tuple[SlotTemplate, date]]) -> str:
        return ",".join(f"{template.id}|{day.isoformat()}" for template, day in slots)


def invariants(fixture: Fixture, successes: int, in_flight: int) -> list[str]:
    """Problems found after the load (an empty list when all is well). `successes` are the 2xx
    bookings wrk counted; up to `in_flight` more may have completed on the server after wrk
    stopped counting (its connections times its runs, plus its socket errors)."""
    problems = []
    active = {
        (row["template_id"], row["date"]): row["n"]
        for row in SlotBooking.objects.filter(released_at=None)
        .values("template_id", "date")
        .annotate(n=Count("id"))
        .order_by()
    }
    for counter in SlotDay.objects.select_related("template"):
        if active.get((counter.template_id, counter.date), 0) != counter.booked:
            problems.append(f"counter {counter} differs from its active bookings")
        if counter.booked > counter.template.capacity:
            problems.append(f"{counter.template_id} {counter.date} over capacity")
    made = Order.objects.filter(organization=fixture.organization).count() - fixture.existing_orders
    if successes == 0:
        problems.append("no booking succeeded")
    if not successes <= made <= successes + in_flight:
        problems.append(
            f"{made} orders made for {successes} successful bookings (+ up to {in_flight} in "
            "flight)"
        )
    without_booking = Order.objects.filter(
        organization=fixture.organization, slot_booking__isnull=True
    ).count()
    if without_booking:
        problems.append(f"{without_booking} orders without a slot booking")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--workers", default=os.environ.get("WEB_CONCURRENCY", "4"))
    args = parser.parse_args()

    (ROOT / "var").mkdir(exist_ok=True)
    harness.fresh_database(ENV, DATABASE)
    connection.close()
    started = wall_clock.monotonic()
    fixture = Fixture()
    print(f"data ready in {wall_clock.monotonic() - started:.0f} s", flush=True)
    connection.close()

    service = harness.Service(env={**ENV, "WEB_CONCURRENCY": args.workers}, port=PORT)
    service.start()
    run_id = uuid.uuid4().hex[:6]
    availability_url = (
        f"{BASE}/api/public/delivery-slots/availability/bulk?zoneId={fixture.zone.id}"
        f"&startDate={fixture.first.isoformat()}&endDate={fixture.last.isoformat()}"
    )
    fifty = fixture.slots[:50]
    booking_env = {"BENCH_LAT": str(DROPOFF[0]), "BENCH_LNG": str(DROPOFF[1])}
    common = {"seconds": args.seconds, "connections": args.connections}
    results: dict[str, list[harness.Measurement]] = {}
    successes = in_flight = 0

    def measure(name: str, url: str, **kwargs) -> harness.Measurement:
        result = harness.wrk(url, **common, **kwargs)
        results.setdefault(name, []).append(result)
        print(
            f"  {name:<24} {result.requests_per_second:8.0f} req/s  p50 {result.p50_ms:6.1f} ms"
            f"  p99 {result.p99_ms:6.1f} ms  non-2xx {result.non2xx + result.socket_errors}",
            flush=True,
        )
        return result

    def measure_booking(name: str, slots: list, ref_prefix: str) -> harness.Measurement:
        """ERP orders booked on `slots` in turn (book.lua), their refs starting `ref_prefix`."""
        return measure(
            name,
            f"{BASE}/api/integrations/erp/orders",
            api_key=fixture.erp_key,
            script=str(LUA_BOOK),
            extra_env={
                **booking_env,
                "BENCH_SLOTS": fixture.slots_env(slots),
                "BENCH_REF_PREFIX": ref_prefix,
            },
        )

    try:
        # Warm every worker's connections and caches before measuring.
        harness.wrk(availability_url, api_key=fixture.standard_key, seconds=2, connections=8)
        for round_number in range(1, args.rounds + 1):
            print(f"round {round_number}", flush=True)
            measure("dbread", f"{BASE}/api/bench/dbread")
            measure("availability 14 days", availability_url, api_key=fixture.standard_key)
            measure("bookhot", f"{BASE}/api/bench/bookhot", method="POST", body="{}")
            hot = measure_booking(
                "ERP booking, hot slot", [fixture.hot], f"HOT-{run_id}-{round_number}"
            )
            measure("dbwrite", f"{BASE}/api/bench/dbwrite", method="POST", body="{}")
            spread = measure_booking(
                "ERP booking, 50 slots", fifty, f"SPREAD-{run_id}-{round_number}"
            )
            for booking in (hot, spread):
                successes += booking.requests - booking.non2xx - booking.socket_errors
                in_flight += args.connections + booking.socket_errors
    finally:
        service.stop()

    medians = {name: harness.median_of(runs) for name, runs in results.items()}

    def ratio(name: str, reference: str) -> float:
        return medians[name].requests_per_second / medians[reference].requests_per_second

    print()
    print(
        harness.table(
            [
                ("dbread (reference)", medians["dbread"], "-", None, ""),
                (
                    "bulk availability, 14 days, 5 templates/day, 10,000 orders",
                    medians["availability 14 days"],
                    "dbread",
                    ratio("availability 14 days", "dbread"),
                    ">= 0.5",
                ),
                ("bookhot (reference)", medians["bookhot"], "-", None, ""),
                (
                    "ERP booking, one hot slot",
                    medians["ERP booking, hot slot"],
                    "bookhot",
                    ratio("ERP booking, hot slot", "bookhot"),
                    ">= 0.7",
                ),
                ("dbwrite (reference)", medians["dbwrite"], "-", None, ""),
                (
                    "ERP booking, 50 slots",
                    medians["ERP booking, 50 slots"],
                    "dbwrite",
                    ratio("ERP booking, 50 slots", "dbwrite"),
                    ">= 0.5",
                ),
            ]
        )
    )
    print(
        f"\n{args.rounds} rounds of {args.seconds} s, {args.connections} connections, "
        f"{args.workers} gunicorn workers; medians."
    )
    problems = invariants(fixture, successes, in_flight)
    print("invariants:", "ok" if not problems else "; ".join(problems[:10]))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
