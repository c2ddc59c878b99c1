import pytest

from tests import builders


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # Logging in hashes the password; PBKDF2's deliberate slowness buys nothing in these tests.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _no_rate_limits(settings):
    # These tests create many orders with one key; the limiter has its own tests.
    settings.RATELIMIT_ENABLE = False


@pytest.fixture
def mitte(organization):
    """The Mitte zone (both purposes, Berlin time)."""
    return builders.zone(organization)


@pytest.fixture
def client(organization):
    """A partner_a key's client (the ERP tests have their own)."""
    return builders.partner_client(organization)
