"""Settings from the environment (contract "Authentication and scope", "Running it"): secrets
required outside development."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION_ENV = {
    "DEBUG": "false",
    "SECRET_KEY": "a-long-random-production-secret-key-0123456789-abcdefghijklmnop",
    "PROVISIONING_SECRET": "prov-secret",
    "FIELD_ENCRYPTION_KEY": "AoUWDpBfIY2F-seBuhOrr3Mfj8b-FUHmU17_EY2C6mE=",
    "ALLOWED_HOSTS": "delivery.example.com",
}


def run_manage(*args: str, env: dict) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in PRODUCTION_ENV}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("missing", ["SECRET_KEY", "PROVISIONING_SECRET", "FIELD_ENCRYPTION_KEY"])
def test_production_refuses_to_start_without_a_secret(missing):
    env = {k: v for k, v in PRODUCTION_ENV.items() if k != missing}
    result = run_manage("check", env=env)
    assert result.returncode != 0
    assert f"{missing} must be set when DEBUG is false" in result.stderr


def test_deploy_check_is_clean_with_production_settings():
    result = run_manage("check", "--deploy", "--fail-level", "WARNING", env=PRODUCTION_ENV)
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout
