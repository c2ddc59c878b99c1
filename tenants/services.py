"""Writes on organizations, API keys and management tokens."""

import base64
import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from uuid import UUID

from django.contrib.auth import authenticate
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.text import slugify

from delivery import retention
from delivery import webhook_events as catalog
from delivery.encryption import encrypt_text
from delivery.errors import ValidationFailed
from delivery.netguard import webhook_url_validate
from tenants import keycache, login_throttle
from tenants.errors import (
    ApiKeyPlatformTaken,
    ApiKeyRevoked,
    InvalidCredentials,
    SlugTaken,
)
from tenants.models import ApiKey, AuthToken, Driver, Organization, Platform, User

SLUG_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
SLUG_MAX_LENGTH = 63
AUTH_TOKEN_LIFETIME = timedelta(hours=12)


def secret_digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def _slug_candidates(name: str):
    base = slugify(name)[:SLUG_MAX_LENGTH].strip("-") or "org"
    yield base
    n = 2
    while True:
        suffix = f"-{n}"
        yield f"{base[: SLUG_MAX_LENGTH - len(suffix)].rstrip('-')}{suffix}"
        n += 1


def organization_create(*, name: str, slug: str | None = None) -> Organization:
    """Creates an organization; a given slug must be free, a generated one gets -2, -3, ..."""
    if slug is not None:
        if len(slug) > SLUG_MAX_LENGTH or not SLUG_PATTERN.match(slug):
            raise ValidationFailed(
                "slug must be lower-case letters and digits separated by single hyphens, "
                "at most 63 characters"
            )
        try:
            with transaction.atomic():
                return Organization.objects.create(name=name, slug=slug)
        except IntegrityError:
            raise SlugTaken(slug) from None
    for candidate in _slug_candidates(name):
        if Organization.objects.filter(slug=candidate).exists():
            continue
        try:
            with transaction.atomic():
                return Organization.objects.create(name=name, slug=candidate)
        except IntegrityError:
            continue  # taken by a concurrent request between the check and the insert
    raise AssertionError("unreachable")  # pragma: no cover


# Takes `organization` (not `organization_id`): it changes the organization itself.
@transaction.atomic
def organization_update(
    *, organization: Organization, name: str | None = None, is_active: bool | None = None
) -> Organization:
    """Renames and/or (de)activates an organization. Deactivation takes effect at once: its keys
    answer 401 and its admins lose the management API and Django admin when this commits (the
    save invalidates the API-key cache: tenants/signals.py)."""
    organization = Organization.objects.select_for_update().get(pk=organization.pk)
    changed = []
    if name is not None and name != organization.name:
        organization.name = name
        changed.append("name")
    if is_active is not None and is_active != organization.is_active:
        organization.is_active = is_active
        changed.append("is_active")
    if changed:
        organization.save(update_fields=changed)
    return organization


@dataclass(frozen=True)
class IssuedApiKey:
    """An API key with the secrets shown only once: at creation and at rotation."""

    api_key: ApiKey
    value: str
    webhook_secret: str


def _new_webhook_secret() -> str:
    # The Standard Webhooks form: `whsec_` + standard base64 of 32 random bytes (keys issued
    # before used URL-safe base64 without padding; docs/webhooks.md says how those map).
    return f"whsec_{base64.b64encode(secrets.token_bytes(32)).decode()}"


def _new_key_material(platform: str) -> tuple[str, str, str]:
    random_part = secrets.token_urlsafe(32)  # 43 URL-safe characters, 256 bits
    value = f"sk_{platform}_{random_part}"
    prefix = f"sk_{platform}_{random_part[:4]}"
    return value, prefix, _new_webhook_secret()


def _stored_key_fields(*, value: str, prefix: str, webhook_secret: str) -> dict:
    """The columns that keep a key's secrets, which are shown only once: the value as a digest
    (authentication looks keys up by it) and encrypted, the webhook secret encrypted (deliveries
    are signed with it). A secret a roll left signing is dropped: new key material replaces
    every secret at once (contract "Provisioning": rotation invalidates the old value at once)."""
    return {
        "prefix": prefix,
        "digest": secret_digest(value),
        "encrypted_value": encrypt_text(value),
        "encrypted_webhook_secret": encrypt_text(webhook_secret),
        "encrypted_previous_webhook_secret": "",
        "previous_webhook_secret_expires_at": None,
    }


def _platform_is_taken(
    *, organization_id: UUID | str, platform: str, exclude_id: UUID | None = None
) -> bool:
    qs = ApiKey.objects.filter(organization_id=organization_id, platform=platform, is_active=True)
    if exclude_id is not None:
        qs = qs.exclude(id=exclude_id)
    return qs.exists()


def _validate_platform(platform: str) -> None:
    if platform not in Platform.values:
        raise ValidationFailed(f"platform must be one of: {', '.join(Platform.values)}")


#: `api_key_update(webhook_events=UNCHANGED)` leaves the filter as it is (None means "all")
UNCHANGED = object()


def _validated_webhook_events(webhook_events: list[str] | None) -> list[str] | None:
    """None (every event) or the listed names once each; 400 naming each unknown name."""
    if webhook_events is None:
        return None
    problems = catalog.webhook_events_problems(webhook_events)
    if problems:
        raise ValidationFailed(problems)
    return catalog.webhook_events_normalize(webhook_events)


def api_key_create(
    *,
    organization_id: UUID | str,
    name: str,
    platform: str = Platform.STANDARD,
    webhook_url: str = "",
    test: bool = False,
    webhook_events: list[str] | None = None,
) -> IssuedApiKey:
    """Creates the organization's key for `platform`; 409 when an active one exists (contract
    "Authentication and scope", "Provisioning").

    A `test` key is a sandbox key (docs/webhooks.md "Sandbox"); the flag never changes later.
    `webhook_events` lists the events its URL receives (None: all of them).
    """
    _validate_platform(platform)
    webhook_events = _validated_webhook_events(webhook_events)
    if webhook_url:
        webhook_url_validate(webhook_url)
    if _platform_is_taken(organization_id=organization_id, platform=platform):
        raise ApiKeyPlatformTaken()
    value, prefix, webhook_secret = _new_key_material(platform)
    try:
        with transaction.atomic():
            api_key = ApiKey.objects.create(
                organization_id=organization_id,
                name=name,
                platform=platform,
                test=test,
                webhook_url=webhook_url,
                webhook_events=webhook_events,
                **_stored_key_fields(value=value, prefix=prefix, webhook_secret=webhook_secret),
            )
    except IntegrityError:
        # The partial unique index caught a concurrent create for the same platform.
        raise ApiKeyPlatformTaken() from None
    return IssuedApiKey(api_key=api_key, value=value, webhook_secret=webhook_secret)


@transaction.atomic
def api_key_rotate(*, api_key: ApiKey) -> IssuedApiKey:
    """New value and webhook secret, same id and metadata; the old value stops working at once
    (every save of a key invalidates the API-key cache on commit: tenants/signals.py), and so
    do the old webhook secret and any secret a roll left signing: no overlap."""
    api_key = ApiKey.objects.select_for_update().get(pk=api_key.pk)
    if not api_key.is_active:
        raise ApiKeyRevoked()
    value, prefix, webhook_secret = _new_key_material(api_key.platform)
    stored = _stored_key_fields(value=value, prefix=prefix, webhook_secret=webhook_secret)
    for field, stored_value in stored.items():
        setattr(api_key, field, stored_value)
    api_key.rotated_at = timezone.now()
    api_key.save(update_fields=[*stored, "rotated_at"])
    return IssuedApiKey(api_key=api_key, value=value, webhook_secret=webhook_secret)


#: docs/webhooks.md "Rolling the secret": how long the replaced secret may still sign
WEBHOOK_SECRET_OVERLAP_MAX_HOURS = 168
WEBHOOK_SECRET_OVERLAP_DEFAULT_HOURS = 24


@dataclass(frozen=True)
class RolledWebhookSecret:
    """A key's new webhook secret, shown only in the roll's answer, and until when the secret it
    replaced still signs (None: it stopped at once)."""

    api_key: ApiKey
    webhook_secret: str
    previous_expires_at: datetime | None


@transaction.atomic
def api_key_webhook_secret_roll(*, api_key: ApiKey, overlap_hours: int) -> RolledWebhookSecret:
    """Gives the key a new webhook secret; the one it replaces keeps signing beside it for
    `overlap_hours` (0 to 168; 0 ends it at once), docs/webhooks.md "Rolling the secret".

    Rolling again during an overlap keeps only the secret replaced now (the newest): a receiver
    is expected to have moved to a secret before it is rolled again. The key value stays; 409
    `API key is revoked` for a revoked key.
    """
    if not 0 <= overlap_hours <= WEBHOOK_SECRET_OVERLAP_MAX_HOURS:
        raise ValidationFailed(
            f"overlapHours must be between 0 and {WEBHOOK_SECRET_OVERLAP_MAX_HOURS}"
        )
    api_key = ApiKey.objects.select_for_update().get(pk=api_key.pk)
    if not api_key.is_active:
        raise ApiKeyRevoked()
    webhook_secret = _new_webhook_secret()
    if overlap_hours:
        api_key.encrypted_previous_webhook_secret = api_key.encrypted_webhook_secret
        api_key.previous_webhook_secret_expires_at = timezone.now() + timedelta(hours=overlap_hours)
    else:
        api_key.encrypted_previous_webhook_secret = ""
        api_key.previous_webhook_secret_expires_at = None
    api_key.encrypted_webhook_secret = encrypt_text(webhook_secret)
    api_key.save(
        update_fields=[
            "encrypted_webhook_secret",
            "encrypted_previous_webhook_secret",
            "previous_webhook_secret_expires_at",
        ]
    )
    return RolledWebhookSecret(
        api_key=api_key,
        webhook_secret=webhook_secret,
        previous_expires_at=api_key.previous_webhook_secret_expires_at,
    )


@transaction.atomic
def api_key_revoke(*, api_key: ApiKey) -> ApiKey:
    """Deactivates the key (idempotent) and frees its platform for a new key."""
    api_key = ApiKey.objects.select_for_update().get(pk=api_key.pk)
    if api_key.is_active:
        api_key.is_active = False
        api_key.revoked_at = timezone.now()
        api_key.save(update_fields=["is_active", "revoked_at"])
    return api_key


def api_key_update(
    *,
    api_key: ApiKey,
    name: str | None = None,
    platform: str | None = None,
    webhook_url: str | None = None,
    webhook_events: list[str] | object | None = UNCHANGED,
) -> ApiKey:
    """Updates name, platform, webhook URL and event filter of an active key (contract
    "Provisioning").

    `webhook_events`: a list of event names, None for every event, UNCHANGED to keep it.
    """
    if platform is not None:
        _validate_platform(platform)
    if webhook_events is not UNCHANGED:
        webhook_events = _validated_webhook_events(webhook_events)
    if webhook_url:
        webhook_url_validate(webhook_url)
    try:
        with transaction.atomic():
            api_key = ApiKey.objects.select_for_update().get(pk=api_key.pk)
            if not api_key.is_active:
                raise ApiKeyRevoked()
            if platform is not None and platform != api_key.platform:
                if _platform_is_taken(
                    organization_id=api_key.organization_id,
                    platform=platform,
                    exclude_id=api_key.pk,
                ):
                    raise ApiKeyPlatformTaken()
                api_key.platform = platform
            if name is not None:
                api_key.name = name
            if webhook_url is not None:
                api_key.webhook_url = webhook_url
            if webhook_events is not UNCHANGED:
                api_key.webhook_events = webhook_events
            api_key.save(update_fields=["name", "platform", "webhook_url", "webhook_events"])
    except IntegrityError:
        raise ApiKeyPlatformTaken() from None
    return api_key


def api_key_touch(*, api_key_id: UUID | str) -> None:
    """Writes lastUsedAt at most once a minute per key (contract "Authentication and scope"): no
    write per request."""
    if keycache.claim_last_used_slot(api_key_id):
        ApiKey.objects.filter(pk=api_key_id).update(last_used_at=timezone.now())


@dataclass(frozen=True)
class IssuedAuthToken:
    token: AuthToken
    value: str


def auth_token_create(*, email: str, password: str, address: str) -> IssuedAuthToken:
    """Logs an organization admin in to the management API (contract "Management API"), from
    the client `address`; wrong passwords are throttled (login_throttle)."""
    account = (email or "").strip().lower()
    login_throttle.ensure_login_allowed(account=account, address=address)
    user = authenticate(username=account, password=password or "")
    if user is None or not user.is_active:
        login_throttle.login_failed(account=account, address=address)
        raise InvalidCredentials()
    login_throttle.login_succeeded(account=account, address=address)
    value = secrets.token_urlsafe(32)
    token = AuthToken.objects.create(
        user=user, digest=secret_digest(value), expires_at=timezone.now() + AUTH_TOKEN_LIFETIME
    )
    return IssuedAuthToken(token=token, value=value)


def auth_token_delete(*, token: AuthToken) -> None:
    AuthToken.objects.filter(pk=token.pk).delete()


def auth_token_delete_all(*, user: User) -> int:
    """Ends every management token of the user (a password reset logs them out everywhere)."""
    deleted, _ = AuthToken.objects.filter(user=user).delete()
    return deleted


def auth_tokens_expired_delete(
    *, now: datetime | None = None, batch_size: int | None = None, until: float | None = None
) -> int:
    """Retention: deletes the management tokens past their `expiresAt` (they answer 401 already;
    an ended one is deleted when it ends). Returns how many."""
    expired = AuthToken.objects.filter(expires_at__lte=now or timezone.now())
    return retention.delete_in_batches(
        expired, order_by="expires_at", batch_size=batch_size, until=until
    ).removed


def user_get_or_create(*, email: str, name: str = "") -> tuple[User, bool]:
    """Finds a user by e-mail (case-insensitively) or creates one without a usable password."""
    email = email.strip().lower()
    user = User.objects.filter(email=email).first()
    if user is not None:
        return user, False
    try:
        with transaction.atomic():
            return User.objects.create_user(email=email, name=name), True
    except IntegrityError:
        return User.objects.get(email=email), False


_DRIVER_FIELDS = (
    "name",
    "phone",
    "vehicle_type",
    "is_active",
    "capacity",
    "shift_start",
    "shift_end",
)
DEFAULT_SHIFT_START = time(8, 0)
DEFAULT_SHIFT_END = time(20, 0)


def _shift_check(driver: Driver) -> None:
    if driver.shift_start >= driver.shift_end:
        raise ValidationFailed(["shiftEnd must be after shiftStart"])


def driver_create(
    *,
    organization_id: UUID | str,
    name: str,
    phone: str = "",
    vehicle_type: str = "",
    is_active: bool = True,
    capacity: int | None = None,
    shift_start: time = DEFAULT_SHIFT_START,
    shift_end: time = DEFAULT_SHIFT_END,
) -> Driver:
    """A new driver; `capacity` None takes the vehicle default (contract "Dispatch")."""
    driver = Driver(
        organization_id=organization_id,
        name=name,
        phone=phone,
        vehicle_type=vehicle_type,
        is_active=is_active,
        capacity=capacity,
        shift_start=shift_start,
        shift_end=shift_end,
    )
    _shift_check(driver)
    driver.save(force_insert=True)
    return driver


@transaction.atomic
def driver_update(*, driver: Driver, **changes: str | bool | int | time | None) -> Driver:
    """Applies the given fields (any of name, phone, vehicle_type, is_active, capacity,
    shift_start, shift_end); a shift whose end is not after its start is a 400."""
    unknown = set(changes) - set(_DRIVER_FIELDS)
    if unknown:
        raise ValueError(f"unknown driver fields: {sorted(unknown)}")
    for field, value in changes.items():
        setattr(driver, field, value)
    _shift_check(driver)
    driver.save(update_fields=list(changes) or None)
    return driver
