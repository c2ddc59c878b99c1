"""What `manage.py demo` prints to show webhooks working: the address the service answers at
(from gunicorn's `BIND`), and the steps a person pastes in order to receive and verify the test
event and an `order.created` (docs/webhooks.md "A minimal receiver")."""

import json
import shlex
from urllib.parse import urlsplit

#: gunicorn's default (gunicorn.conf.py, scripts/run.sh)
DEFAULT_BIND = "127.0.0.1:8000"
DEFAULT_WEBHOOK_URL = "http://127.0.0.1:9000/hook"
#: addresses that mean "every interface": a person on this machine calls loopback instead
_ANY_ADDRESS = {"", "0.0.0.0", "::", "[::]"}  # noqa: S104 - read, never bound


def base_url_from_bind(bind: str | None) -> str:
    """`http://<host>:<port>` for a `BIND` of gunicorn's `host:port` form; every-interface
    addresses print as 127.0.0.1. A `unix:` socket or an empty value has no such address: the
    default one is printed."""
    bind = (bind or "").strip() or DEFAULT_BIND
    if bind.startswith(("unix:", "fd://")):
        bind = DEFAULT_BIND
    if ":" not in bind or (bind.startswith("[") and "]:" not in bind):
        host, port = bind, "8000"  # a bare host: gunicorn's default port
    else:
        host, _, port = bind.rpartition(":")
    if host in _ANY_ADDRESS:
        host = "127.0.0.1"
    return f"http://{host}:{port}"


def management_login_line(*, base_url: str, email: str, password: str) -> str:
    """The shell line that logs in to the management API and keeps the bearer token in
    `$TOKEN` (it lasts 12 hours)."""
    api = f"{base_url.rstrip('/')}/api"
    login = json.dumps({"email": email, "password": password})
    read_token = "python3 -c 'import json, sys; print(json.load(sys.stdin)[\"token\"])'"
    return (
        f"TOKEN=$(curl -s -X POST {api}/auth/token -H 'Content-Type: application/json' "
        f"-d {shlex.quote(login)} | {read_token})"
    )


def demo_webhook_lines(
    *,
    base_url: str,
    organization_id,
    api_key_id,
    webhook_secret: str,
    email: str,
    password: str,
    webhook_url: str = DEFAULT_WEBHOOK_URL,
) -> list[tuple[str, str]]:
    """(what it does, the shell line) in the order to paste them: start the receiver of
    docs/webhooks.md, log in (the token goes into $TOKEN), point the key at the receiver, send
    the test event; after the partner order create, list the deliveries."""
    api = f"{base_url.rstrip('/')}/api"
    key_path = f"{api}/manage/organizations/{organization_id}/api-keys/{api_key_id}"
    deliveries = f"{api}/manage/organizations/{organization_id}/webhook-deliveries"
    bearer = '-H "Authorization: Bearer $TOKEN"'  # double quotes: the shell expands $TOKEN
    json_type = "-H 'Content-Type: application/json'"
    port = urlsplit(webhook_url).port or 80
    return [
        (
            'Run the receiver of docs/webhooks.md "A minimal receiver" (saved as '
            "receiver.py) in a terminal of its own:",
            f"WEBHOOK_SECRET={shlex.quote(webhook_secret)} python3 receiver.py {port}",
        ),
        (
            "Log in to the management API as the demo admin (the token lasts 12 hours):",
            management_login_line(base_url=base_url, email=email, password=password),
        ),
        (
            "Point the partner_a key's webhookUrl at the receiver:",
            f"curl -s -X PATCH {shlex.quote(key_path)} {bearer} {json_type} "
            f"-d {shlex.quote(json.dumps({'webhookUrl': webhook_url}))}",
        ),
        (
            'Send the test event (answers "delivered": true; the receiver prints '
            "webhook.test verified):",
            f"curl -s -X POST {shlex.quote(key_path + '/test-webhook')} {bearer}",
        ),
        (
            "Create an order with the first partner curl below: the receiver prints "
            "order.created verified. Then list the deliveries:",
            f"curl -s {shlex.quote(deliveries)} {bearer}",
        ),
    ]
