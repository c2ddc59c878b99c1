"""Fault d: a webhook receiver that hangs does not hold up other organizations' deliveries.

Organization A's receiver accepts the connection and never answers; A gets a burst of events,
more than the worker has threads. Organization B's receiver keeps getting its events promptly,
and A's attempts end at the delivery timeout and are scheduled for a retry (contract "Webhooks").
"""

import statistics
import time

import pytest

from tests.faults.infra import create_order, seed_tenants, wait_until

pytestmark = pytest.mark.faults

CONCURRENCY = 8
IN_FLIGHT_LIMIT = 4  # WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION's default
HANGING_EVENTS = 2 * CONCURRENCY
OTHER_EVENTS = 10
WEBHOOK_TIMEOUT_SECONDS = 5
#: B's event must arrive within this long of the order being accepted
PROMPT_SECONDS = 2.0


def test_hanging_receiver_does_not_block_other_organizations(
    make_service, postgres, database, receiver, figures
):
    service = make_service(WEBHOOK_TIMEOUT_SECONDS=str(WEBHOOK_TIMEOUT_SECONDS))
    service.start(worker_concurrency=CONCURRENCY)
    hanging, healthy = seed_tenants(service, [receiver.url("/hang/a"), receiver.url("/ok/b")])

    for n in range(HANGING_EVENTS):
        assert create_order(service, hanging, f"HANG-{n}").status_code == 201
    wait_until(
        lambda: len(receiver.received("/hang")) >= CONCURRENCY // 2,
        timeout=15,
        what="the hanging receiver to be busy",
    )
    accepted_at = {}
    for n in range(OTHER_EVENTS):
        ref = f"OK-{n}"
        assert create_order(service, healthy, ref).status_code == 201
        accepted_at[ref] = time.time()
        time.sleep(0.3)

    wait_until(
        lambda: len(receiver.received("/ok")) >= OTHER_EVENTS,
        timeout=3 * WEBHOOK_TIMEOUT_SECONDS + 30,
        what="B's events",
    )
    lags = {a.external_ref: a.at - accepted_at[a.external_ref] for a in receiver.received("/ok")}

    # A's first attempts end at the timeout, recorded, with a retry scheduled.
    def first_attempts_recorded():
        rows = postgres.execute(
            database,
            "SELECT d.status, d.attempts, d.next_attempt_at IS NOT NULL, a.error, a.latency_ms "
            "FROM webhooks_delivery d JOIN webhooks_deliveryattempt a ON a.delivery_id = d.id "
            "WHERE d.organization_id = %s",
            (hanging.organization_id,),
        )
        return rows if len(rows) >= HANGING_EVENTS else None

    attempts = wait_until(
        first_attempts_recorded,
        timeout=4 * WEBHOOK_TIMEOUT_SECONDS + 30,
        interval=0.5,
        what="A's attempts to time out",
    )
    latencies = [row[4] for row in attempts]
    hanging_starts = sorted(a.at for a in receiver.received("/hang"))
    first_wave = [t for t in hanging_starts if t < hanging_starts[0] + WEBHOOK_TIMEOUT_SECONDS - 1]
    figures.update(
        {
            "events to the hanging receiver": HANGING_EVENTS,
            "worker threads": CONCURRENCY,
            "other organization's lag, median / max (ms)": (
                f"{statistics.median(lags.values()) * 1000:.0f} / {max(lags.values()) * 1000:.0f}"
            ),
            "attempts on the wire at once to the hanging receiver": len(first_wave),
            "hanging attempts recorded": len(attempts),
            "hanging attempt latency, min / max (ms)": f"{min(latencies)} / {max(latencies)}",
            "hanging attempt errors": sorted({row[3] for row in attempts}),
        }
    )
    assert max(lags.values()) < PROMPT_SECONDS, lags
    assert len(first_wave) == IN_FLIGHT_LIMIT
    for status, attempt_count, retry_scheduled, error, latency_ms in attempts:
        assert (status, attempt_count, retry_scheduled) == ("pending", 1, True)
        assert error == f"Timed out after {WEBHOOK_TIMEOUT_SECONDS} s"
        assert WEBHOOK_TIMEOUT_SECONDS * 1000 <= latency_ms < (WEBHOOK_TIMEOUT_SECONDS + 1.5) * 1000
