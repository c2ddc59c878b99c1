"""docker-compose.yml as a user meets it (README "Quick start"): its defaults make a stack that
works over plain http on localhost, the web healthcheck's own request is allowed, every service
gets the same settings, and worker and beat are health-checked. Checked without Docker: the
compose file is read here, its ${...} defaults applied as Compose applies them, and the
settings module imported in a subprocess with exactly the environment it gives a service."""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from delivery import secret_policy

ROOT = Path(__file__).resolve().parents[2]
APP_SERVICES = ("migrate", "web", "worker", "beat")
PASSED_THROUGH = (
    "SECURE_SSL_REDIRECT",
    "SESSION_COOKIE_SECURE",
    "CSRF_COOKIE_SECURE",
    "CSRF_TRUSTED_ORIGINS",
    "ALLOWED_HOSTS",
    "METRICS_TOKEN",
    "GUNICORN_ACCESS_LOG",
    "ACCESS_LOG",
    "LOG_LEVEL",
    "TRACKING_BASE_URL",
)
#: What a user puts in .env: the secrets the compose file requires, nothing else.
DOT_ENV = {"POSTGRES_PASSWORD": "local-postgres-password", **secret_policy.generate()}
INTERPOLATION = re.compile(r"\$\{(\w+)(?::([-?])([^}]*))?\}")


def interpolate(value: str, variables: dict[str, str]) -> str:
    """Compose's ${NAME}, ${NAME:-default} and ${NAME:?error} with `variables` as the shell's
    environment and .env."""

    def substitute(match: re.Match) -> str:
        name, kind, argument = match.groups()
        if variables.get(name):
            return variables[name]
        if kind == "?":
            raise AssertionError(f"compose refuses to start without {name}: {argument}")
        return argument if kind == "-" else ""

    return INTERPOLATION.sub(substitute, value)


def compose_environment(service: str, variables: dict[str, str] = DOT_ENV) -> dict[str, str]:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    environment = compose["services"][service].get("environment", {})
    return {name: interpolate(str(value), variables) for name, value in environment.items()}


def service(name: str) -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"][name]


SETTINGS_PRINTER = """
import json
from django.conf import settings as s
print(json.dumps({name: getattr(s, name) for name in (
    "DEBUG", "ALLOWED_HOSTS", "SECURE_SSL_REDIRECT", "SESSION_COOKIE_SECURE",
    "CSRF_COOKIE_SECURE", "CSRF_TRUSTED_ORIGINS", "METRICS_TOKEN")}))
"""


def settings_under(environment: dict[str, str]) -> dict:
    """The settings a service with exactly `environment` (plus PATH) runs with."""
    result = subprocess.run(
        [sys.executable, "-c", SETTINGS_PRINTER],
        cwd=ROOT,
        env={
            "PATH": os.environ["PATH"],
            "DJANGO_SETTINGS_MODULE": "delivery.settings",
            **environment,
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def healthcheck_command(name: str) -> str:
    test = service(name)["healthcheck"]["test"]
    assert test[0] in ("CMD", "CMD-SHELL"), test
    return " ".join(test[1:])


def test_the_web_healthchecks_own_request_is_allowed_and_not_redirected():
    url = re.search(r"https?://[^'\" ]+", healthcheck_command("web")).group(0)
    assert urlsplit(url).scheme == "http"
    settings = settings_under(compose_environment("web"))
    assert settings["DEBUG"] is False
    assert urlsplit(url).hostname in settings["ALLOWED_HOSTS"]
    assert settings["SECURE_SSL_REDIRECT"] is False


def test_the_defaults_serve_plain_http_on_localhost():
    settings = settings_under(compose_environment("web"))
    assert "localhost" in settings["ALLOWED_HOSTS"]
    assert settings["SECURE_SSL_REDIRECT"] is False
    # A browser keeps no Secure cookie from an http page: the admin login's CSRF would fail.
    assert settings["SESSION_COOKIE_SECURE"] is False
    assert settings["CSRF_COOKIE_SECURE"] is False
    assert "http://localhost:8000" in settings["CSRF_TRUSTED_ORIGINS"]
    assert service("web")["ports"] == ["8000:8000"]


def test_production_overrides_come_from_the_environment():
    production = {
        **DOT_ENV,
        "ALLOWED_HOSTS": "delivery.example.com",
        "SECURE_SSL_REDIRECT": "true",
        "SESSION_COOKIE_SECURE": "true",
        "CSRF_COOKIE_SECURE": "true",
        "CSRF_TRUSTED_ORIGINS": "https://delivery.example.com",
        "METRICS_TOKEN": "scrape-token",
    }
    for name in APP_SERVICES:
        settings = settings_under(compose_environment(name, production))
        assert settings == {
            "DEBUG": False,
            "ALLOWED_HOSTS": ["delivery.example.com"],
            "SECURE_SSL_REDIRECT": True,
            "SESSION_COOKIE_SECURE": True,
            "CSRF_COOKIE_SECURE": True,
            "CSRF_TRUSTED_ORIGINS": ["https://delivery.example.com"],
            "METRICS_TOKEN": "scrape-token",
        }, name


@pytest.mark.parametrize("name", APP_SERVICES)
def test_every_app_service_gets_the_passed_through_settings(name):
    environment = compose_environment(name, {**DOT_ENV, "GUNICORN_ACCESS_LOG": "-"})
    assert set(PASSED_THROUGH) <= set(environment)
    assert environment["GUNICORN_ACCESS_LOG"] == "-"
    assert environment["DEBUG"] == "false"


@pytest.mark.parametrize("name", ["web", "worker", "beat"])
def test_every_long_running_service_has_a_healthcheck(name):
    assert healthcheck_command(name)


def run_healthcheck(name: str, **environment: str) -> subprocess.CompletedProcess:
    """The service's healthcheck command, run by a shell as Docker runs CMD-SHELL, with the
    virtualenv's `celery` on PATH."""
    command = healthcheck_command(name).replace("$$", "$")
    return subprocess.run(
        ["sh", "-c", command],
        cwd=ROOT,
        env={
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            **environment,
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_worker_healthcheck_pings_this_very_worker_through_the_broker(tmp_path):
    node = f"ops-check-{os.getpid()}"
    command = service("worker")["command"]
    worker = subprocess.Popen(
        [str(Path(sys.executable).parent / command[0]), *command[1:], "-n", f"celery@{node}"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while (healthy := run_healthcheck("worker", HOSTNAME=node)).returncode != 0:
            assert worker.poll() is None and time.monotonic() < deadline, healthy.stderr
        assert f"celery@{node}: OK" in healthy.stdout
        # Another container's worker answering does not make this one healthy.
        assert run_healthcheck("worker", HOSTNAME=f"{node}-gone").returncode != 0
    finally:
        worker.terminate()
        worker.wait(timeout=30)


def test_the_beat_healthcheck_passes_while_beat_writes_its_schedule(tmp_path):
    """A real beat writes its schedule file at start (then every 3 minutes); the check finds it
    by the same pattern and fails once the file is 5 minutes old."""
    command = service("beat")["command"]
    schedule = command[command.index("--schedule") + 1]
    directory = schedule.rsplit("/", 1)[0]
    ours = str(tmp_path / schedule.rsplit("/", 1)[1])
    beat = subprocess.Popen(
        [
            str(Path(sys.executable).parent / command[0]),
            *[ours if part == schedule else part for part in command[1:]],
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        check = healthcheck_command("beat").replace(f"find {directory} ", f"find {tmp_path} ")
        assert check != healthcheck_command("beat")

        def healthy() -> bool:
            return subprocess.run(["sh", "-c", check], check=False).returncode == 0

        deadline = time.monotonic() + 60
        while not healthy():
            assert beat.poll() is None and time.monotonic() < deadline
            time.sleep(0.5)
    finally:
        beat.terminate()
        beat.wait(timeout=30)
    six_minutes_ago = time.time() - 360
    for written in tmp_path.iterdir():
        os.utime(written, (six_minutes_ago, six_minutes_ago))
    assert not healthy()
