import pytest

from tests import builders


@pytest.fixture(autouse=True)
def _fast(fast_password_hashing, no_rate_limits):
    """These tests log in and send many requests with one key."""


@pytest.fixture
def zone(organization):
    """A slot zone over Mitte, in Berlin time."""
    return builders.slot_zone(organization)
