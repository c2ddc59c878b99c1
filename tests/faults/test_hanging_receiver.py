"""Fault d: a webhook receiver that hangs does not hold up other organizations' deliveries.

Organization A's receiver accepts the connection and never answers; A gets a burst of events,
as many as the worker has threads. Organization B's receiver keeps getting its first attempts
within a second of each order's commit, with the shipped worker (8 threads) and with 2
threads: a destination gets at most the worker's threads less one (webhooks/queueing.py:
in_flight_limit).
A's attempts end at the delivery timeout and are scheduled for a retry (contract "Webhooks").

Fault e: `test-webhook` to a hanging receiver answers within about 2 s, `delivered: false`,
while the worker's attempt goes on and is recorded; two such calls at once leave the web tier
free for other requests.
"""

import statistics
import threading
import time

import pytest
import requests

from tests.builders import PASSWORD
from tests.faults.infra import create_order, seed_tenants, wait_until

pytestmark = pytest.mark.faults

SHIPPED_IN_FLIGHT_LIMIT = 4  # WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION's default
OTHER_EVENTS = 20
#: B's orders are this far apart: 20 of them span more than one attempt timeout
OTHER_EVENTS_EVERY_SECONDS = 0.3
WEBHOOK_TIMEOUT_SECONDS = 5
#: B's first attempt must arrive within this long of its order's commit
PROMPT_SECONDS = 1.0


@pytest.mark.parametrize("concurrency", [8, 2], ids=["8-threads", "2-threads"])
def test_hanging_receiver_does_not_block_other_organizations(
    concurrency, make_service, postgres, database, receiver, figures
):
    hanging_events = concurrency
    in_flight_limit = min(SHIPPED_IN_FLIGHT_LIMIT, concurrency - 1)
    service = make_service(WEBHOOK_TIMEOUT_SECONDS=str(WEBHOOK_TIMEOUT_SECONDS))
    service.start(worker_concurrency=concurrency)
    hanging, healthy = seed_tenants(service, [receiver.url("/hang/a"), receiver.url("/ok/b")])

    for n in range(hanging_events):
        assert create_order(service, hanging, f"HANG-{n}").status_code == 201
    wait_until(
        lambda: len(receiver.received("/hang")) >= in_flight_limit,
        timeout=15,
        what="the hanging receiver to be busy",
    )
    committed_at = {}
    for n in range(OTHER_EVENTS):
        ref = f"OK-{n}"
        assert create_order(service, healthy, ref).status_code == 201
        committed_at[ref] = time.time()  # the answer comes after the commit
        time.sleep(OTHER_EVENTS_EVERY_SECONDS)

    wait_until(
        lambda: len(receiver.received("/ok")) >= OTHER_EVENTS,
        timeout=3 * WEBHOOK_TIMEOUT_SECONDS + 30,
        what="B's events",
    )
    lags = {a.external_ref: a.at - committed_at[a.external_ref] for a in receiver.received("/ok")}

    # A's first attempts end at the timeout, recorded, with a retry scheduled.
    def first_attempts_recorded():
        rows = postgres.execute(
            database,
            "SELECT d.status, d.attempts, d.next_attempt_at IS NOT NULL, a.error, a.latency_ms "
            "FROM webhooks_delivery d JOIN webhooks_deliveryattempt a ON a.delivery_id = d.id "
            "WHERE d.organization_id = %s",
            (hanging.organization_id,),
        )
        return rows if len(rows) >= hanging_events else None

    waves = -(-hanging_events // in_flight_limit)
    attempts = wait_until(
        first_attempts_recorded,
        timeout=(waves + 2) * (WEBHOOK_TIMEOUT_SECONDS + 1) + 30,
        interval=0.5,
        what="A's attempts to time out",
    )
    latencies = [row[4] for row in attempts]
    hanging_starts = sorted(a.at for a in receiver.received("/hang"))
    first_wave = [t for t in hanging_starts if t < hanging_starts[0] + WEBHOOK_TIMEOUT_SECONDS - 1]
    figures.update(
        {
            "worker threads": concurrency,
            "events to the hanging receiver": hanging_events,
            "other organization's order.created first attempts": OTHER_EVENTS,
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
    assert len(first_wave) == in_flight_limit
    for status, attempt_count, retry_scheduled, error, latency_ms in attempts:
        assert (status, attempt_count, retry_scheduled) == ("pending", 1, True)
        assert error == f"Timed out after {WEBHOOK_TIMEOUT_SECONDS} s"
        assert WEBHOOK_TIMEOUT_SECONDS * 1000 <= latency_ms < (WEBHOOK_TIMEOUT_SECONDS + 1.5) * 1000


#: the shipped gunicorn (gunicorn.conf.py: WEB_CONCURRENCY's default, gthread workers)
SHIPPED_WEB_WORKERS = "4"
TEST_WEBHOOK_WAIT_SECONDS = 2.0


def test_test_webhook_to_a_hanging_receiver_answers_within_the_wait(
    make_service, postgres, database, receiver, figures
):
    service = make_service(
        WEBHOOK_TIMEOUT_SECONDS=str(WEBHOOK_TIMEOUT_SECONDS), WEB_CONCURRENCY=SHIPPED_WEB_WORKERS
    )
    service.start()
    (tenant,) = seed_tenants(service, [receiver.url("/hang/test")])
    token = requests.post(
        f"{service.base_url}/api/auth/token",
        json={"email": tenant.admin_email, "password": PASSWORD},
        timeout=15,
    ).json()["token"]
    test_url = (
        f"{service.base_url}/api/manage/organizations/{tenant.organization_id}"
        f"/api-keys/{tenant.api_key_id}/test-webhook"
    )
    headers = {"Authorization": f"Bearer {token}"}
    answers: list[tuple[float, dict]] = []

    def test_webhook() -> None:
        started = time.monotonic()
        response = requests.post(test_url, headers=headers, timeout=30)
        answers.append((time.monotonic() - started, response.json()))

    callers = [threading.Thread(target=test_webhook) for _ in range(2)]
    for caller in callers:
        caller.start()
    time.sleep(0.5)  # both calls are waiting now
    started = time.monotonic()
    other = requests.get(
        f"{service.base_url}/api/manage/organizations/{tenant.organization_id}/api-keys",
        headers=headers,
        timeout=30,
    )
    other_seconds = time.monotonic() - started
    for caller in callers:
        caller.join()

    def recorded():
        rows = postgres.execute(
            database,
            "SELECT d.status, d.attempts, a.error FROM webhooks_delivery d "
            "JOIN webhooks_deliveryattempt a ON a.delivery_id = d.id "
            "WHERE d.organization_id = %s",
            (tenant.organization_id,),
        )
        return rows if len(rows) >= 2 else None

    rows = wait_until(
        recorded, timeout=WEBHOOK_TIMEOUT_SECONDS + 15, interval=0.5, what="the attempts"
    )
    figures.update(
        {
            "test-webhook calls to a hanging receiver at once": len(answers),
            "test-webhook answer times (s)": [f"{seconds:.2f}" for seconds, _ in answers],
            "test-webhook answers": sorted({body["error"] for _, body in answers}),
            "another request meanwhile (s)": f"{other_seconds:.3f}",
            "test deliveries recorded": sorted({tuple(row) for row in rows}),
        }
    )
    assert other.status_code == 200
    assert other_seconds < 0.5
    for seconds, body in answers:
        assert TEST_WEBHOOK_WAIT_SECONDS <= seconds < TEST_WEBHOOK_WAIT_SECONDS + 1.0
        assert body["delivered"] is False
        assert body["statusCode"] is None
        assert body["error"].startswith("Timed out after 2 s waiting for the receiver")
    assert len(receiver.received("/hang/test")) == 2
    assert (
        sorted(tuple(row) for row in rows)
        == [("failed", 1, f"Timed out after {WEBHOOK_TIMEOUT_SECONDS} s")] * 2
    )
