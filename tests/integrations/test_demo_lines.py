"""integrations.demo: the curl commands `manage.py demo` prints work as pasted."""

import json
import shlex
from urllib.parse import urlsplit

import pytest
from django.test import Client

from integrations.demo import demo_partner_curl_lines
from integrations.models import Order
from tests import builders

pytestmark = pytest.mark.django_db


def run_curl(line: str):
    """Replays a printed curl command through the test client."""
    words = shlex.split(line)
    assert words[:2] == ["curl", "-s"]
    method, url, headers, body = "GET", None, {}, None
    rest = iter(words[2:])
    for word in rest:
        if word == "-X":
            method = next(rest)
        elif word == "-H":
            name, _, value = next(rest).partition(": ")
            headers[f"HTTP_{name.upper().replace('-', '_')}"] = value
        elif word == "-d":
            body = next(rest)
        else:
            url = word
    parts = urlsplit(url)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    content_type = headers.pop("HTTP_CONTENT_TYPE", "application/json")
    client = Client()
    if method == "POST":
        return client.post(path, body, content_type=content_type, **headers)
    return client.get(path, **headers)


def test_demo_lines_create_read_and_list_windows(organization):
    builders.zone(organization, name="Demo Mitte")
    issued = builders.api_key(organization, "partner_a")

    lines = demo_partner_curl_lines(
        base_url="http://127.0.0.1:8000", api_key_value=issued.value, zone_name="Demo Mitte"
    )

    assert len(lines) == 3
    assert all(line.startswith("curl -s ") for line in lines)
    assert "http://127.0.0.1:8000/api/integrations/partner-a/orders" in lines[0]
    created = run_curl(lines[0])
    assert created.status_code == 201, created.content
    replayed = run_curl(lines[0])
    assert replayed.headers["Idempotent-Replayed"] == "true"
    read = run_curl(lines[1])
    assert read.status_code == 200, read.content
    assert read.json()["externalRef"] == created.json()["externalRef"]
    windows = run_curl(lines[2])
    assert windows.status_code == 200, windows.content
    assert windows.json()["zone"] == "Demo Mitte"
    assert windows.json()["windows"][0]["scheduledCount"] == 1
    assert Order.objects.count() == 1
    assert json.loads(shlex.split(lines[0])[-1])["deliveryZone"] == "Demo Mitte"
