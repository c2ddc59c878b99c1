"""A statement a connection runs again and again is prepared (delivery/settings.py,
docs/performance.md "Prepared statements"): PostgreSQL parses and plans it once per connection,
not once per request; DATABASE_PREPARED_STATEMENTS=false turns it off for a pooler that cannot
keep prepared statements (docs/operations.md)."""

import json
import os
import subprocess
import sys

import pytest
from django.db import connection

from tenants.models import Organization

pytestmark = pytest.mark.django_db


def _prepared() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall()]


def test_a_query_run_again_is_prepared_once_on_its_connection():
    for n in range(6):
        list(Organization.objects.filter(slug=f"no-such-{n}"))

    (statement,) = [s for s in _prepared() if '"tenants_organization"' in s]
    assert '"tenants_organization"."slug" = $1' in statement  # one plan, any slug


def test_a_query_run_once_is_not_prepared():
    list(Organization.objects.filter(name="run once"))

    assert not [s for s in _prepared() if '"tenants_organization"."name"' in s]


@pytest.mark.parametrize(("setting", "expected"), [("true", True), ("false", False)])
def test_the_setting_turns_prepared_statements_on_and_off(setting, expected):
    code = (
        "import json, django; django.setup(); from django.conf import settings; "
        "o = settings.DATABASES['default']['OPTIONS']; "
        "print(json.dumps([o.get('server_side_binding'), o.get('prepare_threshold')]))"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "delivery.settings"}
    env["DATABASE_PREPARED_STATEMENTS"] = setting
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout
    # Django prepares nothing without both: client-side binding never prepares.
    assert json.loads(out.splitlines()[-1]) == ([True, 5] if expected else [None, None])
