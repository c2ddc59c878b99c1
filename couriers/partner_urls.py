"""The partner family's proof read, `/integrations/partner-x/orders/<externalRef>/proof`, and the
ERP's `PUT .../delivery-slot` as couriers serves it (a failed order is re-attempted): mounted by
the root URLconf before the integrations' own patterns, whose `orders/<externalRef>` would
otherwise read `/proof` or `/delivery-slot` as part of the reference."""

from django.urls import path

from couriers import apis

PARTNER_INTEGRATIONS = ("partner-a", "partner-b", "partner-c")

urlpatterns = [
    pattern
    for integration in PARTNER_INTEGRATIONS
    for pattern in (
        # The slashed twin first, else the bare pattern would read a trailing slash as part of
        # the reference (as integrations/partner/urls.py does).
        path(
            f"integrations/{integration}/orders/<path:external_ref>/proof/",
            apis.PartnerOrderProofApi.as_view(integration=integration),
        ),
        path(
            f"integrations/{integration}/orders/<path:external_ref>/proof",
            apis.PartnerOrderProofApi.as_view(integration=integration),
        ),
    )
] + [
    # The slashed twin first, as above.
    path(
        "integrations/erp/orders/<path:external_ref>/delivery-slot/",
        apis.ErpOrderSlotApi.as_view(),
    ),
    path(
        "integrations/erp/orders/<path:external_ref>/delivery-slot",
        apis.ErpOrderSlotApi.as_view(),
    ),
]
