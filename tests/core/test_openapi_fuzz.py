"""Schemathesis against the OpenAPI document (/api/schema/): every operation, in process.

Each operation gets a bounded number of generated requests (valid and invalid) with real
credentials (provisioning secret, an API key of the operation's family, a management bearer
token) and, half the time, the ids of real objects of the caller's organization, so requests get
past authentication and lookups. Checks: no 5xx, responses conform to the documented schema
and status codes.
"""

import zlib

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase
from hypothesis import settings as hypothesis_settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    response_schema_conformance,
    status_code_conformance,
)

MAX_EXAMPLES = 15
APP = WSGIHandler()
schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", APP)

#: path parameter -> the world's id of that name (by path where one name means two things)
REAL_IDS = {
    "org_id": "org_id",
    "driver_id": "driver_id",
    "order_id": "order_id",
    "template_id": "template_id",
    "zone_id": "zone_id",
    "delivery_id": "delivery_id",
    "user_id": "user_id",
}


@pytest.fixture
def world(module_worlds, fast, db):
    world = module_worlds[0]
    # Requests run in this thread, inside the test's transaction; Django's handler would close
    # the connection at each request (the test client disconnects the same signals per request).
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield world
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def api_key_platform(path: str) -> str:
    for family, platform in (
        ("/integrations/partner-a/", "partner_a"),
        ("/integrations/partner-b/", "partner_b"),
        ("/integrations/partner-c/", "partner_c"),
        ("/integrations/erp/", "erp"),
    ):
        if path.startswith(f"/api{family}"):
            return platform
    return "standard"


def real_value(world, path: str, name: str) -> str | None:
    if name == "key_id":
        return world.key_ids["standard"]
    if name == "external_ref":
        return world.ids["erp_ref" if "/erp/" in path else "partner_ref"]
    if name == "token":
        return world.ids["tracking_token" if path.startswith("/api/track/") else "invite_token"]
    if name == "org_id":
        return world.org_id
    key = REAL_IDS.get(name)
    return world.ids[key] if key else None


def aim_at_real_objects(case, world) -> None:
    """Replaces about half of the generated path ids with the ids of real objects (which half
    depends on the generated value, so a failing example replays the same way)."""
    for name, value in (case.path_parameters or {}).items():
        if zlib.crc32(repr(value).encode()) % 2:
            real = real_value(world, case.operation.path, name)
            if real is not None:
                case.path_parameters[name] = real


def credentials(case, world, django_settings) -> dict[str, str]:
    return credentials_for(case.operation.path, world, django_settings.PROVISIONING_SECRET)


def credentials_for(path: str, world, provisioning_secret: str) -> dict[str, str]:
    """The headers that let a request of the operation at `path` past authentication."""
    if path.startswith("/api/provisioning/"):
        return {"X-Provisioning-Secret": provisioning_secret}
    if path.startswith("/api/manage/") or path == "/api/auth/token":
        return {"Authorization": f"Bearer {world.token}"}
    if path.startswith(("/api/integrations/", "/api/public/", "/api/promises/")):
        return {"X-API-Key": world.keys[api_key_platform(path)]}
    return {}


@schema.parametrize()
@hypothesis_settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    derandomize=True,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
def test_api_conforms_to_its_openapi_document(case, world, settings):
    aim_at_real_objects(case, world)
    headers = {**(case.headers or {}), **credentials(case, world, settings)}
    case.headers = headers
    case.call_and_validate(
        checks=[not_a_server_error, response_schema_conformance, status_code_conformance]
    )
