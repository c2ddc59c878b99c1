"""RateLimit-Policy and RateLimit on every response of a counted endpoint (docs/contract.md
"Rate limits"), in the structured-field syntax of draft-ietf-httpapi-ratelimit-headers."""

import http.client
import re
from urllib.parse import urlsplit

import pytest

from tests import builders
from tests.conftest import assert_rate_limited_after
from tests.tracking.conftest import make_order

pytestmark = pytest.mark.django_db

ORDER_404 = "/api/integrations/partner-a/orders/NOPE-1"
LIMIT = re.compile(r'^"(?P<policy>[^"]+)";r=(?P<r>\d+);t=(?P<t>\d+)$')


@pytest.fixture(autouse=True)
def _limits_on(settings):
    settings.RATELIMIT_ENABLE = True


def counter(response) -> tuple[str, int, int]:
    match = LIMIT.match(response["RateLimit"])
    assert match, response["RateLimit"]
    return match["policy"], int(match["r"]), int(match["t"])


def test_api_key_endpoint_states_its_policy_and_counts_down(organization, settings):
    settings.API_RATE_LIMIT = "5/m"
    client = builders.key_client(builders.api_key(organization, "partner_a"))

    seen = []
    for _ in range(3):
        response = client.get(ORDER_404)
        assert response.status_code == 404  # errors after counting carry the fields too
        assert response["RateLimit-Policy"] == '"api-key";q=5;w=60'
        seen.append(counter(response))

    assert [remaining for _, remaining, _ in seen] == [4, 3, 2]
    assert all(policy == "api-key" and 0 <= t <= 60 for policy, _, t in seen)


def test_refused_request_has_r_zero_and_retry_after_equal_to_t(organization, settings):
    settings.API_RATE_LIMIT = "2/m"

    response = assert_rate_limited_after(
        builders.partner_client(organization), ORDER_404, allowed=2, status=404
    )

    assert response["RateLimit-Policy"] == '"api-key";q=2;w=60'
    policy, remaining, reset = counter(response)
    assert (policy, remaining) == ("api-key", 0)
    assert 1 <= reset <= 60
    assert response["Retry-After"] == str(reset)


def test_each_key_has_its_own_counter(organization, other_organization, settings):
    settings.API_RATE_LIMIT = "5/m"
    first = builders.key_client(builders.api_key(organization, "partner_a"))
    second = builders.key_client(builders.api_key(other_organization, "partner_a"))
    first.get(ORDER_404)
    first.get(ORDER_404)

    assert counter(second.get(ORDER_404))[1] == 4


def test_provisioning_endpoint_reports_its_hourly_policy(provisioning_client):
    first = provisioning_client.get("/api/provisioning/organizations")
    second = provisioning_client.get("/api/provisioning/organizations")

    assert first.status_code == 200
    assert first["RateLimit-Policy"] == '"provisioning:organizations.list";q=120;w=3600'
    assert counter(first)[1] == 119
    assert counter(second)[1] == 118


def test_tracking_api_and_page_share_one_counter(client, api_client, organization, settings):
    settings.TRACKING_RATE_LIMIT = "3/m"
    order = make_order(organization)

    api = api_client.get(f"/api/track/{order.tracking_token}")
    page = client.get(f"/track/{order.tracking_token}")
    refused = client.get(f"/track/{order.tracking_token}")
    also_refused = api_client.get(f"/api/track/{order.tracking_token}")

    assert api["RateLimit-Policy"] == '"address:tracking";q=3;w=60'
    assert counter(api)[1] == 2
    assert page.status_code == 200 and counter(page)[1] == 1
    assert refused.status_code == 200 and counter(refused)[1] == 0
    assert also_refused.status_code == 429
    assert counter(also_refused)[1] == 0
    assert also_refused["Retry-After"] == str(counter(also_refused)[2])


def test_unauthenticated_and_unrated_requests_carry_no_fields(api_client, organization):
    refused_key = api_client.get(ORDER_404)  # 401 before anything is counted
    health = api_client.get("/healthz")
    schema = api_client.get("/api/schema")
    management = api_client.get(f"/api/manage/organizations/{organization.id}/orders")

    assert refused_key.status_code == 401
    for response in (refused_key, health, schema, management):
        assert "RateLimit" not in response
        assert "RateLimit-Policy" not in response


def test_switched_off_limits_report_nothing(organization, settings):
    settings.RATELIMIT_ENABLE = False
    response = builders.key_client(builders.api_key(organization, "partner_a")).get(ORDER_404)

    assert response.status_code == 404
    assert "RateLimit" not in response


@pytest.mark.django_db(transaction=True)
def test_fields_cross_a_real_socket(live_server, organization, settings):
    settings.API_RATE_LIMIT = "1/m"
    issued = builders.api_key(organization, "partner_a")

    address = urlsplit(live_server.url)

    def get():
        connection = http.client.HTTPConnection(address.hostname, address.port, timeout=10)
        try:
            connection.request("GET", ORDER_404, headers={"X-API-Key": issued.value})
            response = connection.getresponse()
            response.read()
            return response.status, response.headers
        finally:
            connection.close()

    first_status, first = get()
    second_status, second = get()

    assert first_status == 404
    assert first["RateLimit-Policy"] == '"api-key";q=1;w=60'
    assert first["RateLimit"].startswith('"api-key";r=0;t=')
    assert second_status == 429
    assert second["RateLimit"] == f'"api-key";r=0;t={second["Retry-After"]}'


def test_openapi_lists_the_fields_on_counted_operations_only(api_client):
    schema = api_client.get("/api/schema", HTTP_ACCEPT="application/json").json()
    paths = schema["paths"]

    def rate_fields(answer) -> set[str]:
        return set(answer.get("headers", {})) - {"API-Version"}  # that one is on every answer

    order = paths["/api/integrations/partner-a/orders"]["post"]["responses"]
    assert rate_fields(order["201"]) == {"RateLimit-Policy", "RateLimit"}
    assert rate_fields(order["429"]) == {"RateLimit-Policy", "RateLimit", "Retry-After"}
    assert rate_fields(order["401"]) == set()
    tracking = paths["/api/track/{token}"]["get"]["responses"]
    assert "RateLimit" in tracking["200"]["headers"]
    # The management API is counted per user (MANAGEMENT_RATE_LIMIT) since issue 25.
    managed = paths["/api/manage/organizations/{org_id}/orders"]["get"]["responses"]
    assert rate_fields(managed["200"]) == {"RateLimit-Policy", "RateLimit"}
    assert rate_fields(managed["401"]) == set()
    login = paths["/api/auth/token"]["post"]["responses"]
    assert rate_fields(login["200"]) == set()
