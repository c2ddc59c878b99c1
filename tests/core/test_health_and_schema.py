"""Liveness, readiness and the OpenAPI document (contract "Conventions", "Errors")."""

import inspect

import pytest
from django.test import Client

from tenants import api_bases

pytestmark = pytest.mark.django_db


def test_healthz_is_ok():
    response = Client().get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_readyz_checks_database_and_redis():
    response = Client().get("/readyz")
    assert response.status_code == 200
    assert response.json()["checks"] == {"database": True, "redis": True}


def test_readyz_is_503_naming_redis_when_redis_is_down(settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    response = Client().get("/readyz")
    assert response.status_code == 503
    assert response.json()["failing"] == ["redis"]


def test_openapi_document_lists_paths_with_api_prefix():
    response = Client().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    document = response.json()
    paths = document["paths"]
    assert "/api/provisioning/organizations" in paths
    assert "/api/provisioning/organizations/{org_id}/api-keys/{key_id}/rotate" in paths
    assert not any(path.endswith("/") for path in paths)
    create = paths["/api/provisioning/organizations"]["post"]
    assert {"201", "400", "401", "429"} <= set(create["responses"])


def test_no_operation_is_described_by_a_base_views_docstring():
    """The base views' docstrings (tenants/api_bases.py) explain the code, not the operation: an
    operation without a docstring of its own has no description rather than one of those."""
    document = Client().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    base_docs = {
        " ".join(inspect.getdoc(base).split())
        for base in (
            api_bases.ProvisioningApiView,
            api_bases.PublicApiView,
            api_bases.ApiKeyApiView,
            api_bases.IntegrationApiView,
            api_bases.ManagementApiView,
        )
    }
    described = [
        " ".join(operation["description"].split())
        for operations in document["paths"].values()
        for operation in operations.values()
        if isinstance(operation, dict) and operation.get("description")
    ]

    assert described, "some operations are described"
    assert not base_docs & set(described)


def test_interactive_docs_are_served():
    assert Client().get("/api/docs/").status_code == 200
