"""The ERP tests' slot zone and template (Sundays 08:00, three places), and a live HTTP server
for the concurrency tests: Django's threaded WSGI server (a thread and a
database connection per request) with a listen backlog deep enough for 40 clients at once
(pytest-django's `live_server` keeps Django's default of 10 and resets the rest)."""

import threading

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler

from tests import builders


class _ParallelServer(ThreadedWSGIServer):
    request_queue_size = 128


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format, *args):
        pass


@pytest.fixture
def parallel_server(transactional_db):
    """The base URL of a server running the whole Django stack against the test database."""
    server = _ParallelServer(("127.0.0.1", 0), _QuietHandler, allow_reuse_address=False)
    server.set_app(WSGIHandler())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


@pytest.fixture
def zone(organization):
    return builders.slot_zone(organization)


@pytest.fixture
def template(zone):
    """Sundays 08:00-12:00 in Berlin, three places, closing two hours before."""
    return builders.slot_template(zone, day_of_week=0, start="08:00", capacity=3)
