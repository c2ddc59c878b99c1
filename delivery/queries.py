"""Query helpers shared by the apps' selectors."""

from typing import TypeVar

from django.db.models import Model, QuerySet

M = TypeVar("M", bound=Model)


def unique_row(queryset: QuerySet[M]) -> M | None:
    """The row of a lookup by a unique key (or a primary key), or None.

    `first()` would add the model's default ordering, which Django compiles (a third of an
    order read's CPU) and PostgreSQL sorts (joining another table when the ordering follows a
    relation), all for one row. Without ORDER BY, a slice of one.
    """
    return next(iter(queryset.order_by()[:1]), None)
