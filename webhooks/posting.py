"""POSTing a signed request to an address netguard has just checked (delivery/netguard.py), with
the URL's host as `Host`, TLS server name and certificate name (contract "Webhooks"), over a
kept-alive connection per worker thread and (address, host name)."""

import threading
import time
from dataclasses import dataclass

import certifi
import urllib3
from django.conf import settings
from urllib3.exceptions import HTTPError, NewConnectionError, ProtocolError
from urllib3.exceptions import TimeoutError as Urllib3Timeout
from urllib3.util import Timeout

from delivery.netguard import Destination
from webhooks import signing

MAX_RESPONSE_BYTES = 64 * 1024  # of a body we read (only to let the connection be reused)
ERROR_MAX_LENGTH = 500
CA_CERTS = certifi.where()  # the authorities a receiver's certificate must chain to
POOLS_PER_THREAD = 32  # keep-alive connection pools, one per (address, host name)

_local = threading.local()


@dataclass(frozen=True)
class Outcome:
    status_code: int | None
    error: str
    latency_ms: int
    #: no later attempt can succeed (the key was revoked): the delivery fails at once
    permanent: bool = False

    @property
    def succeeded(self) -> bool:
        return not self.error and self.status_code is not None and 200 <= self.status_code < 300


def error_text(message: str) -> str:
    return message[:ERROR_MAX_LENGTH]


def _pool(destination: Destination, address: str):
    """The thread's keep-alive pool that connects to `address` and speaks to the URL's host name
    (`Host`, SNI, certificate check), never the address; no environment proxy is used."""
    if not hasattr(_local, "pools"):
        _local.pools = urllib3.PoolManager(num_pools=POOLS_PER_THREAD, maxsize=1, retries=False)
    tls = {
        "server_hostname": destination.hostname,
        "assert_hostname": destination.hostname,
        "cert_reqs": "CERT_REQUIRED",
        "ca_certs": CA_CERTS,
    }
    return _local.pools.connection_from_host(
        address,
        port=destination.port,
        scheme=destination.scheme,
        pool_kwargs=tls if destination.scheme == "https" else {},
    )


def _status(response, *, started: float, total: float) -> int:
    """The answer's status; the connection is kept alive only if its body, read within the time
    left, had at most MAX_RESPONSE_BYTES."""
    read, complete = 0, False
    try:
        for chunk in response.stream(8192):
            read += len(chunk)
            if read > MAX_RESPONSE_BYTES or time.monotonic() - started > total:
                break
        else:
            complete = True
        return response.status
    finally:
        if not complete:
            response.close()  # not reusable: unread bytes are still on the wire
        response.release_conn()


def post(destination: Destination, request: signing.SignedRequest) -> Outcome:
    """POSTs once (no redirect followed); success is a 2xx within WEBHOOK_TIMEOUT_SECONDS. An
    address that refuses the connection hands over to the next one."""
    total = float(settings.WEBHOOK_TIMEOUT_SECONDS)
    options = {
        # Connecting gets at most 3 s; reading gets what is left of the total.
        "timeout": Timeout(connect=min(3.0, total), read=total, total=total),
        "retries": False,
        "redirect": False,
        "assert_same_host": False,
        "preload_content": False,
        "body": request.body,
        "headers": {**request.headers, "Host": destination.host_header},
    }
    started = time.monotonic()
    for number, address in enumerate(destination.addresses, start=1):
        try:
            pool = _pool(destination, address)
            response = pool.urlopen("POST", destination.target, **options)
            status_code = _status(response, started=started, total=total)
            break
        except NewConnectionError as exc:  # (a subclass of the connect timeout: caught first)
            if number < len(destination.addresses):
                continue
            error = f"ConnectionError: {address}: {exc.__cause__ or exc}"
        except Urllib3Timeout:
            error = f"Timed out after {total:g} s"
        except ProtocolError as exc:
            error = f"ConnectionError: {exc}"
        except HTTPError as exc:
            error = f"{type(exc).__name__}: {exc}"
        return Outcome(None, error_text(error), int((time.monotonic() - started) * 1000))
    latency = int((time.monotonic() - started) * 1000)
    if latency > total * 1000:
        return Outcome(status_code, f"Timed out after {total:g} s", latency)
    if not 200 <= status_code < 300:
        return Outcome(status_code, f"HTTP {status_code}", latency)
    return Outcome(status_code, "", latency)
