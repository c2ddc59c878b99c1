"""`manage.py demo` creates the demo tenant idempotently and prints working keys, and the steps
that show webhooks working (pasted in a shell against a live server)."""

import json
import os
import re
import signal
import socket
import subprocess
import time
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from delivery.encryption import decrypt_text
from demo.webhook_lines import base_url_from_bind
from slots.models import SlotTemplate
from tenants import services as tenant_services
from tenants.models import ApiKey, Organization
from tests.conftest import assert_error
from tests.webhooks.conftest import celery_worker, test_broker  # noqa: F401 - fixtures
from webhooks import tasks
from webhooks.models import Delivery
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


@pytest.mark.parametrize(
    ("bind", "base_url"),
    [
        (None, "http://127.0.0.1:8000"),
        ("127.0.0.1:8000", "http://127.0.0.1:8000"),
        ("0.0.0.0:8150", "http://127.0.0.1:8150"),
        (":8151", "http://127.0.0.1:8151"),
        ("[::]:8152", "http://127.0.0.1:8152"),
        ("[::1]:8153", "http://[::1]:8153"),
        ("localhost", "http://localhost:8000"),
        ("demo.example:80", "http://demo.example:80"),
        ("unix:/run/delivery.sock", "http://127.0.0.1:8000"),
    ],
)
def test_the_printed_address_follows_bind(bind, base_url):
    assert base_url_from_bind(bind) == base_url


def test_demo_prints_addresses_from_bind_unless_given(monkeypatch):
    monkeypatch.setenv("BIND", "0.0.0.0:8150")
    from_bind = run_demo()
    given = StringIO()
    call_command("demo", base_url="http://demo.example:9999", stdout=given)

    assert "curl -s http://127.0.0.1:8150/readyz" in from_bind
    assert "http://127.0.0.1:8150/api/auth/token" in from_bind
    assert "0.0.0.0" not in from_bind  # noqa: S104 - a printed text, nothing is bound
    assert "curl -s http://demo.example:9999/readyz" in given.getvalue()
    assert "127.0.0.1:8150" not in given.getvalue()


def test_demo_prints_the_partner_keys_webhook_secret_the_same_on_every_run():
    first, second = run_demo(), run_demo()

    secret = re.search(r"Webhook secret of the partner_a key: (whsec_\S+)", second).group(1)
    assert secret in first
    stored = ApiKey.objects.get(organization__slug="demo", platform="partner_a", is_active=True)
    assert decrypt_text(stored.encrypted_webhook_secret) == secret
    assert f"WEBHOOK_SECRET={secret} python3 receiver.py 9000" in second


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for_port(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"nothing listens on {port}")


def _receiver_snippet() -> str:
    guide = (Path(__file__).resolve().parents[2] / "docs" / "webhooks.md").read_text()
    section = guide.split("## A minimal receiver", 1)[1]
    return re.search(r"```python\n(.*?)```", section, flags=re.DOTALL).group(1)


def _bash(script: str) -> str:
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


@pytest.mark.usefixtures("celery_worker")
def test_the_printed_webhook_steps_pasted_in_a_shell_deliver_verified_events(live_server, tmp_path):
    """Steps 1-5 as printed, run by bash against a live server, with the receiver of
    docs/webhooks.md saved as receiver.py: the test event and an order.created arrive and
    verify, and the deliveries list shows both delivered. A real worker sends them, as under
    `make run`: the test event is sent by the worker too (the web process waits for it)."""
    port = _free_port()
    out = StringIO()
    call_command(
        "demo",
        base_url=live_server.url,
        webhook_url=f"http://127.0.0.1:{port}/hook",
        stdout=out,
    )
    printed = out.getvalue().splitlines()
    steps = [printed[n + 1].strip() for n, line in enumerate(printed) if re.match(r"  \d\. ", line)]
    partner_create = next(
        line.strip()
        for line in printed
        if line.strip().startswith(f"curl -s -X POST {live_server.url}/api/integrations/")
    )
    (tmp_path / "receiver.py").write_text(_receiver_snippet())
    receiver = subprocess.Popen(  # noqa: S602 - the printed line, as a person pastes it
        steps[0],
        shell=True,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    try:
        _wait_for_port(port)
        answers = _bash("\n".join([steps[1], steps[2], "echo", steps[3], "echo", partner_create]))
        for delivery in Delivery.objects.filter(status="pending"):
            tasks.deliver(str(delivery.id))
        listed = json.loads(_bash("\n".join([steps[1], steps[4]])))
    finally:
        os.killpg(receiver.pid, signal.SIGTERM)
        received = receiver.communicate(timeout=10)[0]

    updated, tested, created = (json.loads(line) for line in answers.splitlines())
    assert updated["webhookUrl"] == f"http://127.0.0.1:{port}/hook"
    assert tested == {
        "delivered": True,
        "statusCode": 204,
        "latencyMs": tested["latencyMs"],
        "error": None,
    }
    assert created["trackingUrl"] == f"{live_server.url}/track/{created['trackingToken']}"
    assert sorted(item["event"] for item in listed["items"]) == ["order.created", "webhook.test"]
    assert {item["status"] for item in listed["items"]} == {"delivered"}
    assert "webhook.test verified" in received
    assert "order.created verified" in received
    assert "BAD SIGNATURE" not in received


def test_during_a_roll_the_receiver_step_uses_the_secret_x_service_signature_still_has():
    run_demo()
    partner_key = ApiKey.objects.get(
        organization__slug="demo", platform="partner_a", is_active=True
    )
    replaced = decrypt_text(partner_key.encrypted_webhook_secret)
    rolled = tenant_services.api_key_webhook_secret_roll(api_key=partner_key, overlap_hours=24)

    printed = run_demo()

    assert f"Webhook secret of the partner_a key: {rolled.webhook_secret}" in printed
    assert f"X-Service-Signature is still keyed with {replaced}" in printed
    assert f"WEBHOOK_SECRET={replaced} python3 receiver.py 9000" in printed
