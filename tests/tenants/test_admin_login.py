"""Logging in to Django admin through its real form, as a person would (docs/contract.md
"Management API"): the form admits exactly whom the admin site admits, staff and the active
admins of an active organization, and an organization admin then sees and changes only their
own organization's objects.

Every client here enforces CSRF as a browser session does: the token comes from the page.
"""

import html
import re
from html.parser import HTMLParser
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from tenants.models import Driver, Organization, User
from tests import builders

pytestmark = pytest.mark.django_db

LOGIN = "/admin/login/?next=/admin/"
REFUSED = (
    "Please enter the correct email and password of a staff account or of an active "
    "organization's admin. Note that the password is case-sensitive."
)
SQUARE = builders.box(*builders.BERLIN, width_m=1000, height_m=1000)


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def form_token(response) -> str:
    """The csrfmiddlewaretoken of the page's form, as a browser would send it."""
    match = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', response.content)
    assert match, "the page has no CSRF token"
    return match.group(1).decode()


class _FormFields(HTMLParser):
    """What a browser submits for a page's form as it stands: inputs, checked boxes, selected
    options, textareas."""

    def __init__(self):
        super().__init__()
        self.data: dict[str, str] = {}
        self._select: str | None = None
        self._textarea: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        name = attrs.get("name")
        if tag == "input" and name and attrs.get("type") not in ("submit", "button", "file"):
            if attrs.get("type") in ("checkbox", "radio"):
                if "checked" in attrs:
                    self.data[name] = attrs.get("value") or "on"
            else:
                self.data[name] = attrs.get("value") or ""
        elif tag == "select":
            self._select = name
        elif tag == "option" and self._select and "selected" in attrs:
            self.data[self._select] = attrs.get("value") or ""
        elif tag == "textarea" and name:
            self._textarea = name
            self.data[name] = ""

    def handle_endtag(self, tag):
        if tag == "select":
            self._select = None
        elif tag == "textarea":
            self._textarea = None

    def handle_data(self, data):
        if self._textarea:
            self.data[self._textarea] += data


def form_fields(response) -> dict[str, str]:
    parser = _FormFields()
    parser.feed(response.content.decode())
    return parser.data


def log_in(email: str, password: str = builders.PASSWORD) -> tuple[Client, object]:
    client = Client(enforce_csrf_checks=True)
    page = client.get(LOGIN)
    assert page.status_code == 200
    assert "csrftoken" in client.cookies  # the cookie half of the double submit
    answer = client.post(
        LOGIN,
        {
            "csrfmiddlewaretoken": form_token(page),
            "username": email,
            "password": password,
            "next": "/admin/",
        },
    )
    return client, answer


def text(response) -> str:
    return html.unescape(response.content.decode())


def test_org_admin_logs_in_through_the_form_and_sees_only_their_zones(
    organization, other_organization
):
    builders.zone(organization, "Our Zone", SQUARE)
    builders.zone(other_organization, "Their Zone", SQUARE)
    admin = builders.admin(organization, "ada@acme.example", "Ada Admin")
    assert not admin.is_staff

    client, answer = log_in("ada@acme.example")

    assert answer.status_code == 302
    assert answer["Location"] == "/admin/"
    index = client.get("/admin/")
    assert index.status_code == 200
    assert "/admin/zones/zone/" in text(index)
    listing = client.get("/admin/zones/zone/")
    assert listing.status_code == 200
    assert "Our Zone" in text(listing)
    assert "Their Zone" not in text(listing)


def test_org_admin_changes_their_objects_and_not_another_organizations(
    organization, other_organization
):
    ours = Driver.objects.create(organization=organization, name="Our Driver")
    theirs = Driver.objects.create(organization=other_organization, name="Their Driver")
    builders.admin(organization, "ada@acme.example", "Ada Admin")
    client, _ = log_in("ada@acme.example")

    change = client.get(f"/admin/tenants/driver/{ours.pk}/change/")
    assert change.status_code == 200
    saved = client.post(
        f"/admin/tenants/driver/{ours.pk}/change/",
        {**form_fields(change), "name": "Renamed Driver"},
    )
    assert saved.status_code == 302, text(saved)
    ours.refresh_from_db()
    assert ours.name == "Renamed Driver"
    assert client.get(f"/admin/tenants/driver/{theirs.pk}/change/").status_code in (302, 404)


def test_email_is_read_as_the_token_endpoint_reads_it(organization):
    builders.admin(organization, "ada@acme.example", "Ada Admin")
    _, answer = log_in("  Ada@ACME.example ")
    assert answer.status_code == 302


def test_a_post_without_the_pages_token_is_refused(organization):
    builders.admin(organization, "ada@acme.example", "Ada Admin")
    client = Client(enforce_csrf_checks=True)
    client.get(LOGIN)
    answer = client.post(LOGIN, {"username": "ada@acme.example", "password": builders.PASSWORD})
    assert answer.status_code == 403
    assert client.get("/admin/").status_code == 302


@pytest.mark.parametrize(
    "case",
    [
        "member of an inactive organization",
        "no membership",
        "member but not admin",
        "invite not accepted",
        "wrong password",
    ],
)
def test_the_form_refuses_who_the_site_refuses(organization, case):
    if case == "member of an inactive organization":
        builders.admin(organization, "ada@acme.example", "Ada Admin")
        Organization.objects.filter(pk=organization.pk).update(is_active=False)
    elif case == "no membership":
        builders.admin(None, "ada@acme.example", "Ada Admin")
    elif case == "member but not admin":
        builders.admin(organization, "ada@acme.example", "Ada Admin", org_role="member")
    elif case == "invite not accepted":
        builders.admin(organization, "ada@acme.example", "Ada Admin", is_active=False)
    else:
        builders.admin(organization, "ada@acme.example", "Ada Admin")
    password = "not-the-password-1" if case == "wrong password" else builders.PASSWORD

    client, answer = log_in("ada@acme.example", password)

    assert answer.status_code == 200  # the form again, with its error
    assert REFUSED in text(answer)
    assert '<p class="errornote">' in answer.content.decode()
    assert client.get("/admin/").status_code == 302  # no session was opened
    assert "_auth_user_id" not in client.session


def test_staff_and_superusers_still_log_in(organization):
    User.objects.create_superuser(email="root@example.com", password=builders.PASSWORD)
    User.objects.create_user(email="staff@example.com", password=builders.PASSWORD, is_staff=True)
    for email in ("root@example.com", "staff@example.com"):
        client, answer = log_in(email)
        assert answer.status_code == 302, email
        assert client.get("/admin/").status_code == 200


def test_deactivating_the_organization_ends_its_admins_admin_at_once(organization):
    builders.zone(organization, "Our Zone", SQUARE)
    builders.admin(organization, "ada@acme.example", "Ada Admin")
    client, _ = log_in("ada@acme.example")
    assert client.get("/admin/zones/zone/").status_code == 200

    organization.is_active = False
    organization.save(update_fields=["is_active"])

    answer = client.get("/admin/zones/zone/")
    assert answer.status_code == 302
    assert answer["Location"].startswith("/admin/login/")


def test_org_admin_cannot_rename_or_deactivate_their_organization(organization):
    builders.admin(organization, "ada@acme.example", "Ada Admin")
    client, _ = log_in("ada@acme.example")
    url = f"/admin/tenants/organization/{organization.pk}/change/"
    change = client.get(url)
    assert change.status_code == 200
    assert 'name="slug"' not in change.content.decode()
    assert 'name="is_active"' not in change.content.decode()

    fields = form_fields(change)
    assert fields["csrfmiddlewaretoken"]
    # What a hand-made request could add; "is_active" left out reads as an unchecked box,
    # which would deactivate the organization if the field were editable.
    saved = client.post(url, {**fields, "name": "Acme Renamed", "slug": "taken-over"})

    assert saved.status_code == 302, text(saved)
    organization.refresh_from_db()
    assert organization.name == "Acme Renamed"
    assert organization.slug == "acme-deliveries"
    assert organization.is_active is True


def test_superuser_still_changes_an_organizations_slug_and_state(organization):
    User.objects.create_superuser(email="root@example.com", password=builders.PASSWORD)
    client, _ = log_in("root@example.com")
    url = f"/admin/tenants/organization/{organization.pk}/change/"
    change = client.get(url)
    assert 'name="slug"' in change.content.decode()
    assert 'name="is_active"' in change.content.decode()


def test_the_login_make_run_prints_opens_django_admin():
    """The issue as a new user met it: `manage.py demo` prints a login for Django admin."""
    out = StringIO()
    call_command("demo", stdout=out)
    printed = re.search(r"Management login: (\S+) / (\S+) \(Django admin", out.getvalue())
    email, password = printed.groups()

    client, answer = log_in(email, password)

    assert answer.status_code == 302
    listing = client.get("/admin/zones/zone/")
    assert listing.status_code == 200
    assert "3 zones" in text(listing)
