"""Django admin open to organization admins as well as staff (docs/contract.md "Management API")."""

from django.contrib import admin
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError

from delivery.access_log import attribute_request
from delivery.errors import RateLimited
from delivery.ratelimit import client_address
from tenants import login_throttle
from tenants.errors import LoginSlowedDown
from tenants.models import Membership, OrgRole

#: the attribute of the request that carries a throttled login's refusal to the login view
LOGIN_REFUSAL_ATTRIBUTE = "login_refusal"


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

    def clean(self):
        """Django's check of the password, throttled as POST /api/auth/token is
        (docs/contract.md "Failed logins"): a refusal is the form's error, and the login view
        answers it with 429 and Retry-After."""
        account = self.cleaned_data.get("username")
        if self.request is None or not account or not self.cleaned_data.get("password"):
            return super().clean()  # no HTTP request to throttle, or a field's own error
        address = client_address(self.request)
        try:
            login_throttle.ensure_login_allowed(account=account, address=address)
            try:
                cleaned = super().clean()
            except ValidationError:
                # A user the site does not admit gave the right password: no guess to count.
                if self.user_cache is None:
                    login_throttle.login_failed(account=account, address=address)
                raise
        except RateLimited as refusal:
            setattr(self.request, LOGIN_REFUSAL_ATTRIBUTE, refusal)
            raise ValidationError(throttled_message(refusal), code=refusal.code) from None
        login_throttle.login_succeeded(account=account, address=address)
        return cleaned

    def confirm_login_allowed(self, user):
        super().confirm_login_allowed(user)
        if not admin_site_admits(user):
            # The same message as a wrong password: the form does not tell who has an account.
            raise self.get_invalid_login_error()


def throttled_message(refusal: RateLimited) -> str:
    """What the admin login form says to a throttled login, with the wait in words."""
    wait = refusal.retry_after
    if wait < 120:
        when = "1 second" if wait == 1 else f"{wait} seconds"
    else:
        when = f"{-(-wait // 60)} minutes"
    if isinstance(refusal, LoginSlowedDown):
        return f"Too many failed logins for this account. Try again in {when}."
    return f"Too many failed logins from your address. Try again in {when}."


class DeliveryAdminSite(admin.AdminSite):
    site_header = "Delivery administration"
    site_title = "Delivery admin"
    login_form = DeliveryAdminAuthenticationForm
    #: "View site": the service has no site of its own, its face is the API and its docs
    site_url = "/api/docs/"
    #: the model list beside every page takes a quarter of a laptop's width from the tables; the
    #: index page and the breadcrumbs lead to every model
    enable_nav_sidebar = False

    def login(self, request, extra_context=None):
        response = super().login(request, extra_context)
        refusal = getattr(request, LOGIN_REFUSAL_ATTRIBUTE, None)
        if refusal is not None:
            # The form shows why; the status and Retry-After tell scripts (docs/contract.md).
            response.status_code = refusal.status_code
            response["Retry-After"] = str(refusal.retry_after)
        return response

    def has_permission(self, request) -> bool:
        admitted = admin_site_admits(request.user)
        if admitted:
            organizations = administered_organization_ids(request.user)
            # An admin of several organizations (or staff) is named by user alone.
            only = organizations[0] if len(organizations) == 1 else None
            attribute_request(request, userId=request.user.pk, organizationId=only)
        return admitted
