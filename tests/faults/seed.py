"""Seeds the fault tests' database through the services (run inside `manage.py shell -c`)."""

import json
import uuid

from tenants.services import api_key_create, organization_create
from zones.services import zone_create

# Berlin Mitte, the zone every fault-test order falls in (as tests/builders.py).
MITTE_GEODATA = {
    "type": "Polygon",
    "coordinates": [
        [[13.37, 52.50], [13.43, 52.50], [13.43, 52.54], [13.37, 52.54], [13.37, 52.50]]
    ],
}


def main(webhook_urls: list[str]) -> None:
    tenants = []
    for n, url in enumerate(webhook_urls, start=1):
        organization = organization_create(name=f"Faults {n} {uuid.uuid4().hex[:6]}")
        zone_create(
            organization=organization,
            name="Mitte",
            geodata=MITTE_GEODATA,
            timezone_name="Europe/Berlin",
        )
        issued = api_key_create(
            organization=organization, name="partner", platform="partner_a", webhook_url=url
        )
        tenants.append({"organization_id": str(organization.id), "api_key": issued.value})
    print("SEED " + json.dumps(tenants))  # read by tests/faults/infra.py
