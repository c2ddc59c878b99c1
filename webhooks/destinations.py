"""Which webhook URLs we are willing to call (decisions §3: the SSRF rule)."""

import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings

from webhooks.errors import WebhookUrlRefused


def _is_public_address(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return not (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
    )


def validate_webhook_url(url: str) -> None:
    """Raises WebhookUrlRefused unless `url` is an absolute http(s) URL we may call.

    Outside development (WEBHOOK_ALLOW_PRIVATE_URLS=false) every address the host resolves to
    must be public; this runs when the URL is set and again before each delivery, since DNS
    answers can change in between.
    """
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise WebhookUrlRefused("must be an absolute http or https URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise WebhookUrlRefused("must be an absolute http or https URL")
    if settings.WEBHOOK_ALLOW_PRIVATE_URLS:
        return
    try:
        infos = socket.getaddrinfo(parts.hostname, port or 443, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError):
        raise WebhookUrlRefused("host cannot be resolved") from None
    if not infos or not all(_is_public_address(info[4][0]) for info in infos):
        raise WebhookUrlRefused("must not point to a private, loopback or link-local address")
