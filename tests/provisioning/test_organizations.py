"""Provisioning: organizations, admins, invites and passwords (contract "Provisioning")."""

import re
from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone
from rest_framework.test import APIClient

from provisioning.models import Invite
from tenants.models import Driver, Membership, User
from tests import builders
from tests.conftest import assert_error

pytestmark = pytest.mark.django_db

ORGS = "/api/provisioning/organizations"


def create_org(client, name="Acme", email="ada@example.com", **extra):
    return client.post(
        ORGS, {"name": name, "admin": {"email": email, "name": "Ada"}, **extra}, format="json"
    )


def token_from(mail) -> str:
    return re.search(r"/invite/([A-Za-z0-9_\-]+)", mail.body).group(1)


def test_missing_secret_is_401(api_client):
    assert_error(api_client.get(ORGS), 401, "Missing X-Provisioning-Secret header")


def test_wrong_secret_is_401(api_client):
    api_client.credentials(HTTP_X_PROVISIONING_SECRET="nope")
    assert_error(api_client.get(ORGS), 401, "Invalid provisioning secret")


def test_create_organization_with_new_admin_sends_invite(provisioning_client, mailoutbox):
    response = create_org(provisioning_client, name="Acme Deliveries")

    assert response.status_code == 201
    body = response.json()
    assert body["organization"]["slug"] == "acme-deliveries"
    assert body["organization"]["name"] == "Acme Deliveries"
    assert body["organization"]["isActive"] is True
    assert body["admin"]["email"] == "ada@example.com"
    assert body["admin"]["isNewUser"] is True
    assert body["invite"]["emailSent"] is True
    expires = timezone.datetime.fromisoformat(body["invite"]["expiresAt"])
    assert abs(expires - (timezone.now() + timedelta(days=7))) < timedelta(minutes=1)
    assert len(mailoutbox) == 1
    assert mailoutbox[0].to == ["ada@example.com"]


def test_create_organization_with_existing_user_has_no_invite(provisioning_client, mailoutbox):
    User.objects.create_user(email="ada@example.com", password="x-Long-enough-42")
    body = create_org(provisioning_client).json()
    assert body["admin"]["isNewUser"] is False
    assert body["invite"] is None
    assert mailoutbox == []


def test_generated_slug_gets_a_suffix_when_taken(provisioning_client):
    first = create_org(provisioning_client, name="Acme", email="a@example.com").json()
    second = create_org(provisioning_client, name="Acme", email="b@example.com").json()
    assert first["organization"]["slug"] == "acme"
    assert second["organization"]["slug"] == "acme-2"


def test_taken_slug_is_400_with_the_interface_body(provisioning_client):
    create_org(provisioning_client, slug="acme")
    response = create_org(provisioning_client, email="b@example.com", slug="acme")
    assert_error(response, 400, "Slug acme is already taken")
    assert response.json()["error"] == "Bad Request"


@pytest.mark.parametrize("slug", ["Acme", "acme_co", "-acme", "a--b", "a" * 64, ""])
def test_malformed_slug_is_400(provisioning_client, slug):
    assert_error(create_org(provisioning_client, slug=slug), 400)


def test_missing_name_is_400(provisioning_client):
    response = provisioning_client.post(ORGS, {"admin": {"email": "a@example.com"}}, format="json")
    assert_error(response, 400, ["Organization name is required"])


def test_missing_admin_email_is_400(provisioning_client):
    response = provisioning_client.post(ORGS, {"name": "Acme"}, format="json")
    assert_error(response, 400, ["admin.email is required"])


def test_wrong_types_are_400_naming_each_field(provisioning_client):
    response = provisioning_client.post(
        ORGS, {"name": 12, "admin": {"email": "not-an-email"}}, format="json"
    )
    body = assert_error(response, 400)
    assert body["message"] == [
        "name: must be a string",
        "admin.email must be a valid e-mail address",
    ]


def test_list_organizations_with_counts_and_admins(
    provisioning_client, django_assert_max_num_queries
):
    created = create_org(provisioning_client, name="Acme").json()
    organization_id = created["organization"]["id"]
    Driver.objects.create(organization_id=organization_id, name="Dee")
    for n in range(5):
        create_org(provisioning_client, name=f"Other {n}", email=f"o{n}@example.com")

    with django_assert_max_num_queries(3):  # constant: does not grow with the organizations
        response = provisioning_client.get(ORGS)

    assert response.status_code == 200
    acme = next(o for o in response.json() if o["id"] == organization_id)
    assert acme["counts"] == {"members": 1, "drivers": 1, "orders": 0}
    assert acme["admins"] == [
        {
            "id": created["admin"]["id"],
            "email": "ada@example.com",
            "name": "Ada",
            "orgRole": "admin",
            "invitePending": True,
        }
    ]


def test_add_admin_to_organization(provisioning_client, mailoutbox):
    org_id = create_org(provisioning_client).json()["organization"]["id"]
    response = provisioning_client.post(
        f"{ORGS}/{org_id}/admins", {"email": "Bob@Example.com", "name": "Bob"}, format="json"
    )
    assert response.status_code == 201
    body = response.json()
    assert body["admin"]["email"] == "bob@example.com"
    assert body["admin"]["isNewUser"] is True
    assert body["admin"]["alreadyMember"] is False
    assert body["invite"]["emailSent"] is True

    again = provisioning_client.post(
        f"{ORGS}/{org_id}/admins", {"email": "bob@example.com"}, format="json"
    )
    assert again.status_code == 201
    assert again.json()["admin"]["alreadyMember"] is True
    assert again.json()["admin"]["isNewUser"] is False


@pytest.mark.parametrize("org_id", ["00000000-0000-0000-0000-000000000000", "not-a-uuid", "1"])
def test_add_admin_to_unknown_organization_is_404(provisioning_client, org_id):
    response = provisioning_client.post(
        f"{ORGS}/{org_id}/admins", {"email": "a@example.com"}, format="json"
    )
    assert_error(response, 404, "Organization not found")


def test_invite_read_and_accept_are_public(provisioning_client, mailoutbox):
    create_org(provisioning_client, name="Acme", slug="acme")
    token = token_from(mailoutbox[0])
    public = APIClient()

    read = public.get(f"/api/provisioning/invite/{token}")
    assert read.status_code == 200
    body = read.json()
    assert body["email"] == "ada@example.com"
    assert body["organization"]["slug"] == "acme"
    assert body["status"] == "pending"

    accepted = public.post(
        f"/api/provisioning/invite/{token}/accept",
        {"password": "correct-Horse-battery-9"},
        format="json",
    )
    assert accepted.status_code == 200
    assert accepted.json() == {"ok": True, "email": "ada@example.com"}
    user = User.objects.get(email="ada@example.com")
    assert user.check_password("correct-Horse-battery-9")
    assert Membership.objects.get(user=user).is_active is True
    assert public.get(f"/api/provisioning/invite/{token}").json()["status"] == "accepted"

    again = public.post(
        f"/api/provisioning/invite/{token}/accept",
        {"password": "correct-Horse-battery-9"},
        format="json",
    )
    assert_error(again, 400, "Invite has already been accepted")


def test_invite_token_is_stored_hashed(provisioning_client, mailoutbox):
    create_org(provisioning_client)
    token = token_from(mailoutbox[0])
    invite = Invite.objects.get()
    assert token not in invite.token_digest
    assert not Invite.objects.filter(token_digest=token).exists()


def test_expired_invite_is_refused(provisioning_client, mailoutbox):
    create_org(provisioning_client)
    token = token_from(mailoutbox[0])
    with time_machine.travel(timezone.now() + timedelta(days=7, minutes=1)):
        response = APIClient().post(
            f"/api/provisioning/invite/{token}/accept",
            {"password": "correct-Horse-battery-9"},
            format="json",
        )
        assert_error(response, 400, "Invite has expired")
        assert APIClient().get(f"/api/provisioning/invite/{token}").json()["status"] == "expired"


def test_weak_password_is_refused_with_validator_messages(provisioning_client, mailoutbox):
    create_org(provisioning_client)
    token = token_from(mailoutbox[0])
    response = APIClient().post(
        f"/api/provisioning/invite/{token}/accept", {"password": "123"}, format="json"
    )
    body = assert_error(response, 400)
    assert any("too short" in m for m in body["message"])


@pytest.mark.parametrize("method", ["get", "post"])
def test_unknown_invite_is_404(method):
    response = getattr(APIClient(), method)(
        "/api/provisioning/invite/nope" + ("/accept" if method == "post" else ""),
        {"password": "whatever-Long-1"},
        format="json",
    )
    assert_error(response, 404, "Invite not found")


def test_resend_invite_replaces_the_token(provisioning_client, mailoutbox):
    user_id = create_org(provisioning_client).json()["admin"]["id"]
    old_token = token_from(mailoutbox[0])

    response = provisioning_client.post(f"/api/provisioning/admins/{user_id}/resend-invite")

    assert response.status_code == 200
    body = response.json()
    assert body["admin"] == {"id": user_id, "email": "ada@example.com", "name": "Ada"}
    assert body["invite"]["emailSent"] is True
    new_token = token_from(mailoutbox[1])
    assert new_token != old_token
    assert_error(APIClient().get(f"/api/provisioning/invite/{old_token}"), 404, "Invite not found")
    assert APIClient().get(f"/api/provisioning/invite/{new_token}").status_code == 200


def test_resend_without_pending_invite_is_400(provisioning_client):
    User.objects.create_user(email="ada@example.com", password="x-Long-enough-42")
    user_id = create_org(provisioning_client).json()["admin"]["id"]
    response = provisioning_client.post(f"/api/provisioning/admins/{user_id}/resend-invite")
    assert_error(response, 400, "User has no pending invite")


def test_resend_for_unknown_user_is_404(provisioning_client):
    response = provisioning_client.post("/api/provisioning/admins/not-a-uuid/resend-invite")
    assert_error(response, 404, "User not found")


def test_reset_password_generates_a_temporary_one(provisioning_client):
    user_id = create_org(provisioning_client).json()["admin"]["id"]
    response = provisioning_client.post(
        f"/api/provisioning/admins/{user_id}/reset-password", {}, format="json"
    )
    assert response.status_code == 200
    body = response.json()
    assert body["ok"] is True
    assert body["email"] == "ada@example.com"
    assert len(body["temporaryPassword"]) >= 12
    assert User.objects.get(pk=user_id).check_password(body["temporaryPassword"])


def reset_password(provisioning_client, user_id, password: str):
    return provisioning_client.post(
        f"/api/provisioning/admins/{user_id}/reset-password", {"password": password}, format="json"
    )


def test_reset_password_with_given_password(provisioning_client):
    user_id = create_org(provisioning_client).json()["admin"]["id"]
    response = reset_password(provisioning_client, user_id, "a-Good-passphrase-7")
    assert response.json() == {"ok": True, "email": "ada@example.com"}
    assert User.objects.get(pk=user_id).check_password("a-Good-passphrase-7")


def test_reset_password_refuses_a_weak_one(provisioning_client):
    user_id = create_org(provisioning_client).json()["admin"]["id"]
    response = reset_password(provisioning_client, user_id, "password")
    body = assert_error(response, 400)
    assert any("too common" in m for m in body["message"])


def test_31st_organization_in_an_hour_is_429(provisioning_client):
    for n in range(30):
        assert (
            create_org(provisioning_client, name=f"Org {n}", email=f"u{n}@example.com").status_code
            == 201
        )
    response = create_org(provisioning_client, name="One too many", email="late@example.com")
    assert_error(response, 429, "Too many requests")
    assert int(response["Retry-After"]) >= 1


def test_invite_endpoints_are_limited_per_client_address(settings):
    settings.INVITE_RATE_LIMIT = "3/h"
    client = APIClient()
    for _ in range(3):
        assert client.get("/api/provisioning/invite/nope").status_code == 404
    assert_error(client.get("/api/provisioning/invite/nope"), 429)
    other_address = APIClient(REMOTE_ADDR="10.1.2.3")
    assert other_address.get("/api/provisioning/invite/nope").status_code == 404


def test_rate_limit_can_be_switched_off(provisioning_client, settings):
    settings.RATELIMIT_ENABLE = False
    settings.PROVISIONING_RATE_LIMITS = {
        **settings.PROVISIONING_RATE_LIMITS,
        "organizations.list": "1/h",
    }
    for _ in range(3):
        assert provisioning_client.get(ORGS).status_code == 200


def test_organization_fixture_helper_is_isolated():
    first, second = builders.organization(), builders.organization()
    assert first.slug != second.slug
