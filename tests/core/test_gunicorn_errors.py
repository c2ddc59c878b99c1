"""Requests gunicorn refuses before Django answers them: over-long request lines, too many or too
large header fields, malformed header values. Each gets the contract's JSON error body
(docs/contract.md "Errors"), and requests just inside the limits reach Django. Real gunicorn,
started from gunicorn.conf.py as `make run` starts it, spoken to over raw sockets."""

import json
import secrets

import pytest
from cryptography.fernet import Fernet

from tests.conftest import assert_error_body
from tests.gunicorn import HEALTHZ, body_of, gunicorn_server, raw_request, status_of

pytestmark = pytest.mark.django_db

LINE_LIMIT = 8190
FIELD_SIZE_LIMIT = 8190
FIELDS_LIMIT = 100
PATH = "/api/provisioning/organizations"


@pytest.fixture(scope="module")
def port(tmp_path_factory, django_db_blocker):
    with (
        django_db_blocker.unblock(),
        gunicorn_server(tmp_path_factory.mktemp("gunicorn")) as port,
    ):
        yield port


def request(line: str, *headers: bytes) -> bytes:
    return (
        line.encode()
        + b"\r\nHost: localhost\r\n"
        + b"".join(header + b"\r\n" for header in headers)
        + b"Connection: close\r\n\r\n"
    )


def get(target: str, *headers: bytes) -> bytes:
    return request(f"GET {target} HTTP/1.1", *headers)


def header_of(raw: bytes, name: str) -> str | None:
    head = raw.partition(b"\r\n\r\n")[0].decode("latin-1")
    for line in head.split("\r\n")[1:]:
        field, _, value = line.partition(":")
        if field.strip().lower() == name.lower():
            return value.strip()
    return None


def is_chunked(raw: bytes) -> bool:
    return (header_of(raw, "Transfer-Encoding") or "").lower() == "chunked"


def unchunked(body: bytes) -> bytes:
    """A chunked body's data (an answer Django made without a Content-Length)."""
    data = b""
    while True:
        size_line, _, body = body.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            return data
        data, body = data + body[:size], body[size + 2 :]


def json_error(raw: bytes, status: int, reason: str, code: str | None = None) -> dict:
    """The contract's error body, its `requestId` the answer's `X-Request-Id`."""
    assert status_of(raw) == status, raw[:500]
    assert header_of(raw, "Content-Type") == "application/json", raw[:500]
    body = json.loads(unchunked(body_of(raw)) if is_chunked(raw) else body_of(raw))
    assert_error_body(body, status, request_id=header_of(raw, "X-Request-Id"), code=code)
    assert body["error"] == reason
    return body


def target_of_length(length: int, path: str = PATH) -> str:
    """A request target that makes `GET <target> HTTP/1.1` exactly `length` bytes long."""
    padding = length - len(f"GET {path}?q= HTTP/1.1")
    return f"{path}?q={'a' * padding}"


def test_a_request_line_over_the_limit_is_414_json(port):
    raw = raw_request(port, get(target_of_length(LINE_LIMIT + 1)))
    body = json_error(raw, 414, "URI Too Long", "request_line_too_long")
    assert isinstance(body["message"], str) and len(body["message"]) <= 200
    assert status_of(raw_request(port, HEALTHZ)) == 200


def test_a_request_line_at_the_limit_reaches_django(port):
    raw = raw_request(port, get(target_of_length(LINE_LIMIT)))
    # Django's answer: the secret is missing
    body = json_error(raw, 401, "Unauthorized", "provisioning_secret_missing")
    assert body["message"] == "Missing X-Provisioning-Secret header"


def test_a_header_field_over_the_limit_is_431_json(port):
    name = b"X-Long: "
    raw = raw_request(port, get(PATH, name + b"v" * (FIELD_SIZE_LIMIT + 1 - len(name))))
    json_error(raw, 431, "Request Header Fields Too Large", "header_fields_too_large")
    assert status_of(raw_request(port, HEALTHZ)) == 200


def test_a_header_field_at_the_limit_reaches_django(port):
    name = b"X-Long: "
    raw = raw_request(port, get(PATH, name + b"v" * (FIELD_SIZE_LIMIT - len(name) - 2)))
    json_error(raw, 401, "Unauthorized")


def test_too_many_header_fields_are_431_json(port):
    # Host and Connection count too: FIELDS_LIMIT - 1 more fields make one too many.
    flood = [b"X-Flood-%d: v" % n for n in range(FIELDS_LIMIT - 1)]
    raw = raw_request(port, get(PATH, *flood))
    json_error(raw, 431, "Request Header Fields Too Large", "header_fields_too_large")


def test_as_many_header_fields_as_the_limit_reach_django(port):
    flood = [b"X-Flood-%d: v" % n for n in range(FIELDS_LIMIT - 2)]
    json_error(raw_request(port, get(PATH, *flood)), 401, "Unauthorized")


@pytest.mark.parametrize(
    "header",
    [
        b"X-API-Key: sk_\x00abc",
        b"X-Provisioning-Secret: a\x00b",
        b"X-Bad\x00Name: v",
        b"X-Control: a\x01b",
    ],
    ids=["nul-in-key", "nul-in-secret", "nul-in-name", "control-character"],
)
def test_a_malformed_header_is_400_json(port, header):
    raw = raw_request(port, get(PATH, header))
    body = json_error(raw, 400, "Bad Request", "malformed_request")
    assert isinstance(body["message"], list) and len(body["message"]) == 1
    assert status_of(raw_request(port, HEALTHZ)) == 200


def test_a_malformed_request_line_is_400_json(port):
    raw = raw_request(port, request("GET /api/provisioning/organizations HTTP/9.9"))
    json_error(raw, 400, "Bad Request", "malformed_request")


def test_pages_outside_the_api_get_the_same_json(port):
    """The path is unknown when the line could not be read, so every path gets JSON."""
    raw = raw_request(port, get(target_of_length(LINE_LIMIT + 1, "/track/abc")))
    json_error(raw, 414, "URI Too Long", "request_line_too_long")


@pytest.fixture(scope="module")
def production_port(tmp_path_factory, django_db_blocker):
    """gunicorn as production runs it: DEBUG off, real secrets, one served host."""
    with (
        django_db_blocker.unblock(),
        gunicorn_server(
            tmp_path_factory.mktemp("gunicorn-production"),
            DEBUG="false",
            ALLOWED_HOSTS="localhost",
            SECRET_KEY=secrets.token_urlsafe(50),
            PROVISIONING_SECRET=secrets.token_urlsafe(32),
            FIELD_ENCRYPTION_KEY=Fernet.generate_key().decode(),
        ) as port,
    ):
        yield port


@pytest.mark.parametrize("path", [PATH, "/healthz", "/track/abc", "/admin/login/"])
def test_a_host_the_service_does_not_serve_is_a_json_400_with_debug_off(production_port, path):
    """Django's own answer would be its HTML "Bad Request (400)" page."""
    raw = raw_request(production_port, get(path).replace(b"Host: localhost", b"Host: evil.test"))
    body = json_error(raw, 400, "Bad Request", "bad_host")
    assert body["message"] == "Invalid Host header"
    assert status_of(raw_request(production_port, HEALTHZ)) == 200  # the served host


def test_a_transfer_coding_gunicorn_does_not_implement_is_501_json(port):
    raw = raw_request(port, request(f"POST {PATH} HTTP/1.1", b"Transfer-Encoding: bogus"))
    body = json_error(raw, 501, "Not Implemented", "transfer_coding_unsupported")
    assert body["message"] == "Unsupported transfer coding: 'bogus'"
    assert raw.startswith(b"HTTP/1.1 501 Not Implemented\r\n")
