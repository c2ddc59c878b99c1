"""Shared fixtures: real PostgreSQL and Redis, named actors, and helpers for the contract."""

import itertools

import pytest
from django.conf import settings
from django.core.cache import cache
from rest_framework.test import APIClient

from tenants.models import Organization
from tenants.services import IssuedApiKey, api_key_create, organization_create

# The real-browser fixtures (chromium, playwright, browser) for every folder that needs them.
pytest_plugins = ["tests.core.browser"]

_sequence = itertools.count(1)


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
def api_client() -> APIClient:
    return APIClient()


@pytest.fixture
def provisioning_client() -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_PROVISIONING_SECRET=settings.PROVISIONING_SECRET)
    return client


def make_organization(name: str | None = None) -> Organization:
    n = next(_sequence)
    return organization_create(name=name or f"Org {n}")


def make_api_key(organization: Organization, platform: str = "partner_a", **kwargs) -> IssuedApiKey:
    return api_key_create(
        organization=organization,
        name=kwargs.pop("name", f"{platform} key"),
        platform=platform,
        **kwargs,
    )


@pytest.fixture
def organization(db) -> Organization:
    return make_organization("Acme Deliveries")


@pytest.fixture
def other_organization(db) -> Organization:
    return make_organization("Globex Logistics")


def key_client(issued: IssuedApiKey) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=issued.value)
    return client


def assert_error(response, status: int, message=None):
    """The contract's error body (contract "Errors"), and the message when given."""
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"statusCode", "message", "error"}, body
    assert body["statusCode"] == status
    if message is not None:
        if isinstance(body["message"], list) and isinstance(message, str):
            assert message in body["message"], body["message"]
        else:
            assert body["message"] == message, body["message"]
    return body
