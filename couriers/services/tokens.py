"""Drivers' access tokens for the courier API (contract "Couriers": "Driver access")."""

import secrets
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from couriers.models import DriverAccessToken
from tenants.models import Driver
from tenants.services import secret_digest

TOKEN_PREFIX = "drv_"
#: how much of a token admin shows to tell tokens apart
VISIBLE_PREFIX_LENGTH = 8


@dataclass(frozen=True)
class IssuedDriverToken:
    """A token as issued: `value` is shown once and never stored."""

    token: DriverAccessToken
    value: str


@transaction.atomic
def driver_token_issue(*, driver: Driver) -> IssuedDriverToken:
    """A new token for `driver`, which ends the driver's previous one in the same commit (one
    row per driver; its digest is replaced). Stored as a SHA-256 digest, as API keys are."""
    # The driver's row lock orders concurrent issues: the second replaces the first's token.
    Driver.objects.select_for_update().filter(pk=driver.pk).first()
    value = f"{TOKEN_PREFIX}{secrets.token_urlsafe(32)}"
    token, _ = DriverAccessToken.objects.update_or_create(
        driver=driver,
        defaults={
            "digest": secret_digest(value),
            "prefix": value[:VISIBLE_PREFIX_LENGTH],
            "created_at": timezone.now(),
        },
    )
    return IssuedDriverToken(token=token, value=value)


def driver_token_revoke(*, driver: Driver) -> bool:
    """Ends the driver's token, if any; whether there was one."""
    deleted, _ = DriverAccessToken.objects.filter(driver=driver).delete()
    return bool(deleted)
