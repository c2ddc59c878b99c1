"""Names that reach the invite e-mail stay on one line, and a mail that cannot go out never turns
a committed write into a 500 (contract "Provisioning")."""

import smtplib

import pytest
from django.core.mail import BadHeaderError
from django.core.mail.backends.base import BaseEmailBackend
from django.test import Client
from django.utils import timezone

from tenants.models import Membership, Organization, User
from tests import builders
from tests.conftest import assert_error

pytestmark = pytest.mark.django_db

ORGS = "/api/provisioning/organizations"
#: carriage return, line feed, tab, DEL, NEL (C1), line and paragraph separators
LINE_BREAKERS = ["\r", "\n", "\r\n", "\t", "\x7f", "\x85", "\u2028", "\u2029"]


class FailingBackend(BaseEmailBackend):
    """An e-mail backend that fails with the exception the test names (an outside service)."""

    failure: Exception = RuntimeError("mail relay misconfigured")

    def send_messages(self, email_messages):
        raise type(self).failure


@pytest.fixture
def failing_mail(settings):
    settings.EMAIL_BACKEND = f"{__name__}.FailingBackend"
    yield FailingBackend
    FailingBackend.failure = RuntimeError("mail relay misconfigured")


@pytest.mark.parametrize("breaker", LINE_BREAKERS)
def test_create_refuses_a_line_break_in_the_organization_name(
    provisioning_client, mailoutbox, breaker
):
    response = provisioning_client.post(
        ORGS,
        {"name": f"Acme{breaker}Bcc: victim@example.com", "admin": {"email": "ada@example.com"}},
        format="json",
    )

    assert_error(response, 400, "name must not contain control characters or line breaks")
    assert not Organization.objects.exists()
    assert not User.objects.filter(email="ada@example.com").exists()
    assert mailoutbox == []


@pytest.mark.parametrize("breaker", ["\n", "\u2028"])
def test_create_refuses_a_line_break_in_the_admin_name(provisioning_client, mailoutbox, breaker):
    response = provisioning_client.post(
        ORGS,
        {"name": "Acme", "admin": {"email": "ada@example.com", "name": f"Ada{breaker}Lovelace"}},
        format="json",
    )

    assert_error(response, 400, "admin.name must not contain control characters or line breaks")
    assert not Organization.objects.exists()


def test_rename_refuses_a_line_break(provisioning_client, organization):
    response = provisioning_client.patch(
        f"{ORGS}/{organization.id}", {"name": "Acme\r\nX-Injected: 1"}, format="json"
    )

    assert_error(response, 400, "name must not contain control characters or line breaks")
    organization.refresh_from_db()
    assert "\n" not in organization.name


def test_add_admin_refuses_a_line_break_in_the_name(provisioning_client, organization):
    response = provisioning_client.post(
        f"{ORGS}/{organization.id}/admins",
        {"email": "grace@example.com", "name": "Grace\x85Hopper"},
        format="json",
    )

    assert_error(response, 400, "name must not contain control characters or line breaks")
    assert not User.objects.filter(email="grace@example.com").exists()


def test_a_name_stored_before_the_check_still_gets_its_invites(provisioning_client, mailoutbox):
    # Written as an older release could have: straight to the table, past every check.
    organization = Organization.objects.create(name="Acme\r\nBcc: victim@example.com", slug="acme")

    added = provisioning_client.post(
        f"{ORGS}/{organization.id}/admins", {"email": "grace@example.com"}, format="json"
    )
    assert added.status_code == 201, added.content
    assert added.json()["invite"]["emailSent"] is True
    user_id = added.json()["admin"]["id"]
    resent = provisioning_client.post(f"/api/provisioning/admins/{user_id}/resend-invite")

    assert resent.status_code == 200, resent.content
    assert resent.json()["invite"]["emailSent"] is True
    assert [mail.subject for mail in mailoutbox] == [
        "You are invited to Acme  Bcc: victim@example.com"
    ] * 2
    assert all(mail.recipients() == ["grace@example.com"] for mail in mailoutbox)


@pytest.mark.parametrize(
    "failure",
    [
        BadHeaderError("Header values can't contain newlines"),
        smtplib.SMTPRecipientsRefused({"ada@example.com": (550, b"no such user")}),
        ConnectionRefusedError("connection refused"),
        RuntimeError("mail relay misconfigured"),
    ],
    ids=["bad-header", "smtp", "network", "anything"],
)
def test_a_mail_failure_answers_email_sent_false_after_the_commit(
    provisioning_client, failing_mail, failure, caplog
):
    failing_mail.failure = failure

    created = provisioning_client.post(
        ORGS, {"name": "Acme", "admin": {"email": "ada@example.com"}}, format="json"
    )

    assert created.status_code == 201, created.content
    assert created.json()["invite"]["emailSent"] is False
    organization = Organization.objects.get(id=created.json()["organization"]["id"])
    assert Membership.objects.filter(organization=organization).count() == 1
    assert "invite e-mail to user" in caplog.text

    added = provisioning_client.post(
        f"{ORGS}/{organization.id}/admins", {"email": "grace@example.com"}, format="json"
    )
    assert added.status_code == 201, added.content
    assert added.json()["invite"]["emailSent"] is False
    resent = provisioning_client.post(
        f"/api/provisioning/admins/{added.json()['admin']['id']}/resend-invite"
    )
    assert resent.status_code == 200, resent.content
    assert resent.json()["invite"]["emailSent"] is False


def _admin_client() -> Client:
    User.objects.create_superuser(email="root@example.com", password=builders.PASSWORD)
    client = Client()
    assert client.login(username="root@example.com", password=builders.PASSWORD)
    return client


def test_django_admin_refuses_a_line_break_in_an_organization_name(organization):
    now = timezone.localtime(organization.created_at)
    response = _admin_client().post(
        f"/admin/tenants/organization/{organization.id}/change/",
        {
            "name": "Acme\r\nBcc: victim@example.com",
            "slug": organization.slug,
            "is_active": "on",
            "created_at_0": now.strftime("%Y-%m-%d"),
            "created_at_1": now.strftime("%H:%M:%S"),
            "memberships-TOTAL_FORMS": "0",
            "memberships-INITIAL_FORMS": "0",
        },
    )

    assert response.status_code == 200  # the form again, with its error
    assert "must not contain control characters or line breaks" in response.content.decode()
    organization.refresh_from_db()
    assert "\n" not in organization.name


def test_django_admin_refuses_a_line_break_in_a_user_name():
    client = _admin_client()
    user = User.objects.get(email="root@example.com")
    response = client.post(
        f"/admin/tenants/user/{user.id}/change/",
        {
            "email": user.email,
            "name": "Root\u2028User",
            "is_active": "on",
            "is_staff": "on",
            "is_superuser": "on",
            "last_login_0": "",
            "last_login_1": "",
            "date_joined_0": "2030-01-01",
            "date_joined_1": "00:00:00",
        },
    )

    assert response.status_code == 200
    assert "must not contain control characters or line breaks" in response.content.decode()
    user.refresh_from_db()
    assert user.name == ""
