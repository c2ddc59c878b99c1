from django.urls import path

from delivery.routing import route
from integrations.erp import apis


def _external_ref_route(pattern: str, view) -> list:
    """`externalRef` may hold `/` (contract "Orders"), so it is a `path` segment; the slashed twin
    comes first, else the bare pattern would read a trailing slash as part of the ref."""
    return [path(f"{pattern}/", view), path(pattern, view)]


urlpatterns = [
    *route("orders", apis.ErpOrdersApi.as_view()),
    *route("slot-holds", apis.ErpSlotHoldsApi.as_view()),
    *route("slot-holds/<str:hold_id>", apis.ErpSlotHoldDetailApi.as_view()),
    # .../delivery-slot is served by couriers (couriers/partner_urls.py): a failed order is
    # re-attempted there.
    *_external_ref_route("orders/<path:external_ref>/cancel", apis.ErpOrderCancelApi.as_view()),
    *_external_ref_route("orders/<path:external_ref>", apis.ErpOrderDetailApi.as_view()),
]
