"""Liveness, readiness and the OpenAPI document (contract "Conventions", "Errors")."""

import pytest
from django.test import Client

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


def test_interactive_docs_are_served():
    assert Client().get("/api/docs/").status_code == 200
