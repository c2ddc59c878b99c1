"""Settings from the environment (contract "Authentication and scope", "Running it"): with
DEBUG=false each secret must be set and strong, or the service does not start (docs/operations.md
"Configuration")."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from delivery import secret_policy
from delivery import settings as service_settings

ROOT = Path(__file__).resolve().parents[2]
SECRETS = ("SECRET_KEY", "FIELD_ENCRYPTION_KEY", "PROVISIONING_SECRET")
STRONG = {
    "SECRET_KEY": "a-long-random-production-secret-key-0123456789-abcdefghijklmnop",
    "FIELD_ENCRYPTION_KEY": "hWnCmOfdxF2yD4Ct3xKTMSfH8vQWZjPcBl9JXZKnjXY=",
    "PROVISIONING_SECRET": "production-provisioning-secret-0123456789",
}
PRODUCTION_ENV = {"DEBUG": "false", "ALLOWED_HOSTS": "delivery.example.com", **STRONG}


def run_python(*args: str, env: dict) -> subprocess.CompletedProcess:
    """`python <args>` in the checkout with `env` over this process's environment (secrets
    and DEBUG of the environment left out)."""
    clean = {k: v for k, v in os.environ.items() if k not in PRODUCTION_ENV}
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def run_manage(*args: str, env: dict) -> subprocess.CompletedProcess:
    return run_python("manage.py", *args, env=env)


def import_settings(**secrets: str) -> subprocess.CompletedProcess:
    """Imports the settings module with DEBUG=false, the strong secrets and `secrets` over them
    (None: unset)."""
    env = {k: v for k, v in {**PRODUCTION_ENV, **secrets}.items() if v is not None}
    return run_python("-c", "import delivery.settings", env=env)


def assert_refused(result: subprocess.CompletedProcess, name: str, reason: str) -> None:
    assert result.returncode != 0
    last_line = result.stderr.strip().splitlines()[-1]
    assert last_line.startswith(f"django.core.exceptions.ImproperlyConfigured: {name} {reason};")
    # It tells how to make a good one.
    assert "generate_secrets" in last_line


@pytest.mark.parametrize("missing", SECRETS)
def test_production_refuses_to_start_without_a_secret(missing):
    assert_refused(import_settings(**{missing: None}), missing, "is not set")


@pytest.mark.parametrize("empty", SECRETS)
def test_an_empty_secret_is_a_missing_one(empty):
    assert_refused(import_settings(**{empty: ""}), empty, "is not set")


@pytest.mark.parametrize(
    ("name", "development_default"),
    [
        ("SECRET_KEY", service_settings._DEV_SECRET_KEY),
        ("FIELD_ENCRYPTION_KEY", service_settings._DEV_FIELD_ENCRYPTION_KEY),
        ("PROVISIONING_SECRET", service_settings._DEV_PROVISIONING_SECRET),
    ],
)
def test_production_refuses_the_development_default(name, development_default):
    result = import_settings(**{name: development_default})
    assert_refused(result, name, "is the development default")


@pytest.mark.parametrize(
    ("name", "weak", "reason"),
    [
        ("SECRET_KEY", "x" * 20 + "0123456789abcdefghi", "is shorter than 50 characters"),
        ("SECRET_KEY", "abcd" * 20, "has fewer than 5 distinct characters"),
        (
            "FIELD_ENCRYPTION_KEY",
            "not-a-fernet-key",
            "is not a Fernet key (32 bytes in URL-safe base64, 44 characters)",
        ),
        # URL-safe base64, but of 16 bytes, not 32
        (
            "FIELD_ENCRYPTION_KEY",
            "MDEyMzQ1Njc4OWFiY2RlZg==",
            "is not a Fernet key (32 bytes in URL-safe base64, 44 characters)",
        ),
        ("PROVISIONING_SECRET", "p" * 16 + "0123456789abcde", "is shorter than 32 characters"),
    ],
)
def test_production_refuses_a_weak_secret(name, weak, reason):
    assert_refused(import_settings(**{name: weak}), name, reason)


def test_the_shortest_strong_secrets_are_accepted():
    result = import_settings(
        SECRET_KEY="abcde" * 10,
        PROVISIONING_SECRET="0123456789abcdef" * 2,
        FIELD_ENCRYPTION_KEY=Fernet.generate_key().decode(),
    )
    assert result.returncode == 0, result.stderr


def test_development_runs_on_the_development_secrets():
    result = run_python(
        "-c",
        "from django.conf import settings as s;"
        "print(s.SECRET_KEY, s.FIELD_ENCRYPTION_KEY, s.PROVISIONING_SECRET)",
        env={"DEBUG": "true", "DJANGO_SETTINGS_MODULE": "delivery.settings"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        service_settings._DEV_SECRET_KEY,
        service_settings._DEV_FIELD_ENCRYPTION_KEY,
        service_settings._DEV_PROVISIONING_SECRET,
    ]


def test_generated_secrets_are_fresh_strong_and_start_the_service():
    generated = [run_manage("generate_secrets", env={"DEBUG": "true"}) for _ in range(2)]
    assert [result.returncode for result in generated] == [0, 0], generated[0].stderr
    first, second = (
        dict(line.split("=", 1) for line in result.stdout.splitlines()) for result in generated
    )
    assert set(first) == set(SECRETS)
    assert all(first[name] != second[name] for name in SECRETS)
    assert Fernet(first["FIELD_ENCRYPTION_KEY"]).decrypt(
        Fernet(first["FIELD_ENCRYPTION_KEY"]).encrypt(b"api key")
    ) == (b"api key")
    deploy = run_manage(
        "check", "--deploy", "--fail-level", "WARNING", env={**PRODUCTION_ENV, **first}
    )
    assert deploy.returncode == 0, deploy.stderr


def test_the_readme_one_liners_make_secrets_the_service_accepts():
    made = {}
    for name, line in secret_policy.ONE_LINERS.items():
        result = subprocess.run(
            ["sh", "-c", line], capture_output=True, text=True, timeout=30, check=True
        )
        made[name] = result.stdout.strip()
    result = import_settings(**made)
    assert result.returncode == 0, result.stderr
    readme = (ROOT / "docs" / "operations.md").read_text()
    assert all(line in readme for line in secret_policy.ONE_LINERS.values())


def test_deploy_check_is_clean_with_production_settings():
    result = run_manage("check", "--deploy", "--fail-level", "WARNING", env=PRODUCTION_ENV)
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout
