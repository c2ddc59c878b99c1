"""A delivery attempt's claim reads its own destination's deliveries, never another's backlog.

A receiver that hangs holds its destination's in-flight limit for the whole timeout, so that
destination's due deliveries pile up at its event rate. A claim that walked every destination's
due rows (`webhook_delivery_due`, the sweep's index) paid for that pile on every other tenant's
delivery: 23-28 ms of PostgreSQL per claim with 100,000 due of one destination (docs/
performance.md). So the claim says "pending" as `next_attempt_at` set, which a constraint makes
the same thing, and only the destination's own indexes can serve it.
"""

from datetime import timedelta

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from tests import builders
from webhooks import queueing, sending, statements
from webhooks.models import Delivery, DeliveryStatus

pytestmark = pytest.mark.django_db

BACKLOG = 2000


def backlog(organization, key, count: int) -> None:
    """`count` due deliveries of `key`, each with a message on its way (as a hanging receiver's
    pile up), copies of one event's delivery."""
    builders.order_event(organization, "PILE")
    first = Delivery.objects.get(api_key=key.api_key)
    due = timezone.now() - timedelta(minutes=5)
    Delivery.objects.bulk_create(
        Delivery(
            organization=organization,
            event_id=first.event_id,
            api_key=key.api_key,
            url=first.url,
            next_attempt_at=due + timedelta(milliseconds=n),
            queued_at=timezone.now(),
        )
        for n in range(count)
    )


@pytest.fixture
def piled_up(organization, other_organization):
    """`organization`'s destination with a backlog; `other_organization`'s with one delivery."""
    piled = builders.api_key(organization, webhook_url="http://127.0.0.1:9/piled")
    backlog(organization, piled, BACKLOG)
    quiet = builders.api_key(other_organization, webhook_url="http://127.0.0.1:9/quiet")
    builders.order_event(other_organization, "ONE")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE webhooks_delivery")
    return piled, quiet, Delivery.objects.get(api_key=quiet.api_key)


def claim_plan(key_id, delivery_id) -> str:
    """EXPLAIN ANALYZE of the claim (rolled back: it claims nothing)."""
    now = timezone.now()
    params = {
        "key": key_id,
        "id": delivery_id,
        "token": None,
        "until": now + queueing.claim_lease(),
        "now": now,
        "in_flight_after": queueing.in_flight_after(now),
        "in_flight_limit": 7,
        "batch": queueing.DELIVERY_BATCH,
    }
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) " + statements.CLAIM, params)
        (plan,) = cursor.fetchone()
        transaction.set_rollback(True)
    return plan


def delivery_rows_read(node) -> int:
    """Rows the plan's scans of webhooks_delivery returned or filtered out, in all."""
    own = 0
    if node.get("Relation Name") == "webhooks_delivery":
        loops = node.get("Actual Loops", 1)
        own = (node["Actual Rows"] + node.get("Rows Removed by Filter", 0)) * loops
    return own + sum(delivery_rows_read(child) for child in node.get("Plans", []))


def test_another_destinations_claim_reads_none_of_the_backlog(piled_up):
    """At this size the planner may find the key's rows even without the rule below: the test
    after this one is what fails if the claim can walk every destination's due rows again."""
    _, quiet, delivery = piled_up

    (plan,) = claim_plan(quiet.api_key.id, delivery.id)

    assert delivery_rows_read(plan["Plan"]) < 20, plan
    assert "webhook_delivery_due" not in str(plan)


def test_the_claim_cannot_use_every_destinations_due_index(piled_up):
    """Even with nothing else to go by (the destination's indexes gone, sequential scans
    discouraged), the planner cannot read the claim's due rows through the sweep's index."""
    _, quiet, delivery = piled_up
    with transaction.atomic():
        with connection.cursor() as cursor:
            for index in (
                "webhook_delivery_claimable",
                "webhook_delivery_waiting",
                "webhook_delivery_in_flight",
                "webhooks_delivery_api_key_id_7562ced9",
            ):
                cursor.execute(f"DROP INDEX {index}")
            cursor.execute("SET LOCAL enable_seqscan = off")
        plan = claim_plan(quiet.api_key.id, delivery.id)
        transaction.set_rollback(True)

    assert "webhook_delivery_due" not in str(plan)


def test_the_backlogged_destination_still_claims_its_own_delivery(piled_up):
    piled, _, _ = piled_up
    newest = Delivery.objects.filter(api_key=piled.api_key).order_by("next_attempt_at").last()

    assert sending.delivery_attempt(delivery_id=newest.id) is True

    attempted = Delivery.objects.filter(api_key=piled.api_key, attempts__gt=0)
    assert list(attempted.values_list("id", flat=True)) == [newest.id]


def test_a_pending_delivery_has_its_next_attempt_time_and_only_it(organization):
    builders.api_key(organization, webhook_url="http://127.0.0.1:9/hook")
    builders.order_event(organization)
    delivery = Delivery.objects.get(organization=organization)

    for columns in (
        {"next_attempt_at": None},
        {"status": DeliveryStatus.DELIVERED},
        {"status": DeliveryStatus.FAILED},
    ):
        with pytest.raises(IntegrityError), transaction.atomic():
            Delivery.objects.filter(pk=delivery.pk).update(**columns)
    Delivery.objects.filter(pk=delivery.pk).update(
        status=DeliveryStatus.DELIVERED, next_attempt_at=None
    )
