"""Recover after an outage: `POST /manage/organizations/:orgId/webhook-deliveries/recover`
`{since, until?, keyId?}` and the admin action queue failed deliveries again, oldest first."""

import time
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.test import Client
from standardwebhooks import Webhook

from tenants.models import Membership, User
from tests import builders
from tests.conftest import assert_error
from tests.webhooks.test_worker import wait_until
from webhooks import tasks
from webhooks.models import Delivery, DeliveryStatus

T0 = datetime(2030, 3, 4, 10, 0, tzinfo=UTC)


def iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def emit(organization, ref: str, platform: str = "partner_a") -> None:
    builders.order_event(organization, ref, order_id=f"order-{ref}", platform=platform)


def fail_at(organization, ref: str, moment: datetime, platform: str = "partner_a") -> Delivery:
    """An event whose only attempt (schedule `0`) fails at `moment`: a `failed` delivery."""
    with time_machine.travel(moment, tick=False):
        emit(organization, ref, platform)
        delivery = Delivery.objects.filter(
            organization=organization, event__payload__externalRef=ref
        ).get()
        tasks.deliver(str(delivery.id))
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.FAILED
    return delivery


def recover_url(organization) -> str:
    return f"/api/manage/organizations/{organization.id}/webhook-deliveries/recover"


@pytest.fixture
def one_attempt(settings):
    settings.WEBHOOK_RETRY_SCHEDULE = [0]


@pytest.fixture
def client(organization):
    return builders.manager_client(organization, "admin@example.com")


@pytest.mark.django_db
def test_recover_queues_the_failed_deliveries_of_the_interval(
    client, organization, receiver, one_attempt, django_capture_on_commit_callbacks
):
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    receiver.statuses = [503] * 4
    before = fail_at(organization, "SO-before", T0 - timedelta(hours=2))
    first = fail_at(organization, "SO-1", T0 + timedelta(minutes=1))
    second = fail_at(organization, "SO-2", T0 + timedelta(minutes=2))
    after = fail_at(organization, "SO-after", T0 + timedelta(hours=2))
    with time_machine.travel(T0 + timedelta(minutes=3), tick=False):
        emit(organization, "SO-delivered")
        delivered = Delivery.objects.get(event__payload__externalRef="SO-delivered")
        tasks.deliver(str(delivered.id))

    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = client.post(
            recover_url(organization),
            {"since": iso(T0), "until": iso(T0 + timedelta(hours=1))},
            format="json",
        )
    assert response.status_code == 202, response.content
    assert response.json() == {"queued": 2}
    statuses = {d.pk: d.status for d in Delivery.objects.filter(organization=organization)}
    assert statuses[first.pk] == statuses[second.pk] == DeliveryStatus.PENDING
    assert statuses[before.pk] == statuses[after.pk] == DeliveryStatus.FAILED
    assert statuses[delivered.pk] == DeliveryStatus.DELIVERED
    # One message for the destination, the oldest; the next is due just after it.
    assert len(queued) == 1
    first.refresh_from_db()
    second.refresh_from_db()
    assert first.queued_at is not None
    assert second.queued_at is None
    assert first.next_attempt_at < second.next_attempt_at
    assert (first.round_start_attempts, first.attempts) == (1, 1)

    # Each once: asking again finds nothing failed in the interval.
    again = client.post(recover_url(organization), {"since": iso(T0)}, format="json")
    assert again.json() == {"queued": 1}  # SO-after only: without until, no upper bound
    assert client.post(recover_url(organization), {"since": iso(T0)}, format="json").json() == {
        "queued": 0
    }


@pytest.mark.django_db
def test_key_id_limits_recovery_to_one_key(client, organization, receiver, one_attempt):
    partner_a = builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    builders.api_key(organization, "partner_b", webhook_url=receiver.url)
    receiver.statuses = [503] * 2
    a = fail_at(organization, "SO-A", T0, platform="partner_a")
    b = fail_at(organization, "SO-B", T0, platform="partner_b")

    response = client.post(
        recover_url(organization),
        {"since": iso(T0 - timedelta(minutes=1)), "keyId": str(partner_a.api_key.id)},
        format="json",
    )
    assert response.json() == {"queued": 1}
    a.refresh_from_db()
    b.refresh_from_db()
    assert (a.status, b.status) == (DeliveryStatus.PENDING, DeliveryStatus.FAILED)


@pytest.mark.django_db
def test_other_organizations_deliveries_are_never_recovered(
    client, organization, receiver, one_attempt
):
    other = builders.organization()
    builders.api_key(other, "partner_a", webhook_url=receiver.url)
    receiver.statuses = [503]
    theirs = fail_at(other, "SO-THEIRS", T0)
    response = client.post(
        recover_url(organization), {"since": iso(T0 - timedelta(days=1))}, format="json"
    )
    assert response.json() == {"queued": 0}
    theirs.refresh_from_db()
    assert theirs.status == DeliveryStatus.FAILED
    other_key = other.api_keys.get()
    assert_error(
        client.post(
            recover_url(organization),
            {"since": iso(T0), "keyId": str(other_key.id)},
            format="json",
        ),
        404,
        "API key not found",
    )
    assert_error(
        client.post(recover_url(other), {"since": iso(T0)}, format="json"),
        404,
        "Organization not found",
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "messages"),
    [
        ({}, ["since is required"]),
        ({"since": None}, ["since is required"]),
        ({"since": "yesterday"}, ["since must be an ISO 8601 date-time"]),
        ({"since": 1700000000}, ["since must be an ISO 8601 date-time"]),
        (
            {"since": "2030-13-01T00:00:00Z", "until": "soon"},
            ["since must be an ISO 8601 date-time", "until must be an ISO 8601 date-time"],
        ),
        (
            {"since": "2030-03-04T10:00:00Z", "until": "2030-03-04T10:00:00Z"},
            ["until must be after since"],
        ),
        (
            {"since": "2030-03-04T10:00:00+02:00", "until": "2030-03-04T07:59:59Z"},
            ["until must be after since"],
        ),
        ({"since": "2030-03-04T10:00:00Z", "keyId": 5}, ["keyId: must be a string"]),
    ],
)
def test_validation_errors_use_the_contracts_body(client, organization, body, messages):
    response = client.post(recover_url(organization), body, format="json")
    assert_error(response, 400, messages)


@pytest.mark.django_db
def test_an_unknown_key_id_is_404(client, organization):
    for key_id in ["not-a-uuid", "00000000-0000-4000-8000-000000000000"]:
        assert_error(
            client.post(
                recover_url(organization), {"since": iso(T0), "keyId": key_id}, format="json"
            ),
            404,
            "API key not found",
        )


@pytest.mark.django_db
def test_recover_needs_a_management_token(organization):
    assert_error(
        Client().post(recover_url(organization), {"since": iso(T0)}, "application/json"), 401
    )


@pytest.mark.django_db
def test_admin_action_recovers_the_failed_deliveries_of_the_selection(
    organization, receiver, one_attempt
):
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    receiver.statuses = [503] * 3
    one = fail_at(organization, "SO-1", T0)
    two = fail_at(organization, "SO-2", T0 + timedelta(minutes=1))
    left = fail_at(organization, "SO-3", T0 + timedelta(minutes=2))
    user = User.objects.create_user(email="recover-admin@example.com", password=builders.PASSWORD)
    Membership.objects.create(
        organization=organization, user=user, org_role="admin", is_active=True
    )
    admin = Client()
    assert admin.login(username="recover-admin@example.com", password=builders.PASSWORD)

    response = admin.post(
        "/admin/webhooks/delivery/",
        {"action": "recover", "_selected_action": [str(one.pk), str(two.pk)]},
        follow=True,
    )
    assert response.status_code == 200
    assert b"Queued 2 failed delivery(ies) again, oldest first." in response.content
    statuses = dict(Delivery.objects.values_list("pk", "status"))
    assert statuses[one.pk] == statuses[two.pk] == DeliveryStatus.PENDING
    assert statuses[left.pk] == DeliveryStatus.FAILED


def _outage_then_recovery(client, organization, receiver, count: int) -> list[str]:
    """The receiver is down while `count` events fail (one attempt each, through the worker),
    comes back, and one recover call brings every event back."""
    issued = builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    receiver.statuses = [503] * count
    started = datetime.now(UTC)
    refs = [f"SO-{n:02d}" for n in range(count)]
    for ref in refs:
        emit(organization, ref)
        # One at a time, so the events fail in the order they happened.
        wait_until(
            lambda ref=ref: Delivery.objects.filter(
                event__payload__externalRef=ref, status=DeliveryStatus.FAILED
            ).exists()
        )
    receiver.wait_for(count)

    response = client.post(recover_url(organization), {"since": iso(started)}, format="json")
    assert response.status_code == 202, response.content
    assert response.json() == {"queued": count}
    received = receiver.wait_for(2 * count)[count:]
    wait_until(
        lambda: (
            Delivery.objects.filter(
                organization=organization, status=DeliveryStatus.DELIVERED
            ).count()
            == count
        )
    )
    time.sleep(0.3)
    assert len(receiver.requests) == 2 * count  # each event once more, no more
    webhook = Webhook(issued.webhook_secret)
    for request in received:  # signed afresh at their attempt, as the library checks
        webhook.verify(request.body, request.headers)
    return [r.json["payload"]["externalRef"] for r in received]


@pytest.mark.django_db(transaction=True)
def test_a_receiver_that_was_down_gets_every_event_back_in_order(celery_worker, receiver, settings):
    settings.WEBHOOK_RETRY_SCHEDULE = [0]
    settings.WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION = 1
    organization = builders.organization()
    builders.admin(organization, email="outage@example.com")
    client, _ = builders.bearer_login("outage@example.com")

    refs = _outage_then_recovery(client, organization, receiver, count=12)
    assert refs == [f"SO-{n:02d}" for n in range(12)]


@pytest.mark.django_db(transaction=True)
def test_recovery_with_several_attempts_in_flight_sends_each_event_once(
    celery_worker, receiver, settings
):
    settings.WEBHOOK_RETRY_SCHEDULE = [0]
    organization = builders.organization()
    builders.admin(organization, email="outage4@example.com")
    client, _ = builders.bearer_login("outage4@example.com")

    refs = _outage_then_recovery(client, organization, receiver, count=20)
    assert sorted(refs) == [f"SO-{n:02d}" for n in range(20)]
