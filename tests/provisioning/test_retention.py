"""Retention of invites (docs/operations.md "Retention"): an accepted invite goes 30 days after
its acceptance, an expired one 30 days after its expiry, unless its admin still waits for it
(resend-invite renews that one); a deleted invite's token reads 404."""

import logging
from datetime import timedelta

import pytest
from rest_framework.test import APIClient

from provisioning import services, tasks
from provisioning.models import Invite
from tenants.models import Membership
from tests import builders
from tests.conftest import assert_error
from tests.provisioning.test_organizations import create_org, token_from

pytestmark = pytest.mark.django_db

NOW = builders.NOW
DAY = timedelta(days=1)
SECOND = timedelta(seconds=1)
PASSWORD = "correct-Horse-battery-9"


@pytest.fixture
def invited(provisioning_client, mailoutbox, traveller):
    """Two new admins invited at NOW (their invites expire 7 days later): their tokens."""
    create_org(provisioning_client, name="Acme", email="ada@example.com")
    create_org(provisioning_client, name="Globex", email="grace@example.com")
    return {"ada": token_from(mailoutbox[0]), "grace": token_from(mailoutbox[1])}


def accept(token: str):
    response = APIClient().post(
        f"/api/provisioning/invite/{token}/accept", {"password": PASSWORD}, format="json"
    )
    assert response.status_code == 200, response.content


def read(token: str):
    return APIClient().get(f"/api/provisioning/invite/{token}")


def test_an_accepted_invite_goes_30_days_after_its_acceptance(invited, traveller):
    accept(invited["ada"])
    traveller.shift(DAY)
    accept(invited["grace"])

    traveller.move_to(NOW + 30 * DAY + SECOND)
    assert services.invites_ended_delete() == 1

    assert_error(read(invited["ada"]), 404, "Invite not found")
    assert read(invited["grace"]).json()["status"] == "accepted"
    traveller.shift(DAY)
    assert services.invites_ended_delete() == 1
    assert not Invite.objects.exists()
    # The admins themselves stay admins.
    assert Membership.objects.filter(is_active=True).count() == 2


def test_an_expired_invite_an_admin_still_waits_for_is_kept_for_resend(
    invited, traveller, provisioning_client, mailoutbox
):
    traveller.move_to(NOW + 7 * DAY + 400 * DAY)

    assert services.invites_ended_delete() == 0
    assert read(invited["ada"]).json()["status"] == "expired"
    ada = Invite.objects.get(user__email="ada@example.com").user_id
    resent = provisioning_client.post(f"/api/provisioning/admins/{ada}/resend-invite")
    assert resent.status_code == 200, resent.content
    assert read(token_from(mailoutbox[-1])).json()["status"] == "pending"


def test_an_expired_invite_nobody_waits_for_goes_30_days_after_its_expiry(invited, traveller):
    # Grace's membership was activated by other means (Django admin); Ada's was removed.
    Membership.objects.filter(user__email="grace@example.com").update(is_active=True)
    Membership.objects.filter(user__email="ada@example.com").delete()
    expiry = NOW + 7 * DAY

    traveller.move_to(expiry + 30 * DAY - SECOND)
    assert services.invites_ended_delete() == 0
    traveller.move_to(expiry + 30 * DAY + SECOND)
    assert services.invites_ended_delete() == 2

    assert_error(read(invited["ada"]), 404, "Invite not found")
    assert_error(read(invited["grace"]), 404, "Invite not found")


def test_the_setting_sets_the_retention(invited, traveller, settings):
    settings.INVITE_RETENTION_DAYS = 1
    accept(invited["ada"])

    traveller.move_to(NOW + DAY + SECOND)

    assert services.invites_ended_delete() == 1
    assert list(Invite.objects.values_list("user__email", flat=True)) == ["grace@example.com"]


def test_the_task_deletes_in_batches_logs_one_line_and_runs_again_safely(
    invited, traveller, caplog, settings
):
    settings.RETENTION_BATCH_SIZE = 1
    accept(invited["ada"])
    accept(invited["grace"])
    traveller.move_to(NOW + 31 * DAY)
    caplog.set_level(logging.INFO)

    assert tasks.delete_old_invites() == 2
    assert tasks.delete_old_invites() == 0

    assert [
        (r.getMessage(), r.fields) for r in caplog.records if r.name == "provisioning.tasks"
    ] == [
        (
            "provisioning.delete_old_invites deleted 2 ended invites",
            {"task": "provisioning.delete_old_invites", "deleted": 2},
        )
    ]
