"""The service's three secrets (docs/operations.md "Configuration"): how to make strong ones,
and why a value is too weak to run with DEBUG=false. Plain Python: the settings module uses it
before Django is
set up, and `manage.py generate_secrets` prints what `generate()` makes."""

import base64
import binascii
import secrets

SECRET_KEY_MIN_LENGTH = 50
SECRET_KEY_MIN_DISTINCT_CHARACTERS = 5
PROVISIONING_SECRET_MIN_LENGTH = 32

#: Each secret made in one line with nothing but Python's standard library (docs/operations.md
#: shows them).
ONE_LINERS = {
    "SECRET_KEY": "python3 -c 'import secrets; print(secrets.token_urlsafe(50))'",
    "FIELD_ENCRYPTION_KEY": (
        "python3 -c 'import base64, os; print(base64.urlsafe_b64encode(os.urandom(32)).decode())'"
    ),
    "PROVISIONING_SECRET": "python3 -c 'import secrets; print(secrets.token_urlsafe(32))'",
}


def generate() -> dict[str, str]:
    """A fresh strong value for each secret, by name (67, 44 and 43 characters)."""
    return {
        "SECRET_KEY": secrets.token_urlsafe(50),
        # 32 random bytes in URL-safe base64: what Fernet.generate_key makes.
        "FIELD_ENCRYPTION_KEY": base64.urlsafe_b64encode(secrets.token_bytes(32)).decode(),
        "PROVISIONING_SECRET": secrets.token_urlsafe(32),
    }


def weakness(name: str, value: str, development_default: str) -> str | None:
    """Why `value` may not serve as the secret `name` in production, or None when it may."""
    if not value:
        return "is not set"
    if value == development_default:
        return "is the development default"
    if name == "SECRET_KEY":
        # Django's own deployment check (security.W009) draws the same lines.
        if len(value) < SECRET_KEY_MIN_LENGTH:
            return f"is shorter than {SECRET_KEY_MIN_LENGTH} characters"
        if len(set(value)) < SECRET_KEY_MIN_DISTINCT_CHARACTERS:
            return f"has fewer than {SECRET_KEY_MIN_DISTINCT_CHARACTERS} distinct characters"
    if name == "FIELD_ENCRYPTION_KEY" and not _is_fernet_key(value):
        return "is not a Fernet key (32 bytes in URL-safe base64, 44 characters)"
    if name == "PROVISIONING_SECRET" and len(value) < PROVISIONING_SECRET_MIN_LENGTH:
        return f"is shorter than {PROVISIONING_SECRET_MIN_LENGTH} characters"
    return None


def how_to_generate(name: str) -> str:
    return (
        f"generate one with `DEBUG=true python manage.py generate_secrets` or `{ONE_LINERS[name]}`"
    )


def _is_fernet_key(value: str) -> bool:
    # The test cryptography's Fernet(key) applies: URL-safe base64 of exactly 32 bytes.
    try:
        return len(base64.urlsafe_b64decode(value.encode("ascii"))) == 32
    except (binascii.Error, ValueError):
        return False
