import pytest

from tests import builders


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # Logging in hashes the password; PBKDF2's deliberate slowness buys nothing in these tests.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def mitte(organization):
    """A 2 km x 2 km zone centred on Alexanderplatz: its edges are 1,000 m from the centre."""
    return builders.zone(
        organization, "Mitte", builders.box(*builders.BERLIN, width_m=2000, height_m=2000)
    )
