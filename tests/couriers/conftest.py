import pytest


@pytest.fixture(autouse=True)
def _proofs_in_a_temporary_directory(settings, tmp_path):
    """Photos and signatures of each test go to a directory of its own."""
    settings.STORAGES = {
        **settings.STORAGES,
        "proofs": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "proofs"), "base_url": None},
        },
    }
