"""`manage.py demo` creates the demo tenant idempotently and prints working keys."""

import re
from io import StringIO

import pytest
from django.core.management import call_command

from slots.models import SlotTemplate
from tenants.models import ApiKey, Organization
from tests.conftest import assert_error
from zones.models import Zone

pytestmark = pytest.mark.django_db


def run_demo() -> str:
    out = StringIO()
    call_command("demo", stdout=out)
    return out.getvalue()


def test_demo_is_idempotent_and_prints_working_keys(api_client, settings):
    settings.BENCH_ENDPOINTS = True
    first = run_demo()
    second = run_demo()

    assert Organization.objects.filter(slug="demo").count() == 1
    assert ApiKey.objects.filter(organization__slug="demo").count() == 5
    assert Zone.objects.filter(organization__slug="demo").count() == 3
    templates = SlotTemplate.objects.filter(zone__organization__slug="demo").count()
    assert templates > 0
    assert "curl -s -X POST" in second
    keys = dict(re.findall(r"API key (\w+)\s+(sk_\S+)", second))
    assert set(keys) == {"partner_a", "partner_b", "partner_c", "standard", "erp"}
    assert keys == dict(re.findall(r"API key (\w+)\s+(sk_\S+)", first))
    api_client.credentials(HTTP_X_API_KEY=keys["standard"])
    assert api_client.get("/api/bench/hello-auth").status_code == 200
    api_client.credentials(HTTP_X_API_KEY=keys["standard"] + "x")
    assert_error(api_client.get("/api/bench/hello-auth"), 401)
