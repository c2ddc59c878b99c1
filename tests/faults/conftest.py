"""Fixtures of the fault tests: a PostgreSQL cluster and a Redis of their own, the service, a
receiver, and a figures table printed at the end of the run (docs/faults.md)."""

import json
import re

import pytest

from tests.faults.infra import (
    LOG_DIR,
    Receiver,
    Service,
    ThrowawayPostgres,
    ThrowawayRedis,
)

TEMPLATE_DATABASE = "faults_template"

#: figures each test reports, printed in the terminal summary and saved to var/faults/
FIGURES: dict[str, dict] = {}


@pytest.fixture(autouse=True)
def _clean_cache():
    """Overrides tests/conftest.py: these tests never touch the shared Redis."""
    return


@pytest.fixture(scope="session")
def postgres():
    """The session's own PostgreSQL cluster, with a migrated template database."""
    cluster = ThrowawayPostgres()
    try:
        cluster.create()
        cluster.execute("postgres", f"CREATE DATABASE {TEMPLATE_DATABASE}")
        migrate = Service(
            name="migrate", database_url=cluster.url(TEMPLATE_DATABASE), redis_url="redis://-"
        )
        try:
            migrate.manage("migrate", "--noinput", timeout=300)
        finally:
            migrate.stop()
        yield cluster
    finally:
        cluster.destroy()


@pytest.fixture
def database(postgres, request) -> str:
    """A fresh migrated database for one test (a copy of the template)."""
    if not postgres.is_running():
        postgres.start()
    name = "faults_" + re.sub(r"[^a-z0-9]+", "_", request.node.name.lower())[:50]
    postgres.execute("postgres", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    postgres.execute("postgres", f"CREATE DATABASE {name} TEMPLATE {TEMPLATE_DATABASE}")
    return name


@pytest.fixture
def redis_server():
    server = ThrowawayRedis()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def receiver():
    server = Receiver()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def make_service(postgres, database, redis_server, request):
    """Builds the service under test on this test's database and Redis; stops it afterwards."""
    services: list[Service] = []

    def build(**extra_env: str) -> Service:
        name = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower())
        for role in ("web", "worker", "beat"):
            path = LOG_DIR / f"{name}-{role}.log"
            path.unlink(missing_ok=True)
        service = Service(
            name=name,
            database_url=postgres.url(database),
            redis_url=redis_server.url,
            extra_env=extra_env,
        )
        services.append(service)
        return service

    yield build
    for service in services:
        service.stop()


@pytest.fixture
def figures(request) -> dict:
    """What the test measured; shown at the end of `make faults`."""
    data: dict = {}
    FIGURES[request.node.name] = data
    return data


def pytest_terminal_summary(terminalreporter):
    if not FIGURES:
        return
    terminalreporter.section("fault test figures")
    for name, data in FIGURES.items():
        terminalreporter.write_line(f"{name}:")
        for key, value in data.items():
            terminalreporter.write_line(f"    {key}: {value}")
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    (LOG_DIR / "last-run.json").write_text(json.dumps(FIGURES, indent=2, default=str))
