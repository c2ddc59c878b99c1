import pytest

from tests import builders


@pytest.fixture(autouse=True)
def _fast(fast_password_hashing):
    """These tests log in often."""


@pytest.fixture
def mitte(organization):
    """A 2 km x 2 km zone centred on Alexanderplatz: its edges are 1,000 m from the centre."""
    return builders.zone(
        organization, "Mitte", builders.box(*builders.BERLIN, width_m=2000, height_m=2000)
    )


# The webhook tests' Celery fixtures: the broker of the tests' own and a real worker.
from tests.webhooks.conftest import celery_worker, dead_broker, test_broker  # noqa: E402, F401
