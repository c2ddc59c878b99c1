from django.urls import include, path

from delivery.routing import route
from integrations.partner import apis

#: contract "Authentication and scope": the partner family is served for each partner platform
PARTNER_INTEGRATIONS = ("partner-a", "partner-b", "partner-c")


def _external_ref_route(pattern: str, view) -> list:
    """`externalRef` may hold `/` (contract "Orders"), so it is a `path` segment; the slashed twin
    comes first, else the bare pattern would read a trailing slash as part of the ref."""
    return [path(f"{pattern}/", view), path(pattern, view)]


def _patterns(integration: str) -> list:
    """One partner platform's routes, under its own prefix (`partner-a/`, ...)."""
    return [
        *route("orders", apis.PartnerOrdersApi.as_view(integration=integration)),
        *route("delivery-windows", apis.DeliveryWindowsApi.as_view(integration=integration)),
        *_external_ref_route(
            "orders/<path:external_ref>/release",
            apis.PartnerOrderReleaseApi.as_view(integration=integration),
        ),
        *_external_ref_route(
            "orders/<path:external_ref>/cancel",
            apis.PartnerOrderCancelApi.as_view(integration=integration),
        ),
        *_external_ref_route(
            "orders/<path:external_ref>",
            apis.PartnerOrderDetailApi.as_view(integration=integration),
        ),
    ]


# Each platform under its prefix: a request skips the other platforms' includes at once, where
# unprefixed patterns would each be tried (and listed for Django's 404 page) on every request.
urlpatterns = [
    path(f"{integration}/", include(_patterns(integration))) for integration in PARTNER_INTEGRATIONS
]
