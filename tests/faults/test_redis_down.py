"""Fault b: Redis stopped while orders are created.

Orders are still accepted (201), the rate limiter fails open with an error log line, and every
event is delivered once Redis is back: the outbox rows are in PostgreSQL, and the beat's sweep
queues the deliveries whose messages were never published (or died with Redis, which comes back
empty: it persists nothing here).
"""

import statistics
import time

import pytest
import requests

from tests.faults import infra

pytestmark = pytest.mark.faults

ORDERS_BEFORE = 3
ORDERS_DURING = 20
OUTAGE_SECONDS = 12
#: an order must be answered this fast without Redis (it was 6 s when publishing retried)
FAST_SECONDS = 2.0
FAIL_OPEN_LINE = "rate limiter unavailable, failing open"
# Sweep: a message is presumed lost 30 s after it was queued (webhooks/services.py), the beat
# sweeps every 5 s, and the worker reconnects to the broker with a growing back-off.
DELIVERY_BUDGET_SECONDS = 120


def test_orders_accepted_and_events_delivered_across_a_redis_outage(
    make_service, postgres, database, redis_server, receiver, figures
):
    service = make_service(RATELIMIT_ENABLE="true", API_RATE_LIMIT="600/m")
    service.start()
    (tenant,) = infra.seed_tenants(service, [receiver.url("/ok/a")])
    for n in range(ORDERS_BEFORE):
        assert infra.create_order(service, tenant, f"BEFORE-{n}").status_code == 201
    infra.wait_until(
        lambda: len(receiver.event_ids()) == ORDERS_BEFORE, timeout=30, what="baseline"
    )

    redis_server.stop()
    stopped_at = time.monotonic()
    latencies = []
    for n in range(ORDERS_DURING):
        started = time.monotonic()
        response = infra.create_order(service, tenant, f"DURING-{n}")
        latencies.append(time.monotonic() - started)
        assert response.status_code == 201, response.text
        time.sleep(0.2)
    # Publishing fails at once (no connection retries inside the request).
    assert max(latencies) < FAST_SECONDS, latencies
    readiness = requests.get(f"{service.base_url}/readyz", timeout=10)
    assert readiness.status_code == 503
    assert readiness.json()["failing"] == ["redis"]
    assert FAIL_OPEN_LINE in service.log("web")
    assert len(receiver.event_ids()) == ORDERS_BEFORE  # nothing can be queued meanwhile
    # Down long enough for the web's broker back-off and the worker's reconnect back-off to run.
    time.sleep(max(0.0, OUTAGE_SECONDS - (time.monotonic() - stopped_at)))

    redis_server.start()
    restarted_at = time.monotonic()
    outage = restarted_at - stopped_at
    expected = infra.all_event_ids(postgres, database, tenant.organization_id)
    assert len(expected) == ORDERS_BEFORE + ORDERS_DURING
    delivered_after, _ = infra.wait_for_every_delivery(
        receiver,
        postgres,
        database,
        expected,
        since=restarted_at,
        timeout=DELIVERY_BUDGET_SECONDS,
        recorded_timeout=30,
    )
    assert service.ready()

    arrivals = [a.event_id for a in receiver.received()]
    figures.update(
        {
            "orders accepted while Redis was down": f"{ORDERS_DURING}/{ORDERS_DURING} (201)",
            "order latency without Redis, median / max (ms)": (
                f"{statistics.median(latencies) * 1000:.0f} / {max(latencies) * 1000:.0f}"
            ),
            "fail-open log lines": service.log("web").count(FAIL_OPEN_LINE),
            "outage (s)": round(outage, 1),
            "every event delivered, s after Redis came back": round(delivered_after, 1),
            "events delivered (unique / arrivals)": f"{len(set(arrivals))} / {len(arrivals)}",
        }
    )
    assert set(arrivals) == expected
