"""The verification snippets of docs/webhooks.md, run as written against real deliveries (the
Node ones when `node` is installed)."""

import base64
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

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
