import pytest

from tests import builders


@pytest.fixture(autouse=True)
def _fast(fast_password_hashing, no_rate_limits):
    """These tests log in and create many orders with one key."""


@pytest.fixture
def mitte(organization):
    """The Mitte zone (both purposes, Berlin time)."""
    return builders.zone(organization)


@pytest.fixture
def client(organization):
    """A partner_a key's client (the ERP tests have their own)."""
    return builders.partner_client(organization)
