"""Reads on orders. Every read takes the organization, except the public tracking lookup."""

from django.db.models import QuerySet

from integrations.errors import OrderNotFound
from integrations.models import Order, OrderStatusEvent
from tenants.selectors import parse_uuid


def _with_relations(queryset: QuerySet[Order]) -> QuerySet[Order]:
    return queryset.select_related("zone", "driver")


def order_get_by_external_ref(*, organization_id, external_ref: str) -> Order:
    """The organization's order `external_ref`; 404 `Order not found` otherwise (§2 isolation)."""
    order = _with_relations(
        Order.objects.filter(organization_id=organization_id, external_ref=external_ref)
    ).first()
    if order is None:
        raise OrderNotFound()
    return order


def order_get(*, organization_id, order_id) -> Order:
    """The organization's order by id; 404 `Order not found` for a malformed or unknown id."""
    parsed = parse_uuid(order_id)
    order = (
        _with_relations(Order.objects.filter(organization_id=organization_id, pk=parsed)).first()
        if parsed
        else None
    )
    if order is None:
        raise OrderNotFound()
    return order


def order_get_by_tracking_token(*, tracking_token: str) -> Order:
    """The order of a public tracking token (no organization: the token is the credential)."""
    order = (
        _with_relations(Order.objects.filter(tracking_token=tracking_token)).first()
        if isinstance(tracking_token, str) and tracking_token
        else None
    )
    if order is None:
        raise OrderNotFound()
    return order


def order_status_events(*, order: Order) -> QuerySet[OrderStatusEvent]:
    """The order's status history, oldest first (its creation, `pending`, first)."""
    return OrderStatusEvent.objects.filter(order=order).order_by("at", "id")
