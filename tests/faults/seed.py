"""Seeds the fault tests' database through the services, with the test builders (run inside
`manage.py shell -c`)."""

import json
import uuid

from tests import builders


def main(webhook_urls: list[str]) -> None:
    tenants = []
    for n, url in enumerate(webhook_urls, start=1):
        organization = builders.organization(f"Faults {n} {uuid.uuid4().hex[:6]}")
        # Berlin Mitte, the zone every fault-test order falls in.
        builders.zone(organization)
        issued = builders.api_key(organization, "partner_a", name="partner", webhook_url=url)
        admin_email = f"admin-{organization.id}@example.com"
        builders.admin(organization, admin_email)
        tenants.append(
            {
                "organization_id": str(organization.id),
                "api_key": issued.value,
                "admin_email": admin_email,
                "api_key_id": str(issued.api_key.id),
            }
        )
    print("SEED " + json.dumps(tenants))  # read by tests/faults/infra.py
