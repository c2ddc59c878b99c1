"""Requests in flight per organization and kind of caller (contract "Rate limits":
IN_FLIGHT_LIMIT): beyond the limit an immediate 429 with Retry-After and the RateLimit fields,
counted in Redis across processes, other organizations untouched."""

import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from django.db import connection
from django.test import RequestFactory

from delivery import inflight
from tenants.in_flight_limit import InFlightLimitMiddleware
from tests import builders
from tests.conftest import assert_error

pytestmark = pytest.mark.django_db

ORDER_404 = "/api/integrations/partner-a/orders/NOPE-1"
ROOT = Path(__file__).resolve().parents[2]


def orders_path(organization) -> str:
    return f"/api/manage/organizations/{organization.id}/orders"


def occupy(organization, kind: str, places: int) -> list[inflight.Place]:
    """`places` requests of `organization` running now, as another process would count them."""
    organization_id = str(organization.id)
    taken = [inflight.acquire(organization_id=organization_id, kind=kind) for _ in range(places)]
    assert all(isinstance(place, inflight.Place) for place in taken)
    return taken


def assert_in_flight_refusal(response, kind: str, limit: int) -> None:
    assert_error(response, 429, "Too many requests in flight", code="too_many_in_flight")
    assert response["Retry-After"] == "1"
    assert response["RateLimit-Policy"] == (
        f'"in-flight:{kind}";q={limit};qu="concurrent-requests"'
    )
    assert response["RateLimit"] == f'"in-flight:{kind}";r=0;t=1'


def test_api_key_requests_beyond_the_limit_are_refused_while_another_organization_is_served(
    organization, other_organization, settings
):
    settings.IN_FLIGHT_LIMIT = 2
    ours = builders.partner_client(organization)
    theirs = builders.partner_client(other_organization)
    occupy(organization, inflight.API_KEY, 2)

    assert_in_flight_refusal(ours.get(ORDER_404), "api-key", 2)
    # Every key of the organization shares its count.
    assert_in_flight_refusal(
        builders.erp_client(organization).get("/api/integrations/erp/orders/NOPE"), "api-key", 2
    )
    assert theirs.get(ORDER_404).status_code == 404


def test_a_place_given_back_lets_the_next_request_in(organization, settings):
    settings.IN_FLIGHT_LIMIT = 2
    client = builders.partner_client(organization)
    first, _second = occupy(organization, inflight.API_KEY, 2)
    assert client.get(ORDER_404).status_code == 429

    inflight.release(first)

    assert client.get(ORDER_404).status_code == 404
    # The request gave its own place back too.
    assert inflight.in_flight(organization_id=str(organization.id), kind=inflight.API_KEY) == 1


def test_management_requests_are_limited_per_organization(
    organization, other_organization, settings
):
    settings.IN_FLIGHT_LIMIT = 3
    ours = builders.manager_client(organization, "ours@example.com")
    theirs = builders.manager_client(other_organization, "theirs@example.com")
    occupy(organization, inflight.MANAGEMENT, 3)

    assert_in_flight_refusal(ours.get(orders_path(organization)), "management", 3)
    assert theirs.get(orders_path(other_organization)).status_code == 200
    # API keys are another kind of caller: their count is their own.
    assert builders.partner_client(organization).get(ORDER_404).status_code == 404


def test_another_tenants_admin_cannot_use_up_an_organizations_places(
    organization, other_organization, settings
):
    settings.IN_FLIGHT_LIMIT = 1
    theirs = builders.manager_client(other_organization, "theirs@example.com")
    occupy(other_organization, inflight.MANAGEMENT, 1)

    # Not an admin of `organization`: not counted against it, refused by the view as always.
    assert theirs.get(orders_path(organization)).status_code == 404
    assert inflight.in_flight(organization_id=str(organization.id), kind=inflight.MANAGEMENT) == 0


def test_a_place_is_given_back_when_the_view_raises(organization, settings):
    settings.IN_FLIGHT_LIMIT = 1
    issued = builders.api_key(organization)
    seen = []

    def crashing_view(request):
        seen.append(inflight.in_flight(organization_id=str(organization.id), kind="api-key"))
        raise RuntimeError("boom")

    request = RequestFactory().get(ORDER_404, HTTP_X_API_KEY=issued.value)
    with pytest.raises(RuntimeError):
        InFlightLimitMiddleware(crashing_view)(request)

    assert seen == [1]
    assert inflight.in_flight(organization_id=str(organization.id), kind="api-key") == 0


def test_places_never_given_back_lapse_after_the_expiry(organization, settings):
    settings.IN_FLIGHT_LIMIT = 2
    settings.IN_FLIGHT_EXPIRY_SECONDS = 0.3
    client = builders.partner_client(organization)
    occupy(organization, inflight.API_KEY, 2)  # two workers killed mid-request
    assert client.get(ORDER_404).status_code == 429

    time.sleep(0.4)

    assert client.get(ORDER_404).status_code == 404
    assert inflight.in_flight(organization_id=str(organization.id), kind="api-key") == 0


def test_unknown_keys_and_tokens_are_not_counted(organization, settings, api_client):
    settings.IN_FLIGHT_LIMIT = 1
    api_client.credentials(HTTP_X_API_KEY="not-a-key")
    assert api_client.get(ORDER_404).status_code == 401
    api_client.credentials(HTTP_AUTHORIZATION="Bearer not-a-token")
    assert api_client.get(orders_path(organization)).status_code == 401


def test_a_redis_outage_lets_requests_through(organization, settings):
    settings.IN_FLIGHT_LIMIT = 1
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    issued = builders.api_key(organization)
    served = []

    def view(request):
        served.append(True)

    request = RequestFactory().get(ORDER_404, HTTP_X_API_KEY=issued.value)
    InFlightLimitMiddleware(view)(request)
    InFlightLimitMiddleware(view)(request)

    assert served == [True, True]


def test_the_default_leaves_half_the_shipped_web_tier_to_everyone_else(settings):
    shipped = (ROOT / "gunicorn.conf.py").read_text()
    # gunicorn.conf.py and the settings read the web tier's size from the same variables.
    assert 'workers = int(os.environ.get("WEB_CONCURRENCY", "4"))' in shipped
    assert 'threads = int(os.environ.get("WEB_THREADS", "32"))' in shipped
    assert 'worker_class = "gthread"' in shipped
    assert (settings.WEB_CONCURRENCY, settings.WEB_THREADS) == (4, 32)
    assert settings.IN_FLIGHT_LIMIT == 4 * 32 // 2


@pytest.mark.django_db(transaction=True)
def test_a_burst_of_concurrent_requests_from_one_organization_is_not_refused_by_default(
    organization,
):
    issued = builders.api_key(organization)
    requests = 8
    barrier = threading.Barrier(requests)

    def attempt(_):
        try:
            barrier.wait()
            return builders.key_client(issued).get(ORDER_404).status_code
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=requests) as pool:
        statuses = list(pool.map(attempt, range(requests)))

    assert statuses == [404] * requests
    assert inflight.in_flight(organization_id=str(organization.id), kind="api-key") == 0


def test_the_management_api_has_a_rate_limit(organization, settings):
    settings.RATELIMIT_ENABLE = True
    settings.MANAGEMENT_RATE_LIMIT = "2/m"
    client = builders.manager_client(organization)
    path = orders_path(organization)

    for _ in range(2):
        response = client.get(path)
        assert response.status_code == 200
        assert response["RateLimit-Policy"] == '"management";q=2;w=60'
    refused = client.get(path)

    assert_error(refused, 429, "Too many requests", code="rate_limited")
    assert re.fullmatch(r'"management";r=0;t=\d+', refused["RateLimit"])


def test_a_credential_no_one_can_hold_is_refused_as_before(organization, settings, api_client):
    settings.IN_FLIGHT_LIMIT = 1
    api_client.credentials(HTTP_X_API_KEY="\ud800")

    assert_error(api_client.get(ORDER_404), 400, code="unstorable_text")
