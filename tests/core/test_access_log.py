"""One access line per request (docs/operations.md "Logs"): request id, method, route (never the
raw path: tokens are secrets), status, duration and the caller's organization; no warning on
HEAD."""

import json
import logging
import re

import pytest
import requests
from django.conf import settings
from django.test import Client

from delivery.log_format import JsonFormatter
from delivery.middleware import RequestIdLogFilter
from tenants.models import User
from tests import builders
from tests.gunicorn import gunicorn_server

pytestmark = pytest.mark.django_db

CALLER_FIELDS = ("organizationId", "apiKeyId", "userId")


@pytest.fixture
def access_lines():
    """The JSON lines `delivery.access` writes, as the production handler formats them."""
    lines: list[dict] = []

    class Capture(logging.Handler):
        def emit(self, record):
            lines.append(json.loads(self.format(record)))

    handler = Capture()
    handler.addFilter(RequestIdLogFilter())
    handler.setFormatter(JsonFormatter())
    access = logging.getLogger("delivery.access")
    access.addHandler(handler)
    yield lines
    access.removeHandler(handler)


def only_line(lines: list[dict]) -> dict:
    assert len(lines) == 1, lines
    return lines[0]


def test_an_anonymous_request_has_one_line_with_its_fields_and_no_caller(access_lines):
    response = Client().get("/healthz")

    line = only_line(access_lines)
    assert line["logger"] == "delivery.access"
    assert line["level"] == "INFO"
    assert line["requestId"] == response["X-Request-Id"]
    assert (line["method"], line["route"], line["status"]) == ("GET", "/healthz", 200)
    assert isinstance(line["durationMs"], float) and 0 <= line["durationMs"] < 5000
    assert {name: line[name] for name in CALLER_FIELDS} == dict.fromkeys(CALLER_FIELDS)
    assert re.fullmatch(r"GET /healthz 200 \d+\.\dms", line["message"])


def test_an_api_key_request_names_the_key_and_its_organization(organization, access_lines):
    issued = builders.api_key(organization, "erp")

    response = builders.key_client(issued).get("/api/integrations/erp/orders/SO-404")

    assert response.status_code == 404
    line = only_line(access_lines)
    assert line["route"] == "/api/integrations/erp/orders/<path:external_ref>"
    assert line["status"] == 404
    assert line["organizationId"] == str(organization.id)
    assert line["apiKeyId"] == str(issued.api_key.id)
    assert line["userId"] is None
    assert f"organizationId={organization.id} apiKeyId={issued.api_key.id}" in line["message"]


def test_a_refused_api_key_names_no_organization(organization, access_lines):
    client = Client(headers={"X-API-Key": "sk_erp_not-a-key"})

    assert client.get("/api/integrations/erp/orders/SO-1").status_code == 401

    line = only_line(access_lines)
    assert line["status"] == 401
    assert {name: line[name] for name in CALLER_FIELDS} == dict.fromkeys(CALLER_FIELDS)


def test_a_management_request_names_the_organization_of_its_path(
    organization, manager, access_lines
):
    response = manager.get(f"/api/manage/organizations/{organization.id}/zones")

    assert response.status_code == 200
    line = only_line(access_lines)
    assert line["route"] == "/api/manage/organizations/<str:org_id>/zones"
    assert str(organization.id) not in line["route"]
    assert line["organizationId"] == str(organization.id)
    assert line["userId"] == str(User.objects.get(email="ops@example.com").id)
    assert line["apiKeyId"] is None


def test_a_management_request_for_an_organization_not_administered_names_none(
    organization, other_organization, manager, access_lines
):
    response = manager.get(f"/api/manage/organizations/{other_organization.id}/zones")

    assert response.status_code == 404
    line = only_line(access_lines)
    assert line["organizationId"] is None
    assert line["userId"] == str(User.objects.get(email="ops@example.com").id)


def test_a_django_admin_page_names_the_organization_of_its_admin(
    organization, fast_password_hashing, access_lines
):
    client = builders.admin_site_client(organization)
    access_lines.clear()  # the login

    assert client.get("/admin/").status_code == 200

    line = only_line(access_lines)
    assert line["route"] == "/admin"
    assert line["organizationId"] == str(organization.id)
    assert line["userId"] == str(User.objects.get(email="admin@example.com").id)


@pytest.mark.parametrize(
    ("path", "route"),
    [
        ("/api/track/{token}", "/api/track/<str:token>"),
        ("/track/{token}", "/track/<str:token>"),
        ("/api/provisioning/invite/{token}", "/api/provisioning/invite/<str:token>"),
    ],
)
def test_tokens_in_paths_are_never_written(path, route, access_lines):
    token = "tok_SecretTokenValue_1234567890"

    Client().get(path.format(token=token))

    line = only_line(access_lines)
    assert line["route"] == route
    assert token not in json.dumps(line)


def test_the_plain_format_reads_as_one_line(caplog):
    caplog.set_level(logging.INFO, logger="delivery.access")

    response = Client().get("/healthz")

    (record,) = [r for r in caplog.records if r.name == "delivery.access"]
    RequestIdLogFilter().filter(record)  # outside the request now: "-"
    record.request_id = response["X-Request-Id"]
    plain = logging.Formatter(settings.LOGGING["formatters"]["plain"]["format"]).format(record)
    assert re.fullmatch(
        r"\S+ \S+ INFO delivery\.access \[[0-9a-f]{32}\] GET /healthz 200 \d+\.\dms", plain
    )


#: path requested, its route in the access line
ROUTES = [
    ("/healthz", "/healthz"),
    ("/api/docs/", "/api/docs"),
    ("/track/tok_SecretTokenValue", "/track/<str:token>"),
    ("/api/no/such/route", "unmatched"),
    ("/metrics", "/metrics"),
]


@pytest.mark.django_db(transaction=True)
def test_gunicorn_writes_one_json_line_per_request_and_no_warning_on_head(tmp_path):
    """As an operator runs it (LOG_FORMAT=json): every line of the log is JSON, each request has
    its access line, and HEAD answers carry no body (gunicorn warned on every one that did)."""
    with gunicorn_server(tmp_path, LOG_FORMAT="json") as port:
        base = f"http://127.0.0.1:{port}"
        answers = [
            (requests.get(base + path, timeout=10), requests.head(base + path, timeout=10))
            for path, _route in ROUTES
        ]
    log = (tmp_path / "gunicorn.log").read_text()

    for (path, _route), (get, head) in zip(ROUTES, answers, strict=True):
        assert head.status_code == get.status_code
        assert head.content == b""
        if path != "/metrics":  # its counts moved between the two
            assert head.headers.get("Content-Length") == get.headers.get("Content-Length")
    entries = [json.loads(line) for line in log.splitlines()]
    assert [e for e in entries if e["level"] != "INFO"] == []
    access = [e for e in entries if e["logger"] == "delivery.access"]
    expected = [("GET", "/healthz", 200)]  # the probe that saw it start
    for (_path, route), (get, _head) in zip(ROUTES, answers, strict=True):
        expected += [("GET", route, get.status_code), ("HEAD", route, get.status_code)]
    assert [(e["method"], e["route"], e["status"]) for e in access] == expected
    assert len({e["requestId"] for e in access}) == len(access)
    assert "tok_SecretTokenValue" not in log


@pytest.mark.django_db(transaction=True)
def test_access_log_false_turns_the_line_off(tmp_path):
    with gunicorn_server(tmp_path, LOG_FORMAT="json", ACCESS_LOG="false") as port:
        assert requests.get(f"http://127.0.0.1:{port}/healthz", timeout=10).status_code == 200
    log = (tmp_path / "gunicorn.log").read_text()

    loggers = {json.loads(line)["logger"] for line in log.splitlines()}
    assert "gunicorn.error" in loggers
    assert "delivery.access" not in loggers
