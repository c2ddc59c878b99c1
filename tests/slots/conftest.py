import pytest

from tests import builders


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # Logging in hashes the password; PBKDF2's deliberate slowness buys nothing in these tests.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _no_rate_limits(settings):
    # These tests send many requests with one key; the limiter has its own tests.
    settings.RATELIMIT_ENABLE = False


@pytest.fixture
def zone(organization):
    """A slot zone over Mitte, in Berlin time."""
    return builders.slot_zone(organization)
