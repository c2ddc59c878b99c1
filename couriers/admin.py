"""Django admin for couriers (contract "Couriers"): issuing and ending drivers' access tokens from
the drivers' list, and the proofs on the order's page, which couriers add to tenants' driver
admin and integrations' order admin as webhooks add the test webhook to the keys' admin."""

from dataclasses import dataclass

from django.contrib import admin, messages
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from couriers import proof_urls
from couriers.models import StopProof
from couriers.services import tokens as token_services
from integrations.admin import OrderAdmin
from tenants.admin import DriverAdmin
from tenants.admin_display import time_field
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


class StopProofInline(admin.TabularInline):
    """The courier's proofs of the order, each file behind a signed link valid 10 minutes (the
    page is read again for fresh ones)."""

    model = StopProof
    extra = 0
    verbose_name = "proof from the courier"
    verbose_name_plural = "proofs from the courier"
    fields = (
        "status",
        "happened",
        "driver",
        "recipient_name",
        "barcode",
        "cash_collected",
        "failure_reason",
        "note",
        "location",
        "signature",
        "photos_shown",
    )
    readonly_fields = fields
    ordering = ("created_at", "id")
    can_delete = False
    happened = time_field("at", "At")

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_view_permission(self, request, obj=None) -> bool:
        # Whoever may see the order (OrderAdmin's scoping) may see its proofs.
        return True

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("driver").prefetch_related("photos")

    @admin.display(description="Location")
    def location(self, proof: StopProof):
        if proof.lat is None:
            return self.get_empty_value_display()
        return f"{proof.lat:.6f}, {proof.lng:.6f}"

    @admin.display(description="Signature")
    def signature(self, proof: StopProof):
        url = proof_urls.proof_file_url(None, proof.signature_name)
        if url is None:
            return self.get_empty_value_display()
        return format_html('<a href="{}" target="_blank" rel="noopener">signature</a>', url)

    @admin.display(description="Photos")
    def photos_shown(self, proof: StopProof):
        links = [
            (proof_urls.proof_file_url(None, photo.file_name), number)
            for number, photo in enumerate(proof.photos.all(), start=1)
        ]
        if not links:
            return self.get_empty_value_display()
        return format_html_join(
            " ", '<a href="{}" target="_blank" rel="noopener">photo {}</a>', links
        )


OrderAdmin.inlines = (*OrderAdmin.inlines, StopProofInline)
