"""Which webhook URLs the service is willing to call, and at which address.

docs/contract.md "Provisioning" (`webhookUrl`) and "Webhooks": a webhook URL is an absolute
`http` or `https` URL without user information; outside development
(`WEBHOOK_ALLOW_PRIVATE_URLS=false`) every address its host resolves to must be globally
routable, also when it hides an IPv4 address inside an IPv6 form (IPv4-mapped, IPv4-compatible,
6to4, Teredo, NAT64). The check runs when a key's URL is set and again before each delivery,
and the delivery connects to the very address checked (`Destination.addresses`): a DNS answer
that changes between the check and the connection (DNS rebinding) is never used.

Here, at the bottom layer, because tenants validates key URLs and webhooks sends to them.
"""

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

from delivery.errors import ValidationFailed

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

#: Ranges refused whatever the running Python's `is_global` says (its tables grew over
#: releases): the IANA special-purpose registries' not-globally-reachable entries, plus
#: deprecated anycast and the IPv6 documentation and SRv6 blocks.
_NOT_GLOBAL = tuple(
    ipaddress.ip_network(net)
    for net in (
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.0.0.0/24",
        "192.0.2.0/24",
        "192.88.99.0/24",
        "192.168.0.0/16",
        "198.18.0.0/15",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "224.0.0.0/4",
        "240.0.0.0/4",
        "::/128",
        "::1/128",
        "64:ff9b:1::/48",
        "100::/64",
        "2001::/23",
        "2001:db8::/32",
        "3fff::/20",
        "5f00::/16",
        "fc00::/7",
        "fe80::/10",
        "fec0::/10",
        "ff00::/8",
    )
)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")


class WebhookUrlRefused(ValidationFailed):
    code = "webhook_url_refused"

    def __init__(self, reason: str):
        super().__init__([f"webhookUrl {reason}"])


NOT_A_URL = "must be an absolute http or https URL"
USER_INFO = "must not contain user information (user:password@)"
UNRESOLVABLE = "host cannot be resolved"
NOT_PUBLIC = "must not point to a private, loopback, link-local or other non-public address"


@dataclass(frozen=True)
class Destination:
    """A webhook URL taken apart, with the addresses its host resolved to (checked)."""

    scheme: str
    #: the host in ASCII (IDNA) form, without brackets: TLS server name and certificate check
    hostname: str
    port: int
    #: the `Host` header: the host as in the URL, with the port when it is not the default
    host_header: str
    #: path and query: the request target
    target: str
    #: where to connect, in the resolver's order; each passed the check
    addresses: tuple[str, ...]


def _reached(ip: IPAddress) -> list[IPAddress]:
    """The addresses traffic to `ip` actually reaches: an IPv6 form that carries an IPv4
    address is that IPv4 address (mapped, compatible, NAT64), or is relayed through it (6to4,
    Teredo: then both count)."""
    if isinstance(ip, ipaddress.IPv4Address):
        return [ip]
    if ip.ipv4_mapped is not None:
        return [ip.ipv4_mapped]
    if ip in _NAT64 or ip in _IPV4_COMPATIBLE:
        return [ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)]
    reached: list[IPAddress] = [ip]
    if ip.sixtofour is not None:
        reached.append(ip.sixtofour)
    if ip.teredo is not None:
        reached.extend(ip.teredo)
    return reached


def _is_global(ip: IPAddress) -> bool:
    return (
        ip.is_global
        and not ip.is_multicast
        and not ip.is_reserved
        and not any(ip in net for net in _NOT_GLOBAL if net.version == ip.version)
    )


def is_public_address(address: str) -> bool:
    """True when `address` (text, IPv4 or IPv6, an optional `%zone` ignored) and every address
    it carries inside are globally routable."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    return all(_is_global(reached) for reached in _reached(ip))


def _parse(url: str):
    if not isinstance(url, str) or any(ord(c) <= 0x20 or ord(c) == 0x7F for c in url):
        # urlsplit silently drops tabs and newlines; whitespace is never part of a valid URL.
        raise WebhookUrlRefused(NOT_A_URL)
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise WebhookUrlRefused(NOT_A_URL) from None
    if parts.scheme not in ("http", "https") or not parts.hostname or port == 0:
        raise WebhookUrlRefused(NOT_A_URL)
    if "@" in parts.netloc:
        # Credentials in a URL end up in logs and admin pages, and `user@host` is a classic way
        # to make a URL look like it points elsewhere.
        raise WebhookUrlRefused(USER_INFO)
    try:
        hostname = parts.hostname.rstrip(".").encode("idna").decode("ascii")
    except UnicodeError:
        raise WebhookUrlRefused(UNRESOLVABLE) from None
    if not hostname:
        raise WebhookUrlRefused(NOT_A_URL)
    return parts, hostname, port


def resolve(hostname: str, port: int) -> list[str]:
    """The addresses of `hostname`, in the resolver's order, without repeats (one DNS query)."""
    try:
        infos = socket.getaddrinfo(hostname, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, OSError):
        raise WebhookUrlRefused(UNRESOLVABLE) from None
    addresses: list[str] = []
    for info in infos:
        address = info[4][0]
        if info[0] in (socket.AF_INET, socket.AF_INET6) and address not in addresses:
            addresses.append(address)
    if not addresses:
        raise WebhookUrlRefused(UNRESOLVABLE)
    return addresses


def _check(addresses: list[str]) -> None:
    if settings.WEBHOOK_ALLOW_PRIVATE_URLS:
        return
    # Every answer must pass, not just the first: the connection may use any of them.
    if not all(is_public_address(address) for address in addresses):
        raise WebhookUrlRefused(NOT_PUBLIC)


def webhook_url_validate(url: str) -> None:
    """Raises WebhookUrlRefused unless `url` may be set as a key's `webhookUrl` (400)."""
    parts, hostname, port = _parse(url)
    if settings.WEBHOOK_ALLOW_PRIVATE_URLS:
        return  # development: local receivers, and names that need not resolve yet
    _check(resolve(hostname, port or (443 if parts.scheme == "https" else 80)))


def webhook_destination(url: str) -> Destination:
    """Resolves the host of `url` once and checks every answer; the caller connects only to
    `addresses` (with `hostname` as the TLS server name), never resolving again."""
    parts, hostname, port = _parse(url)
    default_port = 443 if parts.scheme == "https" else 80
    try:
        ip_literal = ipaddress.ip_address(hostname)
    except ValueError:
        ip_literal = None
    if ip_literal is not None:
        addresses = [str(ip_literal)]
    else:
        addresses = resolve(hostname, port or default_port)
    _check(addresses)
    netloc_host = f"[{hostname}]" if ":" in hostname else hostname
    return Destination(
        scheme=parts.scheme,
        hostname=hostname,
        port=port or default_port,
        host_header=netloc_host if port in (None, default_port) else f"{netloc_host}:{port}",
        target=(parts.path or "/") + (f"?{parts.query}" if parts.query else ""),
        addresses=tuple(addresses),
    )
