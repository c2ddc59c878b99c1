"""Provisioning writes: organizations with their first admin, admins, invites, passwords."""

import logging
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import password_validation
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from delivery import retention
from delivery.errors import ValidationFailed
from delivery.fields import one_line
from provisioning.errors import InviteAlreadyAccepted, InviteExpired, NoPendingInvite
from provisioning.models import INVITE_VALIDITY, Invite, InviteStatus
from provisioning.selectors import invite_get_by_token
from tenants.models import Membership, Organization, OrgRole, User
from tenants.services import (
    auth_token_delete_all,
    organization_create,
    secret_digest,
    user_get_or_create,
)

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class IssuedInvite:
    invite: Invite
    token: str
    email_sent: bool = False


@dataclass(frozen=True)
class AdminProvisioned:
    organization: Organization
    user: User
    is_new_user: bool
    already_member: bool
    invite: IssuedInvite | None


def _issue_invite(*, organization: Organization, user: User) -> tuple[Invite, str]:
    """Creates or renews the user's invite into the organization with a fresh token."""
    token = secrets.token_urlsafe(32)
    invite, _ = Invite.objects.update_or_create(
        organization=organization,
        user=user,
        defaults={
            "token_digest": secret_digest(token),
            "expires_at": timezone.now() + INVITE_VALIDITY,
            "accepted_at": None,
            "created_at": timezone.now(),
        },
    )
    return invite, token


def _send_invite_email(invite: Invite, token: str) -> bool:
    """True when the e-mail backend accepted the message (`invite.emailSent`).

    It runs after the commit, so no failure of the mail may become an error of the request:
    whatever the backend raises (SMTP and network errors, BadHeaderError, a misconfiguration) is
    logged and answered as `emailSent: false`; the invite can be sent again (resend-invite)."""
    link = settings.INVITE_URL_TEMPLATE.format(token=token)
    try:
        sent = send_mail(
            # A name stored before names were checked may hold a line break: never in a header.
            subject=one_line(f"You are invited to {invite.organization.name}"),
            message=(
                f"Hello {invite.user.name or invite.user.email},\n\n"
                f"you have been made an admin of {invite.organization.name}.\n"
                f"Accept the invite and choose a password here: {link}\n"
                f"The invite is valid until {invite.expires_at:%Y-%m-%d %H:%M} UTC.\n"
            ),
            from_email=settings.DEFAULT_FROM_EMAIL,
            recipient_list=[invite.user.email],
        )
    except Exception:
        logger.exception("invite e-mail to user %s not sent", invite.user_id)
        return False
    return sent == 1


def _deliver(invite_and_token: tuple[Invite, str] | None) -> IssuedInvite | None:
    # E-mail goes out after the commit: a rolled-back invite must never reach an inbox.
    if invite_and_token is None:
        return None
    invite, token = invite_and_token
    return IssuedInvite(invite=invite, token=token, email_sent=_send_invite_email(invite, token))


def _add_admin(
    *, organization: Organization, email: str, name: str, invite_existing_without_password: bool
) -> tuple[User, bool, bool, tuple[Invite, str] | None]:
    user, is_new_user = user_get_or_create(email=email, name=name)
    membership = Membership.objects.filter(organization=organization, user=user).first()
    already_member = membership is not None
    needs_invite = is_new_user or (
        invite_existing_without_password and not user.has_usable_password()
    )
    if membership is None:
        membership = Membership.objects.create(
            organization=organization, user=user, org_role=OrgRole.ADMIN, is_active=not needs_invite
        )
    elif membership.org_role != OrgRole.ADMIN:
        membership.org_role = OrgRole.ADMIN
        membership.save(update_fields=["org_role"])
    invite = None
    if needs_invite and not membership.is_active:
        invite = _issue_invite(organization=organization, user=user)
    return user, is_new_user, already_member, invite


def _provisioned(
    organization: Organization, added: tuple[User, bool, bool, tuple[Invite, str] | None]
) -> AdminProvisioned:
    """The answer for an admin `_add_admin` added; called after the commit (`_deliver`)."""
    user, is_new_user, already_member, invite = added
    return AdminProvisioned(organization, user, is_new_user, already_member, _deliver(invite))


def organization_provision(
    *, name: str, slug: str | None, admin_email: str, admin_name: str = ""
) -> AdminProvisioned:
    """Creates an organization and its first admin; invites the admin if they are new."""
    with transaction.atomic():
        organization = organization_create(name=name, slug=slug)
        # interface: the invite is null when the user already exists.
        added = _add_admin(
            organization=organization,
            email=admin_email,
            name=admin_name,
            invite_existing_without_password=False,
        )
    return _provisioned(organization, added)  # a new organization: already_member is False


# Takes `organization`, not `organization_id`: it acts on the organization itself.
def admin_add(*, organization: Organization, email: str, name: str = "") -> AdminProvisioned:
    """Makes a user an admin of the organization; users who never set a password get an invite."""
    with transaction.atomic():
        added = _add_admin(
            organization=organization,
            email=email,
            name=name,
            invite_existing_without_password=True,
        )
    return _provisioned(organization, added)


def invite_resend(*, user: User) -> IssuedInvite:
    """A new token and expiry for the user's latest unaccepted invite; the old token dies."""
    with transaction.atomic():
        invite = (
            Invite.objects.select_for_update()
            .filter(user=user, accepted_at__isnull=True)
            .order_by("-created_at")
            .first()
        )
        if invite is None:
            raise NoPendingInvite()
        renewed = _issue_invite(organization=invite.organization, user=user)
    return _deliver(renewed)


def _validate_password(password: str, user: User) -> None:
    try:
        password_validation.validate_password(password, user=user)
    except DjangoValidationError as exc:
        raise ValidationFailed([f"password: {message}" for message in exc.messages]) from None


def _temporary_password(user: User) -> str:
    while True:  # a random 16-character value passes the validators virtually always
        candidate = secrets.token_urlsafe(12)
        try:
            password_validation.validate_password(candidate, user=user)
        except DjangoValidationError:
            continue
        return candidate


@transaction.atomic
def password_reset(*, user: User, password: str | None = None) -> str | None:
    """Sets the user's password; returns the generated one when none was given.

    The parent platform vouches for its admin: memberships still waiting on an invite are
    activated and those invites marked accepted, so the new password gives management access at
    once. The user's existing bearer tokens end: whoever held them logged in with the old
    password (docs/contract.md "Provisioning").
    """
    generated = None
    if password is None:
        generated = _temporary_password(user)
        password = generated
    else:
        _validate_password(password, user)
    user.set_password(password)
    user.save(update_fields=["password"])
    waiting = list(Invite.objects.select_for_update().filter(user=user, accepted_at__isnull=True))
    if waiting:
        Membership.objects.filter(
            user=user, organization_id__in=[invite.organization_id for invite in waiting]
        ).update(is_active=True)
        Invite.objects.filter(pk__in=[invite.pk for invite in waiting]).update(
            accepted_at=timezone.now()
        )
    auth_token_delete_all(user=user)
    return generated


@transaction.atomic
def invite_accept(*, token: str, password: str) -> Invite:
    """Sets the password and activates the membership the invite is for (contract
    "Provisioning")."""
    invite = invite_get_by_token(token=token, for_update=True)
    status = invite.status
    if status == InviteStatus.ACCEPTED:
        raise InviteAlreadyAccepted()
    if status == InviteStatus.EXPIRED:
        raise InviteExpired()
    _validate_password(password, invite.user)
    invite.user.set_password(password)
    invite.user.save(update_fields=["password"])
    Membership.objects.filter(organization=invite.organization, user=invite.user).update(
        is_active=True
    )
    invite.accepted_at = timezone.now()
    invite.save(update_fields=["accepted_at"])
    return invite


def invites_ended_delete(
    *, now: datetime | None = None, batch_size: int | None = None, until: float | None = None
) -> int:
    """Retention: deletes the invites accepted, or expired, more than INVITE_RETENTION_DAYS ago
    (their tokens then read 404 `Invite not found`). An expired invite whose membership still
    waits for it is kept: resend-invite renews that row (one per membership, so they are
    bounded). Returns how many."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.INVITE_RETENTION_DAYS)
    waiting = Membership.objects.filter(
        organization_id=OuterRef("organization_id"), user_id=OuterRef("user_id"), is_active=False
    )
    ended = Invite.objects.filter(
        Q(accepted_at__lt=cutoff)
        | (Q(accepted_at__isnull=True, expires_at__lt=cutoff) & ~Exists(waiting))
    )
    return retention.delete_in_batches(
        ended, order_by="created_at", batch_size=batch_size, until=until
    ).removed
