"""A chunked request body (`Transfer-Encoding: chunked`, no Content-Length) is read under the
real gunicorn, and the 1 MiB body limit holds for it too (contract "Conventions")."""

import json

import pytest
from django.conf import settings
from django.test import Client

from tests import builders
from tests.gunicorn import body_of, gunicorn_server, raw_request, status_of
from zones.models import Zone

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def port(tmp_path):
    with gunicorn_server(tmp_path) as port:
        yield port


def chunked_post(path: str, body: bytes, *headers: str, chunk_size: int = 7) -> bytes:
    chunks = b"".join(
        f"{len(part):x}\r\n".encode() + part + b"\r\n"
        for part in (body[i : i + chunk_size] for i in range(0, len(body), chunk_size))
    )
    head = "".join(f"{header}\r\n" for header in headers)
    return (
        (
            f"POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            f"Transfer-Encoding: chunked\r\n{head}Connection: close\r\n\r\n"
        ).encode()
        + chunks
        + b"0\r\n\r\n"
    )


def answer_json(raw: bytes) -> dict:
    """The answer's JSON body, its chunks joined when the server sent it chunked."""
    head, body = raw.partition(b"\r\n\r\n")[0].lower(), body_of(raw)
    if b"transfer-encoding: chunked" not in head:
        return json.loads(body)
    joined = b""
    while True:
        size, _, rest = body.partition(b"\r\n")
        length = int(size, 16)
        if length == 0:
            return json.loads(joined)
        joined, body = joined + rest[:length], rest[length + 2 :]


def test_a_chunked_zone_create_is_read(port, organization):
    builders.admin(organization, "ops@example.com")
    _, login = builders.bearer_login("ops@example.com")
    body = json.dumps({"name": "Chunked Mitte", "geodata": builders.square_polygon()}).encode()

    raw = raw_request(
        port,
        chunked_post(
            f"/api/manage/organizations/{organization.id}/zones",
            body,
            f"Authorization: Bearer {login['token']}",
        ),
    )

    assert status_of(raw) == 201, raw[:800]
    assert answer_json(raw)["name"] == "Chunked Mitte"
    assert Zone.objects.filter(organization=organization, name="Chunked Mitte").exists()


def test_a_chunked_body_over_the_limit_is_413(port):
    filler = "x" * settings.MAX_REQUEST_BODY_BYTES
    body = json.dumps({"name": filler, "admin": {"email": "ada@example.com"}}).encode()

    raw = raw_request(
        port,
        chunked_post(
            "/api/provisioning/organizations",
            body,
            f"X-Provisioning-Secret: {settings.PROVISIONING_SECRET}",
            chunk_size=64 * 1024,
        ),
    )

    assert status_of(raw) == 413, raw[:800]
    error = answer_json(raw)
    assert error["statusCode"] == 413
    assert error["message"] == "Request body must not exceed 1 MiB"


def test_a_chunked_body_a_server_cannot_decode_is_411():
    # Django's test client, like a WSGI server that leaves the chunks alone, sets no
    # wsgi.input_terminated: the body cannot be read safely.
    response = Client().generic(
        "POST",
        "/api/provisioning/organizations",
        b'{"name": "Acme"}',
        content_type="application/json",
        headers={
            "Transfer-Encoding": "chunked",
            "X-Provisioning-Secret": settings.PROVISIONING_SECRET,
        },
        CONTENT_LENGTH="",
    )

    assert response.status_code == 411
    assert response.json()["statusCode"] == 411
    assert "Content-Length" in response.json()["message"]
