"""Reads on orders that both families and the management API share. Every read takes the
organization, except the public tracking lookup. The partner family's own reads are in
`integrations/partner/selectors.py`, the ERP family's in `integrations/erp/selectors.py`."""

from datetime import date
from uuid import UUID

from django.db.models import (
    DateField,
    DateTimeField,
    F,
    Func,
    Prefetch,
    QuerySet,
    Value,
    prefetch_related_objects,
)
from django.db.models.functions import Cast, Coalesce

from delivery.fields import parse_uuid
from delivery.pagination import Page, page_of
from integrations.errors import OrderNotFound
from integrations.external_refs import could_be_stored
from integrations.models import Order, OrderStatusEvent


def _with_relations(queryset: QuerySet[Order]) -> QuerySet[Order]:
    # The zone's polygon is never shown with an order, and is the largest column read.
    return queryset.select_related("zone", "driver").defer("zone__geodata")


def _one_order(queryset: QuerySet[Order]) -> Order:
    # get() reads the one row without ORDER BY (the model's ordering would cost a sort).
    try:
        return _with_relations(queryset).get()
    except Order.DoesNotExist:
        raise OrderNotFound() from None


def order_get_by_external_ref(
    *, organization_id: UUID | str, external_ref: str, family: str | None = None
) -> Order:
    """The organization's order `external_ref` (of `family` when given); 404 `Order not found`
    otherwise, another organization's order included (contract "Authentication and scope")."""
    if not could_be_stored(external_ref):
        # Text no ref can hold (a NUL from the path, say) is unknown without asking the database.
        raise OrderNotFound()
    orders = Order.objects.filter(organization_id=organization_id, external_ref=external_ref)
    return _one_order(orders if family is None else orders.filter(family=family))


def order_get(*, organization_id: UUID | str, order_id: UUID | str) -> Order:
    """The organization's order by id; 404 `Order not found` for a malformed or unknown id."""
    parsed = parse_uuid(order_id)
    if parsed is None:
        raise OrderNotFound()
    return _one_order(Order.objects.filter(organization_id=organization_id, pk=parsed))


def order_get_by_tracking_token(*, tracking_token: str) -> Order:
    """The order of a public tracking token (no organization: the token is the credential)."""
    if not isinstance(tracking_token, str) or not tracking_token:
        raise OrderNotFound()
    return _one_order(Order.objects.filter(tracking_token=tracking_token))


def order_status_events(*, order: Order) -> QuerySet[OrderStatusEvent]:
    """The order's status history, oldest first (its creation, `pending`, first)."""
    return OrderStatusEvent.objects.filter(order=order).order_by("at", "id")


# ----- management API -----


def _delivery_day():
    """The local calendar day (zone time, UTC without a zone) of the order's window start."""
    local_time = Func(
        Coalesce(F("zone__timezone"), Value("UTC")),
        F("delivery_window_start"),
        function="timezone",
        output_field=DateTimeField(),
    )
    return Cast(local_time, DateField())


def order_list(
    *,
    organization_id: UUID | str,
    status: str | None = None,
    day: date | None = None,
    zone_id: UUID | str | None = None,
) -> QuerySet[Order]:
    """The organization's orders, newest first (a stable order: ties broken by id), with
    zone and driver joined. `day` keeps orders whose window starts on that day, zone time."""
    qs = _with_relations(Order.objects.filter(organization_id=organization_id))
    if status:
        qs = qs.filter(status=status)
    if zone_id:
        qs = qs.filter(zone_id=zone_id)
    if day:
        qs = qs.annotate(delivery_day=_delivery_day()).filter(delivery_day=day)
    return qs.order_by("-created_at", "-id")


def order_page(
    *,
    organization_id: UUID | str,
    status: str | None,
    day: date | None,
    zone_id: UUID | str,
    page: int,
    page_size: int,
) -> Page[Order]:
    """One page of `order_list`: two queries (rows and count), whatever the page holds."""
    qs = order_list(organization_id=organization_id, status=status, day=day, zone_id=zone_id)
    return page_of(qs, page=page, page_size=page_size)


def order_get_with_history(*, organization_id: UUID | str, order_id: UUID | str) -> Order:
    """`order_get` with its status history prefetched, oldest first."""
    order = order_get(organization_id=organization_id, order_id=order_id)
    prefetch_related_objects(
        [order], Prefetch("status_events", queryset=OrderStatusEvent.objects.order_by("at", "id"))
    )
    return order
