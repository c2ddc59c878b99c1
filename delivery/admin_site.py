"""Django admin open to organization admins as well as staff (decisions §11)."""

from django.contrib import admin

from tenants.models import Membership, OrgRole


def administered_organization_ids(user) -> list:
    """The active organizations whose admin `user` is (active memberships), cached on the user
    object: an inactive organization's admins get no admin site."""
    if not getattr(user, "is_authenticated", False):
        return []
    cached = getattr(user, "_administered_organization_ids", None)
    if cached is None:
        cached = list(
            Membership.objects.filter(
                user=user, is_active=True, org_role=OrgRole.ADMIN, organization__is_active=True
            ).values_list("organization_id", flat=True)
        )
        user._administered_organization_ids = cached
    return cached


class DeliveryAdminSite(admin.AdminSite):
    site_header = "Delivery administration"
    site_title = "Delivery admin"

    def has_permission(self, request) -> bool:
        user = request.user
        if not user.is_active:
            return False
        return user.is_staff or bool(administered_organization_ids(user))
