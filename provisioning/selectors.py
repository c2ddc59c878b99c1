"""Provisioning reads."""

from django.db.models import Prefetch, QuerySet

from integrations.models import Order
from provisioning.errors import InviteNotFound
from provisioning.models import Invite
from tenants.models import Driver, Membership, Organization, OrgRole
from tenants.selectors import count_per_organization
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


def organization_list_with_counts() -> QuerySet[Organization]:
    """All organizations with member, driver and order counts and their admins: two queries."""
    admins = Membership.objects.filter(org_role=OrgRole.ADMIN).select_related("user")
    return (
        Organization.objects.annotate(
            members_count=count_per_organization(Membership.objects.all()),
            drivers_count=count_per_organization(Driver.objects.all()),
            orders_count=count_per_organization(Order.objects.all()),
        )
        .prefetch_related(Prefetch("memberships", queryset=admins, to_attr="admin_memberships"))
        .order_by("created_at", "id")
    )
