"""`API-Version: 1` on every answer of the service (docs/contract.md "Versioning and
compatibility"): API successes and errors, Django's own refusals, the admin, the tracking page,
health, metrics, the API docs, unknown routes; under real gunicorn static files and its own error
answers too.
The OpenAPI document states the release from pyproject.toml and declares the header."""

import tomllib

import pytest
from django.conf import settings
from django.test import Client

from tests import builders
from tests.gunicorn import HEALTHZ, gunicorn_server, raw_request, status_of
from tests.tracking.conftest import make_order

pytestmark = pytest.mark.django_db


def assert_versioned(response, status: int):
    assert response.status_code == status, response.content[:300]
    assert response["API-Version"] == "1"


def test_api_success_and_api_errors_carry_it(provisioning_client, api_client):
    assert_versioned(provisioning_client.get("/api/provisioning/organizations"), 200)
    # made by the authentication layer, and by the JSON error layer for an unknown route
    assert_versioned(api_client.get("/api/provisioning/organizations"), 401)
    assert_versioned(api_client.get("/api/no-such-route"), 404)
    assert_versioned(api_client.delete("/api/healthz-nowhere"), 404)
    # a body that is not JSON, and a method the operation does not take
    refused = provisioning_client.post(
        "/api/provisioning/organizations", "x", content_type="text/plain"
    )
    assert_versioned(refused, 415)
    assert_versioned(provisioning_client.put("/api/provisioning/organizations", {}), 405)


def test_answers_made_by_middleware_before_any_view_carry_it(api_client, settings):
    # Django refuses the Host inside the middleware stack; the request-size check answers
    # before routing: both answers pass through the version layer on their way out.
    settings.ALLOWED_HOSTS = ["testserver"]
    assert_versioned(api_client.get("/api/provisioning/organizations", HTTP_HOST="evil.test"), 400)
    too_big = api_client.generic(
        "POST",
        "/api/provisioning/organizations",
        b"{}",
        content_type="application/json",
        CONTENT_LENGTH=str(settings.MAX_REQUEST_BODY_BYTES + 1),
    )
    assert_versioned(too_big, 413)
    assert_versioned(api_client.get("/api/provisioning/organizations?q=%00"), 400)


def test_pages_for_people_carry_it(organization):
    client = Client()
    assert_versioned(client.get("/no-such-page"), 404)
    assert_versioned(client.get("/admin/login/"), 200)
    assert_versioned(client.get("/admin/"), 302)
    assert_versioned(builders.admin_site_client(organization).get("/admin/"), 200)
    order = make_order(organization)
    assert_versioned(client.get(f"/track/{order.tracking_token}"), 200)
    assert_versioned(client.get("/track/no-such-token"), 404)
    assert_versioned(client.get("/api/docs"), 200)
    assert_versioned(client.get("/api/schema"), 200)


def test_health_and_metrics_carry_it():
    client = Client()
    assert_versioned(client.get("/healthz"), 200)
    assert_versioned(client.get("/readyz"), 200)
    assert_versioned(client.get("/metrics"), 200)
    assert_versioned(client.head("/healthz"), 200)


def test_the_openapi_document_states_the_release_and_declares_the_header(api_client):
    with (settings.BASE_DIR / "pyproject.toml").open("rb") as pyproject:
        release = tomllib.load(pyproject)["project"]["version"]
    document = api_client.get("/api/schema", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    schema = document.json()
    assert schema["info"]["version"] == release
    assert schema["components"]["headers"]["API-Version"]["schema"]["enum"] == ["1"]
    answers = [
        answer
        for operations in schema["paths"].values()
        for operation in operations.values()
        for answer in operation["responses"].values()
    ]
    assert len(answers) > 100
    reference = {"$ref": "#/components/headers/API-Version"}
    assert all(answer["headers"]["API-Version"] == reference for answer in answers)


@pytest.mark.django_db(transaction=True)
def test_real_gunicorn_answers_and_its_own_refusals_carry_it(tmp_path):
    with gunicorn_server(tmp_path) as port:
        answers = {
            "health": raw_request(port, HEALTHZ),
            "static file": raw_request(
                port,
                b"GET /static/admin/css/base.css HTTP/1.1\r\nHost: localhost\r\n"
                b"Connection: close\r\n\r\n",
            ),
            "unknown route": raw_request(
                port, b"GET /api/nowhere HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
            ),
            # refused by gunicorn itself, before Django: an over-long request line
            "gunicorn 414": raw_request(
                port,
                b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: localhost\r\n\r\n",
            ),
            # and a header value with a NUL in it
            "gunicorn 400": raw_request(
                port, b"GET / HTTP/1.1\r\nHost: localhost\r\nX-Bad: a\x00b\r\n\r\n"
            ),
        }
    statuses = {name: status_of(raw) for name, raw in answers.items()}
    assert statuses == {
        "health": 200,
        "static file": 200,
        "unknown route": 404,
        "gunicorn 414": 414,
        "gunicorn 400": 400,
    }
    for name, raw in answers.items():
        head = raw.partition(b"\r\n\r\n")[0].lower()
        assert b"\r\napi-version: 1\r\n" in head + b"\r\n", (name, head)
