"""The verification snippets of docs/webhooks.md, run as written against real deliveries (the
Node ones when `node` is installed)."""

import base64
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tenants import services as tenant_services
from tests import builders
from webhooks import tasks
from webhooks.models import Delivery

pytestmark = pytest.mark.django_db

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "webhooks.md"


def snippets(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", GUIDE.read_text(), flags=re.DOTALL)


def snippet_defining(language: str, name: str) -> str:
    (code,) = [code for code in snippets(language) if re.search(rf"\b{name}\b\s*\(", code)][:1]
    return code


def a_real_delivery(organization, receiver):
    issued = builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    builders.order_event(organization, "SO-ü-1")
    tasks.deliver(str(Delivery.objects.get(organization=organization).id))
    (request,) = receiver.wait_for(1)
    return issued, request


def lower_headers(request) -> dict:
    return {name.lower(): value for name, value in request.headers.items()}


def test_python_snippets_verify_a_real_delivery(organization, receiver):
    issued, request = a_real_delivery(organization, receiver)
    namespace: dict = {}
    exec(snippet_defining("python", "partner_signature_ok"), namespace)  # noqa: S102
    exec(snippet_defining("python", "standard_signature_ok"), namespace)  # noqa: S102
    headers = lower_headers(request)

    assert namespace["partner_signature_ok"](
        request.body, headers["x-service-signature"], issued.webhook_secret
    )
    assert namespace["standard_signature_ok"](request.body, headers, issued.webhook_secret)
    assert not namespace["standard_signature_ok"](
        request.body + b" ", headers, issued.webhook_secret
    )


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_node_snippets_verify_a_real_delivery(organization, receiver, tmp_path):
    issued, request = a_real_delivery(organization, receiver)
    script = "\n".join(
        [
            snippet_defining("javascript", "partnerSignatureOk").replace(
                'const crypto = require("node:crypto");', ""
            ),
            snippet_defining("javascript", "standardSignatureOk").replace(
                'const crypto = require("node:crypto");', ""
            ),
            "const input = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));",
            "const body = Buffer.from(input.body, 'base64');",
            "console.log(JSON.stringify([",
            "  partnerSignatureOk(body, input.headers['x-service-signature'], input.secret),",
            "  standardSignatureOk(body, input.headers, input.secret),",
            "  standardSignatureOk(Buffer.concat([body, Buffer.from(' ')]), input.headers,",
            "    input.secret),",
            "]));",
        ]
    )
    path = tmp_path / "verify.js"
    path.write_text('const crypto = require("node:crypto");\n' + script)
    stdin = json.dumps(
        {
            "body": base64.b64encode(request.body).decode(),
            "headers": lower_headers(request),
            "secret": issued.webhook_secret,
        }
    )
    result = subprocess.run(
        ["node", str(path)], input=stdin, capture_output=True, text=True, timeout=30, check=True
    )
    assert json.loads(result.stdout) == [True, True, False]


def receiver_snippet() -> str:
    section = GUIDE.read_text().split("## A minimal receiver", 1)[1]
    return re.search(r"```python\n(.*?)```", section, flags=re.DOTALL).group(1)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def minimal_receiver(tmp_path):
    """The guide's receiver, saved and run as it says, with the secret it is given."""
    started = []

    def start(secret: str) -> str:
        port = free_port()
        (tmp_path / "receiver.py").write_text(receiver_snippet())
        process = subprocess.Popen(
            [sys.executable, "receiver.py", str(port)],
            cwd=tmp_path,
            env={**os.environ, "WEBHOOK_SECRET": secret},
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        started.append(process)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    return f"http://127.0.0.1:{port}/hook"
            time.sleep(0.05)
        raise AssertionError("the receiver did not start")

    yield start
    for process in started:
        process.terminate()
        process.communicate(timeout=10)


def test_the_minimal_receiver_is_twelve_lines_and_verifies_real_deliveries(
    organization, minimal_receiver
):
    code = receiver_snippet()
    assert len([line for line in code.splitlines() if line.strip()]) == 12  # as the guide says
    issued = builders.api_key(organization, "partner_a")
    url = minimal_receiver(issued.webhook_secret)
    tenant_services.api_key_update(api_key=issued.api_key, webhook_url=url)

    builders.order_event(organization, "SO-1")
    tasks.deliver(str(Delivery.objects.get(organization=organization).id))

    delivery = Delivery.objects.get(organization=organization)
    assert delivery.status == "delivered"
    assert delivery.attempt_set.get().status_code == 204


def test_the_minimal_receiver_refuses_a_wrong_signature(organization, minimal_receiver):
    issued = builders.api_key(organization, "partner_a")
    url = minimal_receiver("whsec_not-the-secret")
    tenant_services.api_key_update(api_key=issued.api_key, webhook_url=url)

    builders.order_event(organization, "SO-1")
    tasks.deliver(str(Delivery.objects.get(organization=organization).id))

    delivery = Delivery.objects.get(organization=organization)
    assert delivery.status == "pending"  # a failed attempt, retried later
    assert delivery.attempt_set.get().status_code == 401


def test_the_rolling_snippet_accepts_either_secret_during_a_roll(organization, receiver, manager):
    issued, _ = a_real_delivery(organization, receiver)
    rolled = manager.post(
        f"/api/manage/organizations/{organization.id}/api-keys/{issued.api_key.id}"
        "/webhook-secret/roll",
        {"overlapHours": 24},
        format="json",
    ).json()["webhookSecret"]
    builders.order_event(organization, "SO-2")
    for delivery in Delivery.objects.filter(organization=organization, status="pending"):
        tasks.deliver(str(delivery.id))
    during = receiver.wait_for(2)[-1]
    namespace: dict = {}
    exec(snippet_defining("python", "partner_signature_ok"), namespace)  # noqa: S102
    exec(snippet_defining("python", "partner_signature_ok_with_any"), namespace)  # noqa: S102
    header = lower_headers(during)["x-service-signature"]

    assert namespace["partner_signature_ok_with_any"](
        during.body, header, [issued.webhook_secret, rolled]
    )
    assert not namespace["partner_signature_ok_with_any"](during.body, header, [rolled])
    # The hand-written Standard Webhooks check takes any entry: either secret verifies.
    exec(snippet_defining("python", "standard_signature_ok"), namespace)  # noqa: S102
    for secret in (issued.webhook_secret, rolled):
        assert namespace["standard_signature_ok"](during.body, lower_headers(during), secret)
