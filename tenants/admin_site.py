"""Django admin open to organization admins as well as staff (docs/contract.md "Management API")."""

from django.contrib import admin
from django.contrib.auth.forms import AuthenticationForm

from delivery.access_log import attribute_request
from tenants.models import Membership, OrgRole


def administered_organization_ids(user) -> list:
    """The active organizations whose admin `user` is (active memberships), cached on the user.

    An inactive organization's admins administer nothing: the admin site, its login form and
    every scoped queryset read this one list.
    """
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


def admin_site_admits(user) -> bool:
    """Who may use Django admin: active staff, and active admins of an active organization."""
    if not user.is_active:
        return False
    return user.is_staff or bool(administered_organization_ids(user))


class DeliveryAdminAuthenticationForm(AuthenticationForm):
    """The admin login form, admitting exactly whom the site admits.

    Django's AdminAuthenticationForm refuses every user without `is_staff`, so organization
    admins (never staff) could not log in through the form although the site let them in.
    """

    error_messages = {
        **AuthenticationForm.error_messages,
        "invalid_login": (
            "Please enter the correct %(username)s and password of a staff account or of an "
            "active organization's admin. Note that the password is case-sensitive."
        ),
    }
    required_css_class = "required"

    def clean_username(self):
        # E-mail addresses are stored lower-case, as POST /api/auth/token reads them.
        return (self.cleaned_data.get("username") or "").strip().lower()

    def confirm_login_allowed(self, user):
        super().confirm_login_allowed(user)
        if not admin_site_admits(user):
            # The same message as a wrong password: the form does not tell who has an account.
            raise self.get_invalid_login_error()


class DeliveryAdminSite(admin.AdminSite):
    site_header = "Delivery administration"
    site_title = "Delivery admin"
    login_form = DeliveryAdminAuthenticationForm
    #: "View site": the service has no site of its own, its face is the API and its docs
    site_url = "/api/docs/"
    #: the model list beside every page takes a quarter of a laptop's width from the tables; the
    #: index page and the breadcrumbs lead to every model
    enable_nav_sidebar = False

    def has_permission(self, request) -> bool:
        admitted = admin_site_admits(request.user)
        if admitted:
            organizations = administered_organization_ids(request.user)
            # An admin of several organizations (or staff) is named by user alone.
            only = organizations[0] if len(organizations) == 1 else None
            attribute_request(request, userId=request.user.pk, organizationId=only)
        return admitted
