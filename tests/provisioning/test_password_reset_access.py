"""A password the parent platform set gives management access at once, over real HTTP
(docs/contract.md "Provisioning": reset password)."""

import pytest
import requests
from django.conf import settings

from provisioning.models import Invite
from tenants.models import Membership

NEW_PASSWORD = "a-Fresh-passphrase-31"


@pytest.fixture
def base_url(live_server):
    return live_server.url


def provision(base_url, **body):
    return requests.post(
        f"{base_url}/api/provisioning/organizations",
        json=body,
        headers={"X-Provisioning-Secret": settings.PROVISIONING_SECRET},
        timeout=30,
    )


def reset_password(base_url, user_id, password=NEW_PASSWORD):
    return requests.post(
        f"{base_url}/api/provisioning/admins/{user_id}/reset-password",
        json={"password": password},
        headers={"X-Provisioning-Secret": settings.PROVISIONING_SECRET},
        timeout=30,
    )


def log_in(base_url, email, password=NEW_PASSWORD):
    return requests.post(
        f"{base_url}/api/auth/token", json={"email": email, "password": password}, timeout=30
    )


def manage(base_url, organization_id, token):
    return requests.get(
        f"{base_url}/api/manage/organizations/{organization_id}/drivers",
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )


def test_reset_password_activates_the_invited_admin_and_ends_old_tokens(base_url):
    created = provision(base_url, name="Acme", admin={"email": "ada@example.com", "name": "Ada"})
    assert created.status_code == 201, created.text
    organization_id = created.json()["organization"]["id"]
    user_id = created.json()["admin"]["id"]
    assert created.json()["invite"] is not None  # the membership waits on the invite

    assert reset_password(base_url, user_id).status_code == 200
    first = log_in(base_url, "ada@example.com")
    assert first.status_code == 200, first.text
    assert [o["id"] for o in first.json()["organizations"]] == [organization_id]
    old_token = first.json()["token"]
    assert manage(base_url, organization_id, old_token).status_code == 200
    assert Invite.objects.get(user_id=user_id).status == "accepted"
    assert Membership.objects.get(user_id=user_id).is_active

    # A second reset ends every token the old password gave.
    assert reset_password(base_url, user_id, "another-Passphrase-77").status_code == 200
    refused = manage(base_url, organization_id, old_token)
    assert refused.status_code == 401
    assert refused.json() == {
        "statusCode": 401,
        "message": "Invalid or missing token",
        "error": "Unauthorized",
        "code": "token_invalid",
        "requestId": refused.headers["X-Request-Id"],
    }
    second = log_in(base_url, "ada@example.com", "another-Passphrase-77")
    assert manage(base_url, organization_id, second.json()["token"]).status_code == 200
    assert log_in(base_url, "ada@example.com").status_code == 401  # the first password is gone


def test_accepting_the_invite_after_a_reset_says_it_was_accepted(base_url):
    created = provision(base_url, name="Acme", admin={"email": "ada@example.com"})
    user_id = created.json()["admin"]["id"]
    reset = requests.post(
        f"{base_url}/api/provisioning/admins/{user_id}/reset-password",
        json={},
        headers={"X-Provisioning-Secret": settings.PROVISIONING_SECRET},
        timeout=30,
    )
    temporary = reset.json()["temporaryPassword"]
    assert log_in(base_url, "ada@example.com", temporary).json()["organizations"] != []
    resend = requests.post(
        f"{base_url}/api/provisioning/admins/{user_id}/resend-invite",
        headers={"X-Provisioning-Secret": settings.PROVISIONING_SECRET},
        timeout=30,
    )
    assert resend.status_code == 400
    assert resend.json()["message"] == "User has no pending invite"


def test_reset_leaves_other_organizations_memberships_and_users_alone(base_url):
    ada = provision(base_url, name="Acme", admin={"email": "ada@example.com"}).json()
    bob = provision(base_url, name="Globex", admin={"email": "bob@example.com"}).json()
    assert reset_password(base_url, ada["admin"]["id"]).status_code == 200
    assert not Membership.objects.get(user_id=bob["admin"]["id"]).is_active
    assert Invite.objects.get(user_id=bob["admin"]["id"]).status == "pending"
