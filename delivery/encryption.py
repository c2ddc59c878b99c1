"""Symmetric encryption at rest for secrets we must be able to read back (contract "Authentication
and scope")."""

from functools import cache

from cryptography.fernet import Fernet
from django.conf import settings


@cache
def _fernet(key: str) -> Fernet:
    return Fernet(key.encode())


def encrypt_text(value: str) -> str:
    return _fernet(settings.FIELD_ENCRYPTION_KEY).encrypt(value.encode()).decode()


def decrypt_text(token: str) -> str:
    return _fernet(settings.FIELD_ENCRYPTION_KEY).decrypt(token.encode()).decode()
