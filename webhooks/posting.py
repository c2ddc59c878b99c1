"""POSTing a signed request to an address netguard has just checked (delivery/netguard.py),
with the URL's host as `Host`, TLS server name and certificate name (contract "Webhooks"), over
a kept-alive connection per worker thread and (address, host name).
"""

import threading
import time
from dataclasses import dataclass

import certifi
import urllib3
from django.conf import settings
from urllib3.exceptions import HTTPError, NewConnectionError, ProtocolError, SSLError
from urllib3.exceptions import TimeoutError as Urllib3Timeout
from urllib3.util import Timeout

from delivery.netguard import Destination
from webhooks import signing

#: how much of a response body we read (only to let the connection be reused)
MAX_RESPONSE_BYTES = 64 * 1024
ERROR_MAX_LENGTH = 500

#: the certificate authorities a receiver's certificate must chain to
CA_CERTS = certifi.where()
#: keep-alive connection pools per worker thread, one per (address, host name)
POOLS_PER_THREAD = 32

_local = threading.local()


def _pools() -> urllib3.PoolManager:
    """One pool manager per worker thread; no environment proxy is ever used."""
    pools = getattr(_local, "pools", None)
    if pools is None:
        pools = urllib3.PoolManager(num_pools=POOLS_PER_THREAD, maxsize=1, retries=False)
        _local.pools = pools
    return pools


def _pool(destination: Destination, address: str):
    """The keep-alive pool that connects to `address` (already checked) and speaks to the
    host of the URL: `Host` header, TLS server name (SNI) and certificate check all use the
    URL's host name, never the address."""
    pool_kwargs: dict = {}
    if destination.scheme == "https":
        pool_kwargs = {
            "server_hostname": destination.hostname,
            "assert_hostname": destination.hostname,
            "cert_reqs": "CERT_REQUIRED",
            "ca_certs": CA_CERTS,
        }
    return _pools().connection_from_host(
        address, port=destination.port, scheme=destination.scheme, pool_kwargs=pool_kwargs
    )


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


def _read_some(response, *, started: float, total: float) -> bool:
    """Reads the answer's body up to MAX_RESPONSE_BYTES within the time left; True if it was
    read to the end (then the connection can be kept alive)."""
    read = 0
    for chunk in response.stream(8192):
        read += len(chunk)
        if read > MAX_RESPONSE_BYTES or time.monotonic() - started > total:
            return False
    return True


def post(destination: Destination, request: signing.SignedRequest) -> Outcome:
    """POSTs once to the checked address; success is a 2xx within WEBHOOK_TIMEOUT_SECONDS
    (redirects not followed). An address that refuses the connection hands over to the next
    one (nothing was sent to it)."""
    total = float(settings.WEBHOOK_TIMEOUT_SECONDS)
    # Connecting gets at most 3 s; reading gets what is left of the total (urllib3 `total`).
    timeout = Timeout(connect=min(3.0, total), read=total, total=total)
    headers = {**request.headers, "Host": destination.host_header}
    # One try, no redirect followed, the body streamed (only a little of it is read).
    options = {
        "timeout": timeout,
        "retries": False,
        "redirect": False,
        "assert_same_host": False,
        "preload_content": False,
    }
    started = time.monotonic()

    def elapsed_ms() -> int:
        return int((time.monotonic() - started) * 1000)

    status_code = None
    for number, address in enumerate(destination.addresses, start=1):
        try:
            response = _pool(destination, address).urlopen(
                "POST", destination.target, body=request.body, headers=headers, **options
            )
            complete = False
            try:
                complete = _read_some(response, started=started, total=total)
                status_code = response.status
            finally:
                if not complete:
                    response.close()  # not reusable: unread bytes are still on the wire
                response.release_conn()
            break
        except NewConnectionError as exc:
            # (urllib3 makes it a subclass of its connect timeout: caught first.)
            if number < len(destination.addresses):
                continue
            reason = exc.__cause__ or exc
            return Outcome(None, error_text(f"ConnectionError: {address}: {reason}"), elapsed_ms())
        except Urllib3Timeout:
            return Outcome(None, f"Timed out after {total:g} s", elapsed_ms())
        except SSLError as exc:
            return Outcome(None, error_text(f"SSLError: {exc}"), elapsed_ms())
        except ProtocolError as exc:
            return Outcome(None, error_text(f"ConnectionError: {exc}"), elapsed_ms())
        except HTTPError as exc:
            return Outcome(None, error_text(f"{type(exc).__name__}: {exc}"), elapsed_ms())
    latency = elapsed_ms()
    if latency > total * 1000:
        return Outcome(status_code, f"Timed out after {total:g} s", latency)
    if not 200 <= status_code < 300:
        return Outcome(status_code, f"HTTP {status_code}", latency)
    return Outcome(status_code, "", latency)
