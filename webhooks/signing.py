"""Bodies and signatures of outgoing webhooks, exactly as contract "Webhooks" writes them.

The body is serialized once; the signature is computed over exactly those bytes, and those
bytes are what goes on the wire. Beside the contract's signature of each family, every request
also carries the Standard Webhooks headers (docs/contract.md "Webhooks"):

    webhook-id: <event id>
    webhook-timestamp: <Unix seconds of this attempt>
    webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">

keyed with the bytes of the key's webhook secret (`standard_webhooks_key`).

While a rolled secret's overlap lasts (docs/webhooks.md "Rolling the secret") the caller passes
the replaced secret too: `webhook-signature` then carries one signature per secret, the new one
first (`v1,<new> v1,<previous>`, as the specification allows), and `X-Service-Signature`, which
holds one, is keyed with the replaced secret, so a receiver that checks only it keeps working
until the overlap ends. The ERP `X-Webhook-Signature` is keyed with the key value either way.
"""

import base64
import binascii
import hashlib
import hmac
import json
import time
from dataclasses import dataclass

from django.conf import settings
from rest_framework.fields import DateTimeField

from webhooks.models import Event, Family

_timestamp = DateTimeField()


@dataclass(frozen=True)
class SignedRequest:
    body: bytes
    headers: dict[str, str]


def hmac_sha256_hex(key: str, body: bytes) -> str:
    return hmac.new(key.encode(), body, hashlib.sha256).hexdigest()


SECRET_PREFIX = "whsec_"


def standard_webhooks_key(webhook_secret: str) -> bytes:
    """The HMAC key the Standard Webhooks signature uses: the bytes the secret encodes.

    Secrets issued now are `whsec_` + standard base64 of 32 random bytes, the specification's
    own form, so its libraries take them as they are. Older secrets are `whsec_` + URL-safe
    base64 without padding of 32 random bytes; decoding that alphabet gives the same kind of
    key, and `docs/webhooks.md` shows receivers how to write it in the specification's form.
    """
    encoded = webhook_secret.removeprefix(SECRET_PREFIX)
    try:
        # Accepts both alphabets: `-_` are translated to `+/`, and `+/` stay as they are.
        return base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
    except (binascii.Error, ValueError):
        # Not base64 at all (never issued by us): sign with its raw bytes rather than fail.
        return encoded.encode()


def standard_webhooks_signature(*, key: bytes, msg_id: str, timestamp: int, body: bytes) -> str:
    """`v1,<base64 HMAC-SHA256 of "<msg_id>.<timestamp>.<body>">`."""
    signed = msg_id.encode() + b"." + str(timestamp).encode() + b"." + body
    digest = hmac.new(key, signed, hashlib.sha256).digest()
    return f"v1,{base64.b64encode(digest).decode()}"


def _standard_webhooks_headers(
    *, msg_id: str, body: bytes, secrets: list[str], timestamp: int | None
) -> dict[str, str]:
    """The three headers; `webhook-signature` has one space-separated entry per secret."""
    # The timestamp is the attempt's own (a retry is signed afresh), so a receiver can refuse
    # a request replayed later without refusing our retries.
    timestamp = int(time.time()) if timestamp is None else timestamp
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": " ".join(
            standard_webhooks_signature(
                key=standard_webhooks_key(secret), msg_id=msg_id, timestamp=timestamp, body=body
            )
            for secret in secrets
        ),
    }


def _signing_secrets(webhook_secret: str, previous_webhook_secret: str | None) -> list[str]:
    """The secrets that sign, the current one first."""
    return [webhook_secret, *([previous_webhook_secret] if previous_webhook_secret else [])]


def _serialize(document: dict) -> bytes:
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode()


def partner_request(
    *,
    event: Event,
    webhook_secret: str,
    previous_webhook_secret: str | None = None,
    timestamp: int | None = None,
) -> SignedRequest:
    """`{id, event, payload, at}` signed `X-Service-Signature: sha256=<hex>` (webhookSecret, or
    during a roll's overlap the secret it replaced)."""
    body = _serialize(
        {
            "id": event.event_id,
            "event": event.name,
            "payload": event.payload,
            "at": _timestamp.to_representation(event.created_at),
        }
    )
    return SignedRequest(
        body=body,
        headers={
            "Content-Type": "application/json",
            "User-Agent": f"{settings.SERVICE_NAME}-webhooks/1",
            "X-Service-Event": event.name,
            "X-Service-Delivery": event.event_id,
            "X-Service-Signature": (
                f"sha256={hmac_sha256_hex(previous_webhook_secret or webhook_secret, body)}"
            ),
            **_standard_webhooks_headers(
                msg_id=event.event_id,
                body=body,
                secrets=_signing_secrets(webhook_secret, previous_webhook_secret),
                timestamp=timestamp,
            ),
        },
    )


def erp_request(
    *,
    event: Event,
    api_key_value: str,
    webhook_secret: str,
    previous_webhook_secret: str | None = None,
    timestamp: int | None = None,
) -> SignedRequest:
    """`{event, eventId, payload}` signed `X-Webhook-Signature: <hex>` (the ERP key's value);
    the Standard Webhooks signature uses the key's webhook secret, as for partners."""
    body = _serialize({"event": event.name, "eventId": event.event_id, "payload": event.payload})
    return SignedRequest(
        body=body,
        headers={
            "Content-Type": "application/json",
            "User-Agent": f"{settings.SERVICE_NAME}-webhooks/1",
            "X-Webhook-Signature": hmac_sha256_hex(api_key_value, body),
            **_standard_webhooks_headers(
                msg_id=event.event_id,
                body=body,
                secrets=_signing_secrets(webhook_secret, previous_webhook_secret),
                timestamp=timestamp,
            ),
        },
    )


def signed_request(
    *,
    event: Event,
    api_key_value: str,
    webhook_secret: str,
    previous_webhook_secret: str | None = None,
    timestamp: int | None = None,
) -> SignedRequest:
    """The request of `event` for its family, signed now (or at `timestamp`, Unix seconds);
    `previous_webhook_secret` only while a roll's overlap lasts at this attempt."""
    if event.family == Family.ERP:
        return erp_request(
            event=event,
            api_key_value=api_key_value,
            webhook_secret=webhook_secret,
            previous_webhook_secret=previous_webhook_secret,
            timestamp=timestamp,
        )
    return partner_request(
        event=event,
        webhook_secret=webhook_secret,
        previous_webhook_secret=previous_webhook_secret,
        timestamp=timestamp,
    )
