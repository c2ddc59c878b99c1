"""Reads of the ERP family: its orders by `externalRef`, with their slot booking."""

from uuid import UUID

from integrations import selectors as order_selectors
from integrations.errors import OrderNotFound
from integrations.models import Order, OrderFamily


def erp_order_get(*, organization_id: UUID | str, external_ref: str) -> Order:
    """The organization's ERP order `external_ref`; 404 `Order not found` for an unknown ref,
    another organization's, or an order of the partner family."""
    order = order_selectors.order_get_by_external_ref(
        organization_id=organization_id, external_ref=external_ref
    )
    if order.family != OrderFamily.ERP:
        raise OrderNotFound()
    return order
