"""Webhook fixtures: a real HTTP receiver (pytest-httpserver), a real Celery worker on a Redis
database of its own, an independent HMAC check, and for the address guard a DNS stub, a
loopback-only firewall and an HTTPS receiver with a certificate of a test CA."""

import contextlib
import functools
import hashlib
import hmac
import ipaddress
import json
import os
import socket
import ssl
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest
from celery.contrib.testing.worker import start_worker
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from django.db import connections
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from delivery.celery import app as celery_app
from tests.settings import SERVICE_REDIS_URL, redis_database
from webhooks import posting, queueing

#: a Redis database of the tests' own, so no other worker takes our messages (nor we theirs);
#: it is emptied around every test that uses it, so it may never be the service's (REDIS_URL)
TEST_BROKER_URL = os.environ.get("TEST_BROKER_URL", "redis://127.0.0.1:6379/13")
if redis_database(TEST_BROKER_URL) == redis_database(SERVICE_REDIS_URL):
    raise pytest.UsageError(
        f"TEST_BROKER_URL ({TEST_BROKER_URL}) is the service's Redis database (REDIS_URL)"
    )


def independent_hmac_hex(key: str, body: bytes) -> str:
    """HMAC-SHA256 written out here, not imported from the code under test."""
    return hmac.new(key.encode("utf-8"), body, hashlib.sha256).hexdigest()


@dataclass
class Received:
    body: bytes
    headers: dict
    at: float

    @property
    def json(self) -> dict:
        return json.loads(self.body)


@dataclass
class Receiver:
    """A webhook endpoint that answers from a script of status codes (then 200)."""

    url: str
    statuses: list[int] = field(default_factory=list)
    delay_seconds: float = 0.0
    requests: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def handle(self, request: Request) -> Response:
        with self.lock:
            self.requests.append(Received(request.get_data(), dict(request.headers), time.time()))
            status = self.statuses.pop(0) if self.statuses else 200
        if self.delay_seconds:
            time.sleep(self.delay_seconds)
        return Response("ok" if status < 300 else "nope", status=status)

    def wait_for(self, count: int, timeout: float = 30.0) -> list[Received]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.requests) >= count:
                    return list(self.requests)
            time.sleep(0.02)
        raise AssertionError(f"expected {count} webhook(s), got {len(self.requests)}")


@pytest.fixture
def receiver(httpserver) -> Receiver:
    result = Receiver(url=httpserver.url_for("/hook"))
    httpserver.expect_request("/hook", method="POST").respond_with_handler(result.handle)
    return result


def _use_broker(url: str) -> None:
    celery_app.conf.broker_url = url
    # Forget connections and producers made for the previous broker.
    celery_app._pool = None
    celery_app.amqp._producer_pool = None


@pytest.fixture
def test_broker():
    """The Celery app publishes to the tests' own Redis database, emptied before and after."""
    previous = celery_app.conf.broker_url
    _use_broker(TEST_BROKER_URL)
    with celery_app.connection_for_write() as connection:
        connection.default_channel.client.flushdb()
    yield celery_app
    with celery_app.connection_for_write() as connection:
        connection.default_channel.client.flushdb()
    _use_broker(previous)


@pytest.fixture
def dead_broker():
    """A broker address nobody listens on: publishing fails at once."""
    previous = celery_app.conf.broker_url
    _use_broker("redis://127.0.0.1:1/0")
    yield
    _use_broker(previous)
    queueing.broker_breaker.reset()


@contextlib.contextmanager
def _worker(concurrency: int):
    with start_worker(
        celery_app,
        pool="threads",
        concurrency=concurrency,
        perform_ping_check=False,
        shutdown_timeout=10,
    ) as worker:
        yield worker
    connections.close_all()


@pytest.fixture
def celery_worker(transactional_db, test_broker):
    """A real worker (thread pool, as in docker-compose) consuming the test broker."""
    with _worker(concurrency=4) as worker:
        yield worker


@pytest.fixture
def two_thread_worker(transactional_db, test_broker):
    """A real worker with the lowest concurrency the fairness guarantee holds for."""
    with _worker(concurrency=2) as worker:
        yield worker


@dataclass
class HangingReceiver:
    """A webhook endpoint that accepts connections, reads the request and never answers."""

    url: str
    connections: list[tuple[socket.socket, float]]


@pytest.fixture
def hanging_receiver():
    listener = socket.create_server(("127.0.0.1", 0), backlog=64)
    listener.settimeout(0.2)
    accepted: list[tuple[socket.socket, float]] = []
    stop = threading.Event()

    def accept_forever() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            accepted.append((conn, time.time()))

    thread = threading.Thread(target=accept_forever, daemon=True)
    thread.start()
    port = listener.getsockname()[1]
    yield HangingReceiver(url=f"http://127.0.0.1:{port}/hang", connections=accepted)
    stop.set()
    thread.join(timeout=2)
    for conn, _ in accepted:
        conn.close()
    listener.close()


# ----- the address guard: a DNS stub, a loopback-only firewall, a TLS receiver -----

#: the host name the DNS stub answers for; every other name resolves for real
STUB_HOST = "hooks.example.test"


@dataclass
class StubResolver:
    """DNS for STUB_HOST: each lookup takes the next answer (the last one repeats)."""

    answers: list[list[str]] = field(default_factory=list)
    lookups: int = 0

    def getaddrinfo(self, real, host, port, *args, **kwargs):
        if host != STUB_HOST:
            return real(host, port, *args, **kwargs)
        self.lookups += 1
        addresses = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        return [
            (
                socket.AF_INET6 if ":" in address else socket.AF_INET,
                socket.SOCK_STREAM,
                socket.IPPROTO_TCP,
                "",
                (address, int(port or 0), 0, 0) if ":" in address else (address, int(port or 0)),
            )
            for address in addresses
        ]


@pytest.fixture
def resolver(monkeypatch) -> StubResolver:
    stub = StubResolver()
    real = socket.getaddrinfo
    monkeypatch.setattr(socket, "getaddrinfo", functools.partial(stub.getaddrinfo, real))
    return stub


class _Firewall:
    """While on, records every outgoing TCP connect of this process and refuses (as a network
    without a route would) every one that is not to loopback: no test traffic leaves."""

    def __init__(self) -> None:
        self.connects: list[tuple[str, int]] | None = None
        sys.addaudithook(self._audit)

    def _audit(self, event: str, args) -> None:
        if event != "socket.connect" or self.connects is None:
            return
        sock, address = args
        if sock.family not in (socket.AF_INET, socket.AF_INET6):
            return
        host, port = address[0], address[1]
        self.connects.append((host, port))
        if not ipaddress.ip_address(host.split("%", 1)[0]).is_loopback:
            raise ConnectionRefusedError(f"test firewall: no traffic to {host}")


_firewall = _Firewall()  # audit hooks cannot be removed: one for the session, off by default


@pytest.fixture
def firewall() -> _Firewall:
    _firewall.connects = []
    yield _firewall
    _firewall.connects = None


def _certificate(ca_key, ca_name, host: str, key):
    from_now = datetime.now(UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(from_now - timedelta(minutes=5))
        .not_valid_after(from_now + timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )


@dataclass
class TlsReceiver:
    receiver: Receiver
    port: int
    #: the TLS server names (SNI) clients asked for
    server_names: list[str]


@pytest.fixture
def tls_receiver_for(tmp_path, monkeypatch):
    """A real HTTPS receiver on loopback whose certificate names `host`, signed by a CA of the
    test's own that the sender trusts (posting.CA_CERTS)."""
    servers = []
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Test webhook CA")])
    from_now = datetime.now(UTC)
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(from_now - timedelta(minutes=5))
        .not_valid_after(from_now + timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    ca_file = tmp_path / "ca.pem"
    ca_file.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    monkeypatch.setattr(posting, "CA_CERTS", str(ca_file))

    def start(host: str) -> TlsReceiver:
        key = ec.generate_private_key(ec.SECP256R1())
        cert_file, key_file = tmp_path / f"{host}.pem", tmp_path / f"{host}.key"
        cert_file.write_bytes(
            _certificate(ca_key, ca_name, host, key).public_bytes(serialization.Encoding.PEM)
        )
        key_file.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert_file, key_file)
        server_names: list[str] = []
        context.sni_callback = lambda _sock, name, _ctx: server_names.append(name)
        server = HTTPServer(host="127.0.0.1", port=0, ssl_context=context)
        server.start()
        servers.append(server)
        result = Receiver(url=server.url_for("/hook"))
        server.expect_request("/hook", method="POST").respond_with_handler(result.handle)
        return TlsReceiver(receiver=result, port=server.port, server_names=server_names)

    yield start
    for server in servers:
        server.clear()
        if server.is_running():
            server.stop()
