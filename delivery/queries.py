"""Query helpers shared by the apps' selectors."""

from dataclasses import dataclass
from typing import Generic, TypeVar

from django.db.models import Model, QuerySet

M = TypeVar("M", bound=Model)


def unique_row(queryset: QuerySet[M]) -> M | None:
    """The row of a lookup by a unique key (or a primary key), or None.

    `first()` would add the model's default ordering, which Django compiles (a third of an
    order read's CPU) and PostgreSQL sorts (joining another table when the ordering follows a
    relation), all for one row. Without ORDER BY, a slice of one.
    """
    return next(iter(queryset.order_by()[:1]), None)


@dataclass(frozen=True)
class Page(Generic[M]):
    """One page of a list of the management API: its rows, its number and size (from 1), and
    the total the whole list holds."""

    items: list[M]
    page: int
    page_size: int
    total: int


def page_of(queryset: QuerySet[M], *, page: int, page_size: int) -> Page[M]:
    """Page `page` of an ordered `queryset`: two queries (the rows, then the count), whatever
    the page holds."""
    offset = (page - 1) * page_size
    return Page(
        items=list(queryset[offset : offset + page_size]),
        page=page,
        page_size=page_size,
        total=queryset.count(),
    )
