"""Django admin for couriers: issuing and ending drivers' access tokens from the drivers' list
(contract "Couriers"), which couriers add to tenants' driver admin as webhooks add the test
webhook to the keys' admin."""

from dataclasses import dataclass

from django.contrib import admin, messages
from django.template.response import TemplateResponse
from django.urls import reverse

from couriers.services import tokens as token_services
from tenants.admin import DriverAdmin
from tenants.models import Driver

#: the courier web app's sign-in link: the token travels in the fragment, which browsers never
#: send to a server (so it stays out of access logs)
SIGN_IN_PATH = "/courier/#token="


@dataclass(frozen=True)
class IssuedForAdmin:
    driver: Driver
    value: str
    sign_in_link: str


@admin.action(description="Issue a courier access token (ends the old one)")
def issue_courier_token(modeladmin, request, queryset):
    issued = []
    for driver in queryset.order_by("name", "id"):
        token = token_services.driver_token_issue(driver=driver)
        link = request.build_absolute_uri(f"{SIGN_IN_PATH}{token.value}")
        issued.append(IssuedForAdmin(driver=driver, value=token.value, sign_in_link=link))
    # Rendered straight away, never put in a message: messages are stored (session or cookie)
    # until shown, and the token must be kept nowhere.
    return TemplateResponse(
        request,
        "couriers/admin/tokens_issued.html",
        {
            **modeladmin.admin_site.each_context(request),
            "issued_tokens": issued,
            "back_url": reverse(
                f"{modeladmin.admin_site.name}:tenants_driver_changelist", current_app=None
            ),
        },
    )


@admin.action(description="End the courier access token")
def end_courier_token(modeladmin, request, queryset):
    ended = sum(token_services.driver_token_revoke(driver=driver) for driver in queryset)
    modeladmin.message_user(request, f"Ended {ended} courier access token(s).", messages.SUCCESS)


DriverAdmin.actions = (*(DriverAdmin.actions or ()), issue_courier_token, end_courier_token)
