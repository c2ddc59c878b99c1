"""Bodies and signatures of outgoing webhooks, exactly as decisions §7 writes them.

The body is serialized once; the signature is computed over exactly those bytes, and those
bytes are what goes on the wire.
"""

import hashlib
import hmac
import json
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


def _serialize(document: dict) -> bytes:
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode()


def partner_request(*, event: Event, webhook_secret: str) -> SignedRequest:
    """`{id, event, payload, at}` signed `X-Service-Signature: sha256=<hex>` (webhookSecret)."""
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
            "X-Service-Signature": f"sha256={hmac_sha256_hex(webhook_secret, body)}",
        },
    )


def erp_request(*, event: Event, api_key_value: str) -> SignedRequest:
    """`{event, eventId, payload}` signed `X-Webhook-Signature: <hex>` (the ERP key's value)."""
    body = _serialize({"event": event.name, "eventId": event.event_id, "payload": event.payload})
    return SignedRequest(
        body=body,
        headers={
            "Content-Type": "application/json",
            "User-Agent": f"{settings.SERVICE_NAME}-webhooks/1",
            "X-Webhook-Signature": hmac_sha256_hex(api_key_value, body),
        },
    )


def signed_request(*, event: Event, api_key_value: str, webhook_secret: str) -> SignedRequest:
    if event.family == Family.ERP:
        return erp_request(event=event, api_key_value=api_key_value)
    return partner_request(event=event, webhook_secret=webhook_secret)
