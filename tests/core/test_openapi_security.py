"""The OpenAPI document declares the credentials each operation really takes
(docs/contract.md "Authentication and scope", "Couriers"): the provisioning secret, an API key,
a bearer token, a driver's access token, or none at all for the public invite, tracking and login
operations."""

import re
import uuid

import pytest
from django.test import Client
from django.urls import resolve
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework.test import APIRequestFactory

from tests.conftest import assert_error

pytestmark = pytest.mark.django_db

SCHEMES = {
    "ProvisioningSecret": {"type": "apiKey", "in": "header", "name": "X-Provisioning-Secret"},
    "ApiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
    "BearerToken": {"type": "http", "scheme": "bearer"},
    "CourierToken": {
        "type": "http",
        "scheme": "bearer",
        "description": "A driver's access token (`drv_...`), issued by an organization admin.",
    },
}


def operations(document):
    for path, entries in document["paths"].items():
        for method, operation in entries.items():
            if method in {"get", "post", "put", "patch", "delete"}:
                yield path, method, operation


def concrete(path: str) -> str:
    return re.sub(r"\{[^}]+\}", lambda _: str(uuid.uuid4()), path)


def contract_security(path: str, method: str) -> list:
    """What the contract says each family of paths takes."""
    if path.startswith(("/api/provisioning/invite/", "/api/track/")):
        return []
    if path == "/api/auth/token":
        return [{"BearerToken": []}] if method == "delete" else []
    if path.startswith("/api/provisioning/"):
        return [{"ProvisioningSecret": []}]
    if path.startswith(("/api/integrations/", "/api/public/", "/api/promises/")):
        return [{"ApiKey": []}]
    if path.startswith("/api/manage/"):
        return [{"BearerToken": []}]
    if path.startswith("/api/courier/"):
        return [{"CourierToken": []}]
    raise AssertionError(f"a path of no known family: {path}")


def view_security(path: str, method: str) -> list:
    """What the view's authentication classes take, asked of the view itself."""
    url = concrete(path)
    match = resolve(url)
    view = match.func.view_class(**getattr(match.func, "view_initkwargs", {}))
    view.request = APIRequestFactory().generic(method.upper(), url)
    view.kwargs = match.kwargs
    return [
        {OpenApiAuthenticationExtension.get_match(authenticator).name: []}
        for authenticator in view.get_authenticators()
    ]


def test_the_four_security_schemes_are_declared(document):
    assert document["components"]["securitySchemes"] == SCHEMES
    assert "security" not in document  # every operation says its own


def test_every_operation_declares_the_security_of_its_authentication(document):
    found = list(operations(document))
    assert len(found) > 50
    for path, method, operation in found:
        assert "security" in operation, (method, path)
        assert operation["security"] == view_security(path, method), (method, path)
        assert operation["security"] == contract_security(path, method), (method, path)
        assert {} not in operation["security"], (method, path)  # no anonymous alternative


def test_public_operations_declare_no_credentials(document):
    paths = document["paths"]
    assert paths["/api/provisioning/invite/{token}"]["get"]["security"] == []
    assert paths["/api/provisioning/invite/{token}/accept"]["post"]["security"] == []
    assert paths["/api/track/{token}"]["get"]["security"] == []
    assert paths["/api/auth/token"]["post"]["security"] == []
    assert paths["/api/auth/token"]["delete"]["security"] == [{"BearerToken": []}]


def test_operations_with_security_refuse_a_call_without_credentials(document):
    """The declaration matches the behaviour: 401 without credentials exactly where the
    document asks for them."""
    client = Client()
    for path, method, operation in operations(document):
        response = client.generic(
            method.upper(), concrete(path), b"{}", content_type="application/json"
        )
        if operation["security"]:
            assert_error(response, 401)
        else:
            assert response.status_code != 401, (method, path, response.content)
