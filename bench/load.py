"""What `make bench` (bench/run.py) and `make scale` (bench/scale.py) share (docs/performance.md):
the service as in production, the realistic data, the load's scenarios and the invariants checked
after it.

Import it after `harness.setup_django(env)`: the models need Django set up.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import time
import uuid
from datetime import time as day_time
from pathlib import Path

from django.db import connection

from bench import harness
from bench.slots import holds as holds_bench
from demo import reference_views
from integrations.models import IdempotencyKey, Order
from slots.models import SlotBooking, SlotDay, SlotTemplate
from slots.occurrences import day_of_week
from slots.services import templates as template_services
from tenants.models import ApiKey
from tenants.services import api_key_update
from webhooks.models import Delivery, DeliveryStatus, Event

ROOT = Path(__file__).resolve().parents[1]
LUA = Path(__file__).resolve().parent / "lua"


def _import_keeping_environment(module: str):
    """The per-feature benchmarks point os.environ at their own databases when imported; our
    settings are already loaded, and the environment is put back for the processes we start."""
    saved = dict(os.environ)
    try:
        return importlib.import_module(module)
    finally:
        os.environ.clear()
        os.environ.update(saved)


partner_bench = _import_keeping_environment("bench.partner.run")
slots_bench = _import_keeping_environment("bench.slots.run")
webhooks_bench = _import_keeping_environment("bench.webhooks.run")
zones_bench = _import_keeping_environment("bench.resolve_zone.bench")

# After the rounds, one run books a hot slot of this capacity until it is full: the 400
# `Delivery slot is full` answers are expected there (counted apart from errors), and the slot
# must then hold exactly this many bookings.
FULL_SLOT_CAPACITY = 20
READS, WRITES = 8, 16  # wrk connections: 16 concurrent clients on the write paths


# ----- the service -----


class BenchService(harness.Service):
    """gunicorn on each of `web_ports` (all with the same settings), `celery_workers` Celery
    workers (with the benchmark's no-op task) and one beat, logs of our own in var/<log>.log."""

    def __init__(
        self, env: dict, web_ports: list[int], celery_workers: int = 1, log: str = "bench-main"
    ) -> None:
        super().__init__(env=env, port=web_ports[0], log=log)
        self.web_ports = web_ports
        self.celery_workers = celery_workers
        self.web: list[subprocess.Popen] = []
        self.worker: list[subprocess.Popen] = []  # the Celery workers and beat

    def start(self) -> None:
        for port in self.web_ports:
            env, options = {**self.env, "BIND": f"127.0.0.1:{port}"}, []
            if len(self.web_ports) > 1:
                # Instances on one machine as if on several: each its own metrics directory
                # (gunicorn.conf.py clears it at start) and control socket.
                own = ROOT / "var" / f"{self.log}-{port}"
                env["PROMETHEUS_MULTIPROC_DIR"] = f"{own}-prometheus"
                options = ["--control-socket", f"{own}.ctl"]
            self.web.append(self._spawn(harness.gunicorn_command(*options), env))
        for number in range(1, self.celery_workers + 1):
            # docker-compose's worker, plus the no-op reference task of bench/webhooks.
            worker = harness.worker_command(
                "-I", "bench.webhooks.noop", "-n", f"{self.log}-{number}@%h"
            )
            self.worker.append(self._spawn(worker))
        self.worker.append(self._spawn(harness.beat_command(ROOT / "var" / f"{self.log}-beat")))
        for port in self.web_ports:
            self.port = port
            self._wait_ready()

    def stop(self) -> None:
        super().stop()
        self.web.clear()
        self.worker.clear()


# ----- data -----


class Data:
    """Several organizations, hundreds of zones, 30,000 existing orders (bench/* seeding)."""

    def __init__(self, webhook_url: str, zone_counts: tuple[int, ...] = (1, 1000)) -> None:
        started = time.monotonic()
        self.slots = slots_bench.Fixture()  # slot zone, 36 templates, 10,000 ERP orders
        self.full_slot = self._full_slot()
        print(f"  slots: {time.monotonic() - started:.0f} s", flush=True)
        self.partner_key, self.read_refs, self.window_starts = partner_bench.seed()
        print(f"  partner: {time.monotonic() - started:.0f} s", flush=True)
        self.zones = {n: zones_bench.organization_with_zones(n) for n in zone_counts}
        print(f"  zones: {time.monotonic() - started:.0f} s", flush=True)
        # Partner and ERP events of the load go to the local receiver.
        for organization_slug, key_platform in (
            ("bench-partner", "partner_a"),
            ("bench-slots", "erp"),
        ):
            api_key_update(
                api_key=ApiKey.objects.get(
                    organization__slug=organization_slug, platform=key_platform, is_active=True
                ),
                webhook_url=webhook_url,
            )  # fmt: skip
        with connection.cursor() as cursor:
            # The write references' table, before the load (concurrent first CREATEs race).
            cursor.execute(reference_views._CREATE_TABLE)
            cursor.execute("VACUUM ANALYZE")
        print(f"  data ready in {time.monotonic() - started:.0f} s", flush=True)

    def _full_slot(self) -> tuple[SlotTemplate, object]:
        """A small slot on the fixture's hot day, to be booked until full."""
        _template, day = self.slots.hot
        capacity = [{"vehicleType": "van", "count": 1, "maxOrdersPerVehicle": FULL_SLOT_CAPACITY}]
        template = template_services.slot_template_create(
            organization_id=self.slots.organization.id,
            zone=self.slots.zone,
            day_of_week=day_of_week(day),
            start_time=day_time(20),
            duration_minutes=60,
            cutoff_minutes=60,
            vehicle_capacity=capacity,
        )
        return template, day


# ----- scenarios -----


def resolve_zone_script(n: int, key: str) -> str:
    """bench/resolve_zone's wrk script (high, medium and low points in rotation) with the
    common JSON summary (bench/lua/common.lua)."""
    points = [
        point
        for name, values in zones_bench.scenario_points(n).items()
        if not name.startswith("404")
        for point in values
    ]
    bodies = ", ".join(
        '"' + f'{{\\"address\\": \\"{lat:.7f},{lng:.7f}\\"}}' + '"' for lat, lng in points
    )
    path = ROOT / "var" / f"bench-resolve-zone-{n}.lua"
    path.write_text(
        'dofile(os.getenv("BENCH_COMMON_LUA"))\n'
        + zones_bench.WRK_LUA % {"bodies": bodies, "key": key}
    )
    return str(path)


class Scenarios:
    def __init__(self, data: Data, seconds: int, base: str) -> None:
        self.data = data
        self.base = base
        self.seconds = seconds
        self.run_id = uuid.uuid4().hex[:6]
        self.round = 0
        fixture = data.slots
        self.availability_url = (
            f"{self.base}/api/public/delivery-slots/availability/bulk?zoneId={fixture.zone.id}"
            f"&startDate={fixture.first.isoformat()}&endDate={fixture.last.isoformat()}"
        )
        self.resolve_scripts = {
            n: resolve_zone_script(n, key) for n, (_, key) in data.zones.items()
        }
        self.booking_env = {
            "BENCH_LAT": str(slots_bench.DROPOFF[0]),
            "BENCH_LNG": str(slots_bench.DROPOFF[1]),
            "BENCH_BOOK_LUA": str(ROOT / "bench" / "slots" / "book.lua"),
            "BENCH_FULL_FILE": str(ROOT / "var" / "bench-slot-full.txt"),
        }
        self.last_full = 0
        # ERP bookings over every run (warm-up included): 2xx answers wrk counted, and how many
        # more may have completed after it stopped counting (connections + socket errors).
        self.erp_successes = 0
        self.erp_in_flight = 0

    # name -> (connections, emits webhook events)
    NAMES = {
        "DRF hello": (READS, False),
        "authenticated hello": (READS, False),
        "dbread": (READS, False),
        "dbwrite": (WRITES, False),
        "bookhot": (WRITES, False),
        "read partner order": (READS, False),
        "create partner order": (WRITES, True),
        "bulk availability 14 days": (READS, False),
        "resolve-zone 1,000 zones": (READS, False),
        "resolve-zone 1 zone": (READS, False),
        "ERP booking 50 slots": (WRITES, True),
        "ERP booking hot slot": (WRITES, True),
    }
    FULL = "ERP booking hot slot until full"

    def run(self, name: str, *, seconds: int | None = None) -> harness.Measurement:
        connections, _ = self.NAMES.get(name, (WRITES, True))
        common = {"seconds": seconds or self.seconds, "connections": connections}
        data = self.data
        tag = f"{self.run_id}-{self.round}-{uuid.uuid4().hex[:4]}"
        if name == "DRF hello":
            return harness.wrk(f"{self.base}/api/bench/hello", **common)
        if name == "authenticated hello":
            return harness.wrk(
                f"{self.base}/api/bench/hello-auth", api_key=data.partner_key, **common
            )
        if name == "dbread":
            return harness.wrk(f"{self.base}/api/bench/dbread", **common)
        if name == "dbwrite":
            return harness.wrk(f"{self.base}/api/bench/dbwrite", method="POST", body="{}", **common)
        if name == "bookhot":
            return harness.wrk(f"{self.base}/api/bench/bookhot", method="POST", body="{}", **common)
        orders_url = f"{self.base}/api/integrations/partner-a/orders"
        if name == "read partner order":
            return harness.wrk(
                orders_url,
                api_key=data.partner_key,
                script=str(ROOT / "bench" / "partner" / "read.lua"),
                extra_env={"BENCH_REFS": ",".join(data.read_refs)},
                **common,
            )
        if name == "create partner order":
            # A unique externalRef and Idempotency-Key per request, booking a delivery window.
            return harness.wrk(
                orders_url,
                api_key=data.partner_key,
                script=str(ROOT / "bench" / "partner" / "create.lua"),
                extra_env={"BENCH_RUN": tag, "BENCH_WINDOWS": ",".join(data.window_starts)},
                **common,
            )
        if name == "bulk availability 14 days":
            return harness.wrk(self.availability_url, api_key=data.slots.standard_key, **common)
        if name.startswith("resolve-zone"):
            n = 1000 if "1,000" in name else 1
            _, key = data.zones[n]
            return harness.wrk(
                f"{self.base}/api/promises/resolve-zone",
                api_key=key,
                script=self.resolve_scripts[n],
                **common,
            )
        fixture = data.slots
        if name == "ERP booking 50 slots":
            slots = fixture.slots[:50]
        else:
            # bench/slots' hot slot (room for all), or the small one booked until full.
            slots = [fixture.hot if name == "ERP booking hot slot" else data.full_slot]
        result = harness.wrk(
            f"{self.base}/api/integrations/erp/orders",
            api_key=fixture.erp_key,
            script=str(LUA / "book_counted.lua"),
            extra_env={
                **self.booking_env,
                "BENCH_SLOTS": fixture.slots_env(slots),
                "BENCH_REF_PREFIX": f"E-{tag}",
            },
            **common,
        )
        self.last_full = slot_full_count()
        if self.last_full and name != self.FULL:
            # Their slots have room for every booking: such an answer is a defect to look into.
            print(f"    {name}: {self.last_full} answers `Delivery slot is full`", flush=True)
        self.erp_successes += result.requests - result.non2xx - result.socket_errors
        self.erp_in_flight += connections + result.socket_errors
        return result


def slot_full_count() -> int:
    """The 400 `Delivery slot is full` answers of the last booking run (book_counted.lua); any
    other non-2xx answer is printed with a sample body."""
    path = ROOT / "var" / "bench-slot-full.txt"
    try:
        full, *others = path.read_text().splitlines()
    finally:
        path.unlink(missing_ok=True)
    for line in others:
        print(f"    unexpected answers (status, count, first body): {line}", flush=True)
    return int(full or 0)


def outbox_drain(timeout: float) -> int:
    """Waits until no webhook delivery is pending (bounded); returns how many still are."""
    deadline = time.monotonic() + timeout
    pending = Delivery.objects.filter(status=DeliveryStatus.PENDING)
    while (left := pending.count()) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


# ----- invariants -----


def invariants(
    data: Data,
    scenarios: Scenarios,
    receivers,
    *,
    full_refusals: int,
    load_started,
    hold_problems: list[str],
) -> list[tuple[str, str]]:
    """(check, problem or "ok") after the load."""
    return [
        (name, "ok" if not problems else "; ".join(problems[:5]))
        for name, problems in (
            _slot_problems(data, scenarios, full_refusals),
            (
                f"slot holds: at most the capacity ({holds_bench.CAPACITY}) taken by "
                f"{holds_bench.CLIENTS} concurrent holders and bookers, every hold booked",
                hold_problems,
            ),
            _partner_problems(),
            _webhook_problems(receivers, load_started),
        )
    ]


def _slot_problems(data: Data, scenarios: Scenarios, full_refusals: int):
    # Every counter against its live bookings and its template's capacity; wrk does not count
    # the requests still in flight when it stops (the server completes them), so the orders
    # made must lie between its 2xx count and that plus what was in flight.
    problems = slots_bench.invariants(data.slots, scenarios.erp_successes, scenarios.erp_in_flight)
    template, day = data.full_slot
    counter = SlotDay.objects.filter(template=template, date=day).first()
    held = SlotBooking.objects.filter(template=template, date=day, released_at=None).count()
    booked = counter.booked if counter else 0
    # The run books far more than the capacity: it must have been refused as full, and hold
    # exactly its capacity.
    if not full_refusals:
        problems.append("the slot booked until full never answered `Delivery slot is full`")
    if booked != held or held != FULL_SLOT_CAPACITY:
        problems.append(
            f"the slot booked until full holds {held} bookings (counter {booked}, "
            f"{full_refusals} refused as full), capacity {FULL_SLOT_CAPACITY}"
        )
    return "no slot over capacity (counters = live bookings <= capacity)", problems


def _partner_problems():
    problems = partner_bench.check_invariants()
    # Each request's Idempotency-Key is its externalRef (bench/partner/create.lua).
    keys = set(IdempotencyKey.objects.filter(key__startswith="B-").values_list("key", flat=True))
    refs = list(
        Order.objects.filter(external_ref__startswith="B-").values_list("external_ref", flat=True)
    )
    if not refs:
        problems.append("no partner order was created")
    if len(refs) != len(set(refs)) or set(refs) != keys:
        problems.append(
            f"{len(refs)} orders ({len(set(refs))} refs) for {len(keys)} Idempotency-Keys"
        )
    return "no delivery window over capacity; one order per Idempotency-Key", problems


def _webhook_problems(receivers, load_started):
    left = outbox_drain(timeout=120)
    problems = []
    if left:
        problems.append(f"{left} deliveries still pending after 120 s")
    # The load's deliveries and events: a database with history (bench/history.py) holds
    # ended ones of its own, made before the load.
    deliveries = Delivery.objects.filter(created_at__gte=load_started)
    not_delivered = deliveries.exclude(status=DeliveryStatus.DELIVERED).count()
    if not_delivered:
        problems.append(f"{not_delivered} deliveries not delivered")
    events = Event.objects.filter(created_at__gte=load_started, deliveries__isnull=False)
    expected = set(events.values_list("event_id", flat=True))
    # An hour-bucketed id names a new event (a newer snapshot) once the previous one was claimed
    # (contract "Webhooks"): those requests are events of their own, not repeats.
    snapshots = events.distinct().count() - len(expected)
    if not expected:
        problems.append("no webhook event had a delivery")
    # Every event of the load goes to a receiver (the load's keys all have a webhook URL).
    without_delivery = Event.objects.filter(
        created_at__gte=load_started, deliveries__isnull=True
    ).count()
    if without_delivery:
        problems.append(f"{without_delivery} events of the load have no delivery")
    received: set[str] = set()
    requests = 0
    for receiver in receivers:
        received |= set(receiver.arrivals())
        requests += receiver.count()["requests"]
    missing = expected - received
    unknown = received - expected
    if missing:
        problems.append(f"{len(missing)} events never received")
    if unknown:
        problems.append(f"{len(unknown)} received ids match no event")
    name = (
        f"every webhook event received once deduplicated by id ({len(expected)} events, "
        f"{snapshots} newer snapshots under an hour-bucketed id, "
        f"{requests - len(received) - snapshots} duplicate requests)"
    )
    return name, problems


def after_the_load(
    data: Data, scenarios: Scenarios, receivers, load_started
) -> tuple[list[tuple[str, str]], tuple[harness.Measurement, int]]:
    """The hot slot booked until full (its expected 400s), slot holds racing bookings, then the
    invariants: (checks, (the until-full run, its `Delivery slot is full` answers))."""
    full = (scenarios.run(Scenarios.FULL, seconds=4), scenarios.last_full)
    print(f"  {Scenarios.FULL}: {full[0]}, {full[1]} slot full", flush=True)
    # Slot holds racing bookings (bench/slots/holds.py); its orders join the ERP count.
    hold_problems, hold_summary, hold_orders = holds_bench.race(
        base=scenarios.base, fixture=data.slots, dropoff=slots_bench.DROPOFF, tag=scenarios.run_id
    )
    scenarios.erp_successes += hold_orders
    print(f"  slot holds: {hold_summary}", flush=True)
    outbox_drain(timeout=60)
    checks = invariants(
        data,
        scenarios,
        receivers,
        full_refusals=full[1],
        load_started=load_started,
        hold_problems=hold_problems,
    )
    return checks, full


def checks_text(checks: list[tuple[str, str]]) -> str:
    """The invariants as a Markdown list of PASS/FAIL lines."""
    return "\n".join(
        f"- {'PASS' if problem == 'ok' else 'FAIL'}: {name}"
        + ("" if problem == "ok" else f": {problem}")
        for name, problem in checks
    )
