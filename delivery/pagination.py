"""One page of a list of the management API."""

from dataclasses import dataclass
from typing import Generic, TypeVar

from django.db.models import Model, QuerySet

M = TypeVar("M", bound=Model)


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
