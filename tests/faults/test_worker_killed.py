"""Fault a: a Celery worker SIGKILLed in the middle of webhook deliveries loses none.

Delivery is at least once (contract "Webhooks", docs/webhooks.md "Deduplicate by event id"):
attempts that were on the wire when the worker died may arrive twice; after deduplication by event
id every event arrives exactly once, and no delivery is left pending or failed.
"""

import time

import pytest

from tests.faults import infra

pytestmark = pytest.mark.faults

ORDERS = 60
CONCURRENCY = 8
WEBHOOK_TIMEOUT_SECONDS = 3
# An attempt's claim is a lease of the timeout + 50 s (webhooks/sending.py); the sweep then needs
# up to a beat interval to queue it again.
RECOVERY_BUDGET_SECONDS = WEBHOOK_TIMEOUT_SECONDS + 50 + 40


def test_worker_killed_mid_delivery_loses_no_event(
    make_service, postgres, database, receiver, figures
):
    receiver.delay = 0.4  # slow enough that several attempts are on the wire at the kill
    service = make_service(WEBHOOK_TIMEOUT_SECONDS=str(WEBHOOK_TIMEOUT_SECONDS))
    service.start_web()
    (tenant,) = infra.seed_tenants(service, [receiver.url("/ok/a")])

    # A backlog first (the messages wait in Redis), then the worker and beat.
    for n in range(ORDERS):
        response = infra.create_order(service, tenant, f"KILL-{n}")
        assert response.status_code == 201, response.text
    expected = infra.all_event_ids(postgres, database, tenant.organization_id)
    assert len(expected) == ORDERS
    service.start_worker(CONCURRENCY)
    service.start_beat()

    # Kill the worker while it is busy: some delivered, some on the wire, the rest queued.
    infra.wait_until(lambda: len(receiver.received()) >= 12, timeout=30, what="first deliveries")
    service.kill("worker")
    killed_at = time.monotonic()
    before_kill = len(receiver.event_ids())
    assert before_kill < ORDERS, "the worker finished before it was killed; nothing was tested"
    in_flight = postgres.execute(
        database,
        "SELECT count(*) FROM webhooks_delivery WHERE status = 'pending' AND claimed_until > now()",
    )[0][0]

    time.sleep(1)
    service.start_worker(CONCURRENCY)
    # The attempts that died with the worker are made again once their claim lapses.
    received_after, recovered_after = infra.wait_for_every_delivery(
        receiver,
        postgres,
        database,
        expected,
        since=killed_at,
        timeout=RECOVERY_BUDGET_SECONDS,
        recorded_timeout=RECOVERY_BUDGET_SECONDS,
    )

    arrivals = [a.event_id for a in receiver.received()]
    duplicates = len(arrivals) - len(set(arrivals))
    figures.update(
        {
            "events": ORDERS,
            "delivered before the kill": before_kill,
            "claims in flight at the kill": in_flight,
            "unique events received": len(set(arrivals)),
            "duplicate arrivals (at-least-once)": duplicates,
            "every event received, s after the kill": round(received_after, 1),
            "every delivery 'delivered', s after the kill": round(recovered_after, 1),
            "delivery states": infra.delivery_states(postgres, database),
        }
    )
    assert set(arrivals) == expected
    # Only attempts that were on the wire when the worker died may be repeated.
    assert duplicates <= CONCURRENCY
    stuck = postgres.execute(
        database,
        "SELECT count(*) FROM webhooks_delivery WHERE status <> 'delivered' "
        "OR claim_token IS NOT NULL",
    )[0][0]
    assert stuck == 0
