"""Provisioning reads."""

from provisioning.errors import InviteNotFound
from provisioning.models import Invite
from tenants.services import secret_digest


def invite_get_by_token(*, token: str, for_update: bool = False) -> Invite:
    """The invite a token belongs to (tokens are stored hashed); 404 `Invite not found`."""
    qs = Invite.objects.select_related("user", "organization")
    if for_update:
        qs = qs.select_for_update(of=("self",))
    invite = qs.filter(token_digest=secret_digest(token or "")).first()
    if invite is None:
        raise InviteNotFound()
    return invite
