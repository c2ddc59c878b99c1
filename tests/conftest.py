"""Shared fixtures: real PostgreSQL and Redis, named actors (made by tests/builders.py), and the
contract's error check."""

import pytest
import time_machine
from django.conf import settings
from django.core.cache import cache
from rest_framework.test import APIClient

from tenants.models import Organization
from tests import builders

# The real-browser fixtures (chromium, playwright, browser) for every folder that needs them.
pytest_plugins = ["tests.core.browser"]


@pytest.fixture(autouse=True)
def _clean_cache():
    """Each test starts with empty rate-limit counters and key cache (Redis is real)."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture(autouse=True)
def _allow_loopback_webhooks(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True


@pytest.fixture
def fast_password_hashing(settings):
    # Logging in hashes the password; PBKDF2's deliberate slowness buys nothing in tests.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def no_rate_limits(settings):
    # For tests that send many requests with one key; the limiter has its own tests.
    settings.RATELIMIT_ENABLE = False


@pytest.fixture
def traveller():
    """Time frozen at builders.NOW (opt in with `usefixtures("traveller")`); moves with
    `traveller.move_to`."""
    with time_machine.travel(builders.NOW, tick=False) as traveller:
        yield traveller


@pytest.fixture
def api_client() -> APIClient:
    return APIClient()


@pytest.fixture
def manager(organization) -> APIClient:
    """A management API client (bearer token) of an admin of `organization`."""
    return builders.manager_client(organization)


@pytest.fixture
def provisioning_client() -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_PROVISIONING_SECRET=settings.PROVISIONING_SECRET)
    return client


@pytest.fixture
def organization(db) -> Organization:
    return builders.organization("Acme Deliveries")


@pytest.fixture
def other_organization(db) -> Organization:
    return builders.organization("Globex Logistics")


ERROR_BODY_KEYS = {"statusCode", "message", "error", "code", "requestId"}


def assert_error(response, status: int, message=None, *, code: str | None = None):
    """The contract's error body (contract "Errors"): exactly its five fields, a code of the
    contract's table (`code=` checks which), the request id of the response's `X-Request-Id`;
    and the message when given."""
    assert response.status_code == status, response.content
    body = response.json()
    assert_error_body(body, status, request_id=response["X-Request-Id"], code=code)
    if message is not None:
        if isinstance(body["message"], list) and isinstance(message, str):
            assert message in body["message"], body["message"]
        else:
            assert body["message"] == message, body["message"]
    return body


def assert_error_body(body: dict, status: int, *, request_id: str, code: str | None = None):
    """`body` is the contract's error body of `status`, answered with `request_id` in its
    `X-Request-Id` (for answers read off the wire, not through Django's test client)."""
    assert set(body) == ERROR_BODY_KEYS, body
    assert body["statusCode"] == status, body
    assert isinstance(body["message"], str | list), body
    assert is_snake_case(body["code"]), body
    if code is not None:
        assert body["code"] == code, body
    assert request_id, "the answer has no X-Request-Id"
    assert body["requestId"] == request_id, body


def is_snake_case(code: str) -> bool:
    words = code.split("_")
    return code.isascii() and all(word.isalnum() and word.islower() for word in words)


def assert_rate_limited_after(client, path: str, allowed: int, status: int = 200):
    """`allowed` GETs of `path` answered `status`, then the next one refused with the contract's
    429 (contract "Rate limits"); returns that refusal."""
    for _ in range(allowed):
        assert client.get(path).status_code == status
    refused = client.get(path)
    assert_error(refused, 429, "Too many requests", code="rate_limited")
    return refused
