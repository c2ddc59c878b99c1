"""Invites: how a new admin gets from an e-mail address to a password (contract "Provisioning")."""

from datetime import timedelta

from django.db import models
from django.utils import timezone

from delivery.ids import new_id
from tenants.models import Organization, User

INVITE_VALIDITY = timedelta(days=7)


class InviteStatus(models.TextChoices):
    PENDING = "pending"
    ACCEPTED = "accepted"
    EXPIRED = "expired"


class Invite(models.Model):
    """One pending or accepted invite of a user into an organization; the token is stored hashed."""

    id = models.UUIDField(primary_key=True, default=new_id, editable=False)
    # No index of its own: `invite_one_per_membership` leads with it.
    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="invites", db_index=False
    )
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="invites")
    token_digest = models.CharField(max_length=64, unique=True)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ("-created_at",)
        constraints = [
            models.UniqueConstraint(
                fields=("organization", "user"), name="invite_one_per_membership"
            )
        ]

    def __str__(self) -> str:
        return f"invite of {self.user} to {self.organization}"

    @property
    def status(self) -> str:
        if self.accepted_at is not None:
            return InviteStatus.ACCEPTED
        if self.expires_at <= timezone.now():
            return InviteStatus.EXPIRED
        return InviteStatus.PENDING
