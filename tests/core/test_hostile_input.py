"""No request, however malformed, gets a 500 (DEVELOPERS.md "Quality bar"; issue 2).

Property-based: hypothesis sends random JSON of every shape, wrong types, huge strings and odd
path ids to every provisioning and management endpoint, with valid and invalid credentials.
"""

import json
from urllib.parse import quote

import pytest
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import builders
from tests.conftest import assert_error

pytestmark = pytest.mark.django_db

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=300)
    | st.text(max_size=5000).map(lambda s: s * 3)
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=12,
)
CONTRACT_FIELDS = [
    "name",
    "slug",
    "admin",
    "email",
    "password",
    "platform",
    "webhookUrl",
]
bodies = st.one_of(
    json_values,
    st.fixed_dictionaries({}, optional=dict.fromkeys(CONTRACT_FIELDS, json_values)),
    st.fixed_dictionaries(
        {"name": st.text(max_size=300), "admin": st.fixed_dictionaries({"email": json_values})}
    ),
)
path_ids = st.one_of(
    st.uuids().map(str),
    st.text(
        alphabet=st.characters(exclude_characters="/?#%\x00", exclude_categories=("Cs",)),
        min_size=1,
        max_size=80,
    ),
    st.sampled_from(["0", "-1", "null", "' OR 1=1 --", "<script>", "..", "%00"]),
)
ENDPOINTS = [
    ("get", "/api/provisioning/organizations"),
    ("post", "/api/provisioning/organizations"),
    ("post", "/api/provisioning/organizations/{id}/admins"),
    ("post", "/api/provisioning/admins/{id}/resend-invite"),
    ("post", "/api/provisioning/admins/{id}/reset-password"),
    ("get", "/api/provisioning/invite/{id}"),
    ("post", "/api/provisioning/invite/{id}/accept"),
    ("get", "/api/provisioning/organizations/{id}/api-keys"),
    ("post", "/api/provisioning/organizations/{id}/api-keys"),
    ("post", "/api/provisioning/organizations/{id}/api-keys/{id}"),
    ("post", "/api/provisioning/organizations/{id}/api-keys/{id}/rotate"),
    ("delete", "/api/provisioning/organizations/{id}/api-keys/{id}"),
    ("post", "/api/auth/token"),
    ("get", "/api/manage/organizations/{id}/api-keys"),
    ("post", "/api/manage/organizations/{id}/api-keys"),
]


@pytest.fixture
def real_org_id():
    return str(builders.organization().id)


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    endpoint=st.sampled_from(ENDPOINTS),
    body=bodies,
    path_id=path_ids,
    use_real_org=st.booleans(),
    secret=st.sampled_from(["valid", "wrong", None]),
)
def test_no_input_produces_a_server_error(
    endpoint, body, path_id, use_real_org, secret, real_org_id, django_settings
):
    method, template = endpoint
    path = template.replace("{id}", quote(real_org_id if use_real_org else path_id, safe=""), 1)
    path = path.replace("{id}", quote(path_id, safe=""))
    headers = {}
    if secret == "valid":
        headers["X-Provisioning-Secret"] = django_settings.PROVISIONING_SECRET
    elif secret == "wrong":
        headers["X-Provisioning-Secret"] = "wrong"
    client = Client(raise_request_exception=False, headers=headers)
    kwargs = {"content_type": "application/json"}
    if method != "get":
        kwargs["data"] = json.dumps(body)
    response = getattr(client, method)(path, **kwargs)

    assert response.status_code < 500, (method, path, body, response.content[:300])
    if response.status_code >= 400:
        assert_error(response, response.status_code)


@pytest.fixture
def django_settings(settings):
    settings.RATELIMIT_ENABLE = False
    return settings
