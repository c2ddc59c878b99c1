"""The provisioning organization list counts each organization's orders (contract)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests import builders

pytestmark = pytest.mark.django_db


def test_organization_list_counts_orders(provisioning_client, organization, other_organization):
    builders.zone(organization)
    client = builders.partner_client(organization)
    for n in range(3):
        assert builders.create_order(client, externalRef=f"C-{n}").status_code == 201

    with CaptureQueriesContext(connection) as queries:
        body = provisioning_client.get("/api/provisioning/organizations").json()

    counts = {entry["id"]: entry["counts"]["orders"] for entry in body}
    assert counts == {str(organization.id): 3, str(other_organization.id): 0}
    assert len(queries.captured_queries) <= 3
