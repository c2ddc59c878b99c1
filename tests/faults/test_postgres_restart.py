"""Fault c: PostgreSQL restarted under load.

While it is down, `/readyz` answers 503 naming the database, API requests fail fast with the
contract's 503 body instead of hanging, and once it is back the same gunicorn, worker and beat
serve again by themselves (no restart); every order that was accepted gets its webhook.
"""

import itertools
import statistics
import threading
import time
from dataclasses import dataclass

import pytest
import requests

from tests.faults.infra import create_order, seed_tenants, wait_until

pytestmark = pytest.mark.faults

LOAD_THREADS = 4
DOWN_SECONDS = 8
#: a 503 must come at least this fast (the database's connect_timeout is 5 s)
FAIL_FAST_SECONDS = 2.0
RECOVERY_BUDGET_SECONDS = 20
DELIVERY_BUDGET_SECONDS = 120
UNAVAILABLE = {
    "statusCode": 503,
    "message": "Service temporarily unavailable",
    "error": "Service Unavailable",
    "code": "service_unavailable",
}


@dataclass
class Sample:
    started: float
    latency: float
    status: int | None  # None: no answer (timeout, connection reset)
    body: object
    ref: str = ""
    request_id: str = ""


class Load:
    """Threads creating orders (and one probing /readyz) until stopped."""

    def __init__(self, service, tenant) -> None:
        self.service = service
        self.tenant = tenant
        self.orders: list[Sample] = []
        self.probes: list[Sample] = []
        self.stop = threading.Event()
        self.refs = itertools.count()
        self.threads = [threading.Thread(target=self._orders) for _ in range(LOAD_THREADS)]
        self.threads.append(threading.Thread(target=self._probe))

    def _timed(self, call, ref: str = "") -> Sample:
        started = time.monotonic()
        try:
            response = call()
            try:
                body = response.json()
            except ValueError:
                body = response.text
            status = response.status_code
            request_id = response.headers.get("X-Request-Id", "")
        except requests.RequestException as exc:
            status, body, request_id = None, repr(exc), ""
        return Sample(started, time.monotonic() - started, status, body, ref, request_id)

    def _orders(self) -> None:
        while not self.stop.is_set():
            ref = f"PG-{next(self.refs)}"
            self.orders.append(
                self._timed(lambda r=ref: create_order(self.service, self.tenant, r), ref)
            )
            time.sleep(0.05)

    def _probe(self) -> None:
        url = f"{self.service.base_url}/readyz"
        while not self.stop.is_set():
            self.probes.append(self._timed(lambda: requests.get(url, timeout=15)))
            time.sleep(0.2)

    def __enter__(self):
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=30)


def test_postgres_restart_under_load_fails_fast_and_recovers(
    make_service, postgres, database, receiver, figures
):
    # The load is one API key sending as fast as it can: far over the default 600/m, which would
    # answer 429 (and, on a fast machine, until the minute's window ends after the restart).
    service = make_service(API_RATE_LIMIT="100000/m")
    service.start()
    (tenant,) = seed_tenants(service, [receiver.url("/ok/a")])
    web_pid = service.processes["web"].pid

    with Load(service, tenant) as load:
        time.sleep(3)
        stopping = time.monotonic()
        postgres.stop("fast")
        stopped = time.monotonic()
        time.sleep(DOWN_SECONDS)
        restarting = time.monotonic()
        postgres.start()
        started = time.monotonic()
        try:
            first_ok = wait_until(
                lambda: next(
                    (s for s in list(load.orders) if s.started > started and s.status == 201),
                    None,
                ),
                timeout=RECOVERY_BUDGET_SECONDS,
                what="an order to be accepted again after PostgreSQL came back",
            )
        except AssertionError:
            figures["sessions when recovery timed out"] = postgres.execute(
                "postgres",
                "SELECT pid, application_name, state, wait_event_type, wait_event, "
                "now() - query_start, left(query, 200) FROM pg_stat_activity "
                "WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
            )
            figures["last samples"] = [
                (round(s.started - started, 2), s.status, round(s.latency, 2))
                for s in load.orders[-8:]
            ]
            figures["stacks"] = service.dump_stacks()
            raise
        time.sleep(3)

    during = [s for s in load.orders if stopped <= s.started < restarting]
    after = [s for s in load.orders if s.started >= first_ok.started]
    failures = [s for s in load.orders if s.status != 201]
    probes_down = [s for s in load.probes if stopped <= s.started < restarting]
    figures.update(
        {
            "orders sent / accepted": (
                f"{len(load.orders)} / {sum(s.status == 201 for s in load.orders)}"
            ),
            "answers while PostgreSQL was down": _counts(during),
            "503 latency, median / max (ms)": _median_max(
                [s.latency for s in failures if s.status == 503]
            ),
            "/readyz while down": _counts(probes_down),
            "down (s), stop to start returned": round(started - stopping, 1),
            "first 201, s after PostgreSQL was back": round(first_ok.started - started, 2),
            "after recovery": _counts(after),
        }
    )

    # Down: readiness says so, and requests are refused quickly with the contract's body.
    assert during, "no request was made while PostgreSQL was down"
    assert probes_down
    assert {s.status for s in probes_down} == {503}
    assert all("database" in s.body["failing"] for s in probes_down)
    for sample in failures:
        assert sample.status == 503, sample
        assert sample.body == {**UNAVAILABLE, "requestId": sample.request_id}, sample
        assert sample.request_id, sample
        assert sample.latency < FAIL_FAST_SECONDS, sample
    assert {s.status for s in during} == {503}
    # Recovered by itself: the same gunicorn master, every request since then accepted.
    assert service.processes["web"].poll() is None
    assert service.processes["web"].pid == web_pid
    assert {s.status for s in after} == {201}
    assert service.ready()

    # Every accepted order's event reaches the receiver (the worker and beat recovered too).
    accepted = {s.ref for s in load.orders if s.status == 201}
    wait_until(
        lambda: accepted <= {a.external_ref for a in receiver.received()},
        timeout=DELIVERY_BUDGET_SECONDS,
        interval=0.5,
        what="the webhook of every accepted order",
    )
    figures["webhooks of accepted orders delivered"] = f"{len(accepted)}/{len(accepted)}"


def _counts(samples: list[Sample]) -> dict:
    counts: dict = {}
    for sample in samples:
        counts[sample.status] = counts.get(sample.status, 0) + 1
    return counts


def _median_max(values: list[float]) -> str:
    if not values:
        return "-"
    return f"{statistics.median(values) * 1000:.0f} / {max(values) * 1000:.0f}"
