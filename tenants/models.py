"""Tenants: organizations, their users and memberships, API keys and management tokens."""

import datetime

from django.contrib.auth.base_user import AbstractBaseUser, BaseUserManager
from django.contrib.auth.models import PermissionsMixin
from django.contrib.postgres.fields import ArrayField
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils import timezone

from delivery.fields import has_line_breaking, single_line_message
from delivery.ids import new_id


def _refuse_line_breaks(instance: models.Model, field: str) -> None:
    """For forms (Django admin): a name that reaches an e-mail header stays on one line, as the
    APIs require (delivery.fields.SingleLineTextField)."""
    if has_line_breaking(getattr(instance, field) or ""):
        raise ValidationError({field: single_line_message(field)})


class UserManager(BaseUserManager):
    use_in_migrations = True

    def create_user(self, email: str, password: str | None = None, **fields):
        user = self.model(email=self.normalize_email(email).lower(), **fields)
        if password:
            user.set_password(password)
        else:
            user.set_unusable_password()
        user.save(using=self._db)
        return user

    def create_superuser(self, email: str, password: str | None = None, **fields):
        fields.setdefault("is_staff", True)
        fields.setdefault("is_superuser", True)
        return self.create_user(email, password, **fields)


class User(AbstractBaseUser, PermissionsMixin):
    """A person: identified by e-mail (stored lower-case), never by a username."""

    id = models.UUIDField(primary_key=True, default=new_id, editable=False)
    email = models.EmailField(unique=True, max_length=254)
    name = models.CharField(max_length=200, blank=True, default="")
    is_active = models.BooleanField(default=True)
    is_staff = models.BooleanField(default=False)
    date_joined = models.DateTimeField(default=timezone.now)

    objects = UserManager()

    USERNAME_FIELD = "email"
    EMAIL_FIELD = "email"
    REQUIRED_FIELDS: list[str] = []

    def __str__(self) -> str:
        return self.email

    def clean(self) -> None:
        super().clean()
        _refuse_line_breaks(self, "name")


class KeyCacheQuerySet(models.QuerySet):
    """`update()` on organizations, keys and drivers bypasses save() and its signals
    (tenants/signals.py), so it invalidates the key cache itself: a bulk deactivation must take
    effect at once too. Only `lastUsedAt`, written once a minute per key, cannot refuse a key."""

    def update(self, **kwargs):
        rows = super().update(**kwargs)
        if rows and set(kwargs) - {"last_used_at"}:
            from tenants import keycache  # noqa: PLC0415 - keycache imports this module

            keycache.invalidate_on_commit()
        return rows


class Organization(models.Model):
    """A tenant. Every order, zone, slot and event belongs to exactly one."""

    id = models.UUIDField(primary_key=True, default=new_id, editable=False)
    slug = models.SlugField(max_length=63, unique=True)
    name = models.CharField(max_length=200)
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(default=timezone.now)

    objects = KeyCacheQuerySet.as_manager()

    class Meta:
        ordering = ("created_at", "id")

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        _refuse_line_breaks(self, "name")


class OrgRole(models.TextChoices):
    ADMIN = "admin", "Admin"
    MEMBER = "member", "Member"


class Membership(models.Model):
    """A user's place in an organization. Inactive until the user accepts their invite."""

    id = models.UUIDField(primary_key=True, default=new_id, editable=False)
    # No index of its own: `membership_unique` leads with it.
    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="memberships", db_index=False
    )
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="memberships")
    org_role = models.CharField(max_length=20, choices=OrgRole.choices, default=OrgRole.ADMIN)
    is_active = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=("organization", "user"), name="membership_unique")
        ]
        ordering = ("created_at", "id")

    def __str__(self) -> str:
        return f"{self.user} in {self.organization} ({self.org_role})"


class Platform(models.TextChoices):
    PARTNER_A = "partner_a", "Partner A"
    PARTNER_B = "partner_b", "Partner B"
    PARTNER_C = "partner_c", "Partner C"
    STANDARD = "standard", "Standard"
    ERP = "erp", "ERP"


class ApiKey(models.Model):
    """An organization's key for one platform (contract "Authentication and scope", "Provisioning").

    The value is stored as a SHA-256 digest (for lookup) plus a short visible prefix (for the
    masked list) and an encrypted copy (ERP webhooks are signed with the value itself). The
    webhook secret is stored encrypted, and so is the one a roll replaced, with its expiry.
    """

    id = models.UUIDField(primary_key=True, default=new_id, editable=False)
    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="api_keys"
    )
    name = models.CharField(max_length=200)
    platform = models.CharField(max_length=20, choices=Platform.choices, default=Platform.STANDARD)
    #: a sandbox key: its orders may be driven through their life by the simulator
    test = models.BooleanField(default=False)
    prefix = models.CharField(max_length=40)
    digest = models.CharField(max_length=64, unique=True)
    encrypted_value = models.TextField()
    encrypted_webhook_secret = models.TextField()
    #: after a roll, the secret it replaced, which still signs until its expiry (docs/webhooks.md
    #: "Rolling the secret"); empty when none
    encrypted_previous_webhook_secret = models.TextField(blank=True, default="")
    previous_webhook_secret_expires_at = models.DateTimeField(null=True, blank=True)
    webhook_url = models.URLField(max_length=2000, blank=True, default="")
    #: the event names this key's URL receives; NULL means every event (delivery/webhook_events.py)
    webhook_events = ArrayField(models.CharField(max_length=100), null=True, blank=True)
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    rotated_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = KeyCacheQuerySet.as_manager()

    class Meta:
        constraints = [
            # One active key per platform; a revoked key frees its platform (contract
            # "Provisioning").
            models.UniqueConstraint(
                fields=("organization", "platform"),
                condition=Q(is_active=True),
                name="api_key_one_active_per_platform",
            )
        ]
        ordering = ("created_at", "id")

    def __str__(self) -> str:
        return f"{self.name} ({self.platform})"

    @property
    def masked_value(self) -> str:
        return f"{self.prefix}****"


class AuthToken(models.Model):
    """A management-API bearer token (contract "Management API"): stored hashed, 12 hours of
    life."""

    id = models.UUIDField(primary_key=True, default=new_id, editable=False)
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="auth_tokens")
    digest = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()

    class Meta:
        # Retention (tenants.delete_expired_auth_tokens): the expired ones, oldest first.
        indexes = [models.Index(fields=("expires_at", "id"), name="auth_token_expires")]

    def __str__(self) -> str:
        return f"token of {self.user} until {self.expires_at:%Y-%m-%d %H:%M}"


class Driver(models.Model):
    """A courier of an organization's fleet; orders are assigned to drivers."""

    id = models.UUIDField(primary_key=True, default=new_id, editable=False)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="drivers")
    name = models.CharField(max_length=200)
    phone = models.CharField(max_length=32, blank=True, default="")
    vehicle_type = models.CharField(max_length=40, blank=True, default="")
    is_active = models.BooleanField(default=True)
    #: orders per route; None: the slot policy's vehicle default (contract "Dispatch")
    capacity = models.PositiveIntegerField(null=True, blank=True)
    #: wall times in the time zone of the zone a route serves
    shift_start = models.TimeField(default=datetime.time(8, 0))
    shift_end = models.TimeField(default=datetime.time(20, 0))
    created_at = models.DateTimeField(default=timezone.now)

    objects = KeyCacheQuerySet.as_manager()

    class Meta:
        ordering = ("name", "id")
        constraints = [
            models.CheckConstraint(
                condition=models.Q(shift_start__lt=models.F("shift_end")),
                name="driver_shift_in_day",
            ),
            models.CheckConstraint(
                condition=models.Q(capacity__isnull=True) | models.Q(capacity__gte=1),
                name="driver_capacity_positive",
            ),
        ]

    def __str__(self) -> str:
        return self.name
