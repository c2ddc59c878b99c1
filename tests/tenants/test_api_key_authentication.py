"""X-API-Key authentication, platform scope and per-key rate limits (contract "Authentication and
scope", "Rate limits")."""

from datetime import timedelta

import pytest
import time_machine
from django.core.cache import cache
from django.utils import timezone
from rest_framework.response import Response
from rest_framework.test import APIClient, APIRequestFactory

from tenants import keycache
from tenants.api_bases import IntegrationApiView
from tenants.models import ApiKey
from tenants.services import api_key_revoke, secret_digest
from tests import builders
from tests.conftest import assert_error, assert_rate_limited_after

pytestmark = pytest.mark.django_db

HELLO = "/api/bench/hello-auth"


@pytest.fixture(autouse=True)
def _bench_endpoints(settings):
    settings.BENCH_ENDPOINTS = True


def test_missing_key_is_401():
    assert_error(APIClient().get(HELLO), 401, "Missing X-API-Key header")


def test_unknown_key_is_401():
    client = APIClient()
    client.credentials(HTTP_X_API_KEY="sk_partner_a_made-up")
    assert_error(client.get(HELLO), 401, "Invalid API key")


def test_valid_key_identifies_its_organization(organization):
    issued = builders.api_key(organization, "standard")
    response = builders.key_client(issued).get(HELLO)
    assert response.status_code == 200
    assert response.json() == {"hello": str(organization.id)}


def test_key_lookup_is_cached_after_the_first_request(organization, django_assert_num_queries):
    issued = builders.api_key(organization, "standard")
    client = builders.key_client(issued)
    client.get(HELLO)  # fills the Redis cache and writes lastUsedAt once
    with django_assert_num_queries(0):
        assert client.get(HELLO).status_code == 200


def test_key_lookup_costs_at_most_one_query_without_cache(
    organization, django_assert_max_num_queries
):
    issued = builders.api_key(organization, "standard")
    # One lookup plus the once-a-minute lastUsedAt write.
    with django_assert_max_num_queries(2):
        assert builders.key_client(issued).get(HELLO).status_code == 200


def test_a_cache_entry_of_another_shape_is_read_again_from_the_database(organization):
    """An older release's entry (the principal's fields beside the generation) is not trusted."""
    issued = builders.api_key(organization, "standard")
    digest = secret_digest(issued.value)
    generation = cache.get(keycache.GENERATION_KEY, "")
    old_shape = {"key_id": "0", "organization_id": "0", "platform": "erp", "name": "x"}
    cache.set(f"apikey:{digest}", {**old_shape, "generation": generation}, 60)

    response = builders.key_client(issued).get(HELLO)

    assert response.status_code == 200
    assert response.json() == {"hello": str(organization.id)}


def test_last_used_at_is_written_at_most_once_a_minute(organization):
    issued = builders.api_key(organization, "standard")
    client = builders.key_client(issued)
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        client.get(HELLO)
        first = ApiKey.objects.get(pk=issued.api_key.pk).last_used_at
        traveller.shift(timedelta(seconds=30))
        client.get(HELLO)
        assert ApiKey.objects.get(pk=issued.api_key.pk).last_used_at == first
    assert first is not None


def test_revoked_key_is_refused_even_when_cached(organization):
    issued = builders.api_key(organization, "standard")
    client = builders.key_client(issued)
    assert client.get(HELLO).status_code == 200
    api_key_revoke(api_key=issued.api_key)
    assert_error(client.get(HELLO), 401, "Invalid API key")


def test_inactive_organization_keys_are_refused(organization):
    issued = builders.api_key(organization, "standard")
    organization.is_active = False
    organization.save()
    assert_error(builders.key_client(issued).get(HELLO), 401, "Invalid API key")


def test_api_rate_limit_per_key(organization, other_organization, settings):
    settings.API_RATE_LIMIT = "3/m"
    response = assert_rate_limited_after(builders.standard_client(organization), HELLO, allowed=3)
    assert 1 <= int(response["Retry-After"]) <= 60
    assert builders.standard_client(other_organization).get(HELLO).status_code == 200


class _PartnerBView(IntegrationApiView):
    integration = "partner-b"

    def get(self, request):
        return Response({"ok": True})


@pytest.mark.parametrize(
    ("platform", "status"),
    [("partner_b", 200), ("partner_a", 403), ("standard", 403), ("erp", 403)],
)
def test_integration_views_take_only_their_platform(organization, platform, status):
    issued = builders.api_key(organization, platform)
    request = APIRequestFactory().get("/x", HTTP_X_API_KEY=issued.value)
    response = _PartnerBView.as_view()(request)
    assert response.status_code == status
    if status == 403:
        assert response.data["message"] == "API key does not match partner-b integration"
