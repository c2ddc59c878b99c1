"""Reads of webhook deliveries; every query is scoped to one organization."""

from uuid import UUID

from django.db.models import QuerySet

from delivery.fields import parse_uuid
from delivery.pagination import Page, page_of
from webhooks.errors import DeliveryNotFound
from webhooks.models import Delivery


def delivery_list(*, organization_id: UUID | str, status: str | None = None) -> QuerySet[Delivery]:
    """The organization's deliveries, newest first, with their event (one query)."""
    qs = Delivery.objects.filter(organization_id=organization_id).select_related("event")
    if status:
        qs = qs.filter(status=status)
    return qs.order_by("-created_at", "-id")


def delivery_page(
    *, organization_id: UUID | str, status: str | None, page: int, page_size: int
) -> Page[Delivery]:
    """One page of `delivery_list`: two queries (rows and count), whatever the data."""
    qs = delivery_list(organization_id=organization_id, status=status)
    return page_of(qs, page=page, page_size=page_size)


def delivery_get(*, organization_id: UUID | str, delivery_id: UUID | str) -> Delivery:
    """404 `Delivery not found` for a malformed, unknown or other organization's id."""
    parsed = parse_uuid(delivery_id)
    delivery = (
        Delivery.objects.select_related("event")
        .filter(organization_id=organization_id, pk=parsed)
        .first()
        if parsed
        else None
    )
    if delivery is None:
        raise DeliveryNotFound()
    return delivery
