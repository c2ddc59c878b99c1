"""What `manage.py demo` takes from slots: seeding, and example requests that work."""

import json
import shlex
from urllib.parse import parse_qs, urlsplit

import pytest

from slots import demo
from slots.models import SlotTemplate
from tests import builders

pytestmark = pytest.mark.django_db


def test_demo_seed_is_idempotent(organization):
    builders.slot_zone(organization)
    builders.slot_zone(organization, "Depot", purpose="dispatch", geodata=builders.ALEX_GEODATA)
    demo.demo_slots_seed(organization=organization)
    demo.demo_slots_seed(organization=organization)
    assert SlotTemplate.objects.filter(organization=organization).count() == 15


def test_demo_curl_lines_are_requests_that_work(organization):
    zone = builders.slot_zone(organization)
    demo.demo_slots_seed(organization=organization)
    erp, standard = (
        builders.api_key(organization, "erp"),
        builders.api_key(organization, "standard"),
    )
    slot = demo.demo_slots_next_bookable(organization=organization)
    assert slot is not None and slot.zone.id == zone.id

    lines = demo.demo_slots_curl_lines(
        base_url="http://127.0.0.1:8000",
        erp_key_value=erp.value,
        standard_key_value=standard.value,
        zone_id=zone.id,
        template_id=slot.template.id,
        date=slot.date,
    )

    bulk, single, create, read = (shlex.split(line) for line in lines)
    for command, client in (
        (bulk, builders.key_client(standard)),
        (single, builders.key_client(standard)),
    ):
        url = urlsplit(command[-1])
        assert command[3] == f"X-API-Key: {standard.value}"
        params = {key: values[0] for key, values in parse_qs(url.query).items()}
        assert client.get(url.path, params).status_code == 200
    body = json.loads(create[create.index("-d") + 1])
    assert urlsplit(create[-1]).path == "/api/integrations/erp/orders"
    response = builders.key_client(erp).post("/api/integrations/erp/orders", body, format="json")
    assert response.status_code == 201, response.content
    assert builders.key_client(erp).get(urlsplit(read[-1]).path).status_code == 200
