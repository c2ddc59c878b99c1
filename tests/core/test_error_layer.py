"""The error layer under /api/ (contract "Conventions", "Errors"): one body for every error, request
ids."""

import json
import logging

import pytest
from django.test import Client

from delivery.log_format import JsonFormatter
from delivery.middleware import RequestIdLogFilter
from provisioning import selectors
from tests.conftest import assert_error

pytestmark = pytest.mark.django_db

ORGS = "/api/provisioning/organizations"


@pytest.fixture
def client_with_secret(settings) -> Client:
    # raise_request_exception=False: see the 500 the middleware renders, as a client would.
    return Client(
        raise_request_exception=False,
        headers={"X-Provisioning-Secret": settings.PROVISIONING_SECRET},
    )


def test_unknown_route_is_a_json_404():
    assert_error(Client().get("/api/no/such/thing"), 404, "Not found", code="not_found")


def test_wrong_method_is_a_json_405(client_with_secret):
    response = client_with_secret.put(ORGS, "{}", content_type="application/json")
    assert_error(response, 405, "Method PUT not allowed", code="method_not_allowed")


def test_invalid_json_is_400(client_with_secret):
    response = client_with_secret.post(ORGS, "{not json", content_type="application/json")
    assert_error(response, 400, "Request body is not valid JSON", code="invalid_json")


def test_invalid_utf8_is_400(client_with_secret):
    response = client_with_secret.post(ORGS, b"\xff\xfe{", content_type="application/json")
    assert_error(response, 400, "Request body is not valid JSON", code="invalid_json")


def test_non_json_body_is_415(client_with_secret):
    response = client_with_secret.post(
        ORGS, "name=x", content_type="application/x-www-form-urlencoded"
    )
    assert_error(
        response, 415, "Content-Type must be application/json", code="unsupported_media_type"
    )


def test_body_over_one_mebibyte_is_413(client_with_secret):
    body = '{"name": "' + "x" * (1024 * 1024) + '"}'
    response = client_with_secret.post(ORGS, body, content_type="application/json")
    assert_error(response, 413, "Request body must not exceed 1 MiB", code="payload_too_large")


def test_json_array_body_is_400(client_with_secret):
    response = client_with_secret.post(ORGS, "[1, 2]", content_type="application/json")
    assert_error(response, 400, code="validation_failed")


def test_deeply_nested_json_is_400_not_500(client_with_secret):
    body = "[" * 100_000 + "]" * 100_000
    response = client_with_secret.post(ORGS, body, content_type="application/json")
    assert response.status_code in (400, 413)
    assert_error(response, response.status_code)


def test_every_response_carries_a_request_id():
    response = Client().get("/api/no/such/thing")
    assert len(response["X-Request-Id"]) >= 16


def test_client_request_id_is_echoed():
    response = Client(headers={"X-Request-Id": "abc-123"}).get("/healthz")
    assert response["X-Request-Id"] == "abc-123"


def test_unsafe_client_request_id_is_replaced():
    response = Client(headers={"X-Request-Id": "bad id\twith spaces"}).get("/healthz")
    assert response["X-Request-Id"] != "bad id\twith spaces"


def test_paths_work_with_and_without_trailing_slash(client_with_secret):
    assert client_with_secret.get(ORGS).status_code == 200
    assert client_with_secret.get(ORGS + "/").status_code == 200


def test_unhandled_error_is_a_json_500_without_internals(client_with_secret, monkeypatch):
    def explode():
        raise RuntimeError("secret internals: SELECT * FROM users")

    monkeypatch.setattr(selectors, "organization_list_with_counts", explode)
    response = client_with_secret.get(ORGS)
    body = assert_error(response, 500, "Internal server error", code="internal_error")
    assert "SELECT" not in response.content.decode()
    assert body["error"] == "Internal Server Error"


def test_invalid_utf8_in_path_is_a_json_404(client_with_secret):
    response = client_with_secret.get("/api/provisioning/organizations/%ff%fe/api-keys")
    assert_error(response, 404, code="organization_not_found")


def test_log_lines_carry_the_generated_request_id_when_the_client_sent_none(
    client_with_secret, monkeypatch
):
    """The JSON log line of a failing request names the id the response carries (contract
    "Errors")."""
    lines: list[str] = []

    class Capture(logging.Handler):
        def emit(self, record):
            lines.append(self.format(record))

    handler = Capture()
    handler.addFilter(RequestIdLogFilter())
    handler.setFormatter(JsonFormatter())
    middleware_logger = logging.getLogger("delivery.middleware")
    middleware_logger.addHandler(handler)

    def explode():
        raise RuntimeError("boom")

    monkeypatch.setattr(selectors, "organization_list_with_counts", explode)
    try:
        response = client_with_secret.get(ORGS)
    finally:
        middleware_logger.removeHandler(handler)

    assert response.status_code == 500
    request_id = response["X-Request-Id"]
    assert len(request_id) == 32
    entry = json.loads(lines[-1])
    assert entry["requestId"] == request_id
    assert entry["level"] == "ERROR"
    assert entry["message"] == f"unhandled error on GET {ORGS}"
    assert "RuntimeError: boom" in entry["exception"]


def test_log_lines_outside_a_request_carry_a_dash():
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "background work", None, None)
    RequestIdLogFilter().filter(record)
    assert json.loads(JsonFormatter().format(record))["requestId"] == "-"


def test_body_nested_deeper_than_64_levels_is_400(client_with_secret):
    """Found by the hostile tests: zone metadata 900 levels deep was stored, then rendering the
    answer exhausted the recursion limit (a 500)."""
    name_in = '{"name": ' + '{"a": ' * 63 + "1" + "}" * 63 + "}"  # 64 levels: read
    response = client_with_secret.post(ORGS, name_in, content_type="application/json")
    assert response.status_code == 400
    assert "Request body must not nest" not in response.content.decode()
    too_deep = '{"name": ' + '{"a": ' * 64 + "1" + "}" * 64 + "}"  # 65 levels
    response = client_with_secret.post(ORGS, too_deep, content_type="application/json")
    assert_error(
        response, 400, "Request body must not nest deeper than 64 levels", code="json_too_deep"
    )
    for depth, status in ((64, 400), (65, 400)):
        body = "[" * depth + "]" * depth
        response = client_with_secret.post(ORGS, body, content_type="application/json")
        deep = "Request body must not nest deeper than 64 levels"
        assert (assert_error(response, status)["message"] == deep) is (depth == 65)


def test_query_string_that_is_not_utf8_is_400(client_with_secret):
    response = client_with_secret.get(ORGS + "?q=%ff")
    assert_error(response, 400, "Query string is not valid UTF-8", code="query_not_utf8")
    assert client_with_secret.get(ORGS + "?q=%C3%A9t%C3%A9").status_code == 200
