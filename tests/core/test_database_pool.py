"""With DATABASE_POOL_MAX_SIZE set (delivery/settings.py, docs/operations.md), each web worker
shares a small pool of PostgreSQL connections among its threads: concurrent requests never open
one connection per thread, so an instance stays far below PostgreSQL's max_connections however
many threads it runs."""

import threading

import pytest
from django.db import connection

from tenants.services import api_key_create, organization_create
from tests.gunicorn import body_of, gunicorn_server, raw_request, status_of

pytestmark = pytest.mark.django_db(transaction=True)


def _backends_of(application_name: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND application_name = %s",
            [application_name],
        )
        return cursor.fetchone()[0]


def test_sixteen_concurrent_requests_use_at_most_the_pool_of_the_worker(tmp_path):
    organization = organization_create(name="Pool", slug="pool")
    key = api_key_create(organization_id=organization.id, name="k", platform="partner_a").value
    request = (
        "GET /api/integrations/partner-a/orders/NO-SUCH-REF HTTP/1.1\r\nHost: localhost\r\n"
        f"X-API-Key: {key}\r\nConnection: close\r\n\r\n"
    ).encode()
    # 1 worker of 32 threads taking turns 2 at a time, a pool of 4 (16 at once: the in-flight
    # limit of one worker).
    database = connection.settings_dict
    # The server's own connections, told apart from any other process's by their name.
    url = (
        f"postgres://{database['USER']}@{database['HOST']}:{database['PORT'] or 5432}/"
        f"{database['NAME']}?application_name=pool-test"
    )
    with gunicorn_server(
        tmp_path, RATELIMIT_ENABLE="false", DATABASE_URL=url, DATABASE_POOL_MAX_SIZE="4"
    ) as port:
        answers: list[bytes] = []
        backends: list[int] = []

        def call() -> None:
            answers.append(raw_request(port, request))

        for _ in range(3):
            threads = [threading.Thread(target=call) for _ in range(16)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            backends.append(_backends_of("pool-test"))
    assert [status_of(a) for a in answers] == [404] * 48, body_of(answers[0])
    # One worker's pool (FAIR_RUNNING_PER_WORKER + 2), whatever the number of threads that ran.
    assert max(backends) <= 4
    assert max(backends) >= 1
