"""Query helpers shared by the apps' selectors."""

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from enum import Enum
from typing import Generic, TypeVar

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import Expression, Model, QuerySet

M = TypeVar("M", bound=Model)


def column(model: type[Model], field_name: str) -> str:
    """The database column of `model`'s field `field_name`, for hand-written SQL."""
    return model._meta.get_field(field_name).column


def table(model: type[Model]) -> str:
    """`model`'s table name, quoted for hand-written SQL."""
    return connections[DEFAULT_DB_ALIAS].ops.quote_name(model._meta.db_table)


def unique_row(queryset: QuerySet[M]) -> M | None:
    """The row of a lookup by a unique key (or a primary key), or None.

    `first()` would add the model's default ordering, which Django compiles (a third of an
    order read's CPU) and PostgreSQL sorts (joining another table when the ordering follows a
    relation), all for one row. Without ORDER BY, a slice of one.
    """
    return next(iter(queryset.order_by()[:1]), None)


#: the values of the `Param`s of the query being run (set by `CompiledQuery` around each run)
_param_values: ContextVar[dict] = ContextVar("query_param_values")


class Param(Expression):
    """A named value of a `CompiledQuery`: compiles to a placeholder for the value its run gives.

    The value goes to the database as the driver adapts it (str, int, UUID, date, datetime; a
    choices member as its value); Django's per-field preparation is skipped, so pass values of
    the column's own type. `as_sql` is Django's documented hook for a query expression.
    """

    def __init__(self, name: str):
        super().__init__()
        self.name = name

    def as_sql(self, compiler, connection):
        return "%s", [_plain(_param_values.get()[self.name])]

    def resolve_expression(self, *args, **kwargs):
        return self

    @property
    def output_field(self):
        # A lookup only asks to know whether to cast; the column on the other side decides.
        return None

    def get_group_by_cols(self):
        return []


class CompiledQuery(Generic[M]):
    """A queryset written once with `Param`s where the values go, run with new values.

    Each run evaluates the queryset through the ORM (its own iterator builds the instances and
    their `select_related` relations), with the run's values in its placeholders: the query is
    declared once beside its selector, and nothing of Django's compiler internals is relied on.
    """

    def __init__(self, build: Callable[[], QuerySet[M]], using: str = DEFAULT_DB_ALIAS):
        self._build = build
        self._using = using

    def _run(self, values: dict, evaluate: Callable[[QuerySet[M]], object]):
        token = _param_values.set(values)
        try:
            return evaluate(self._build().using(self._using))
        finally:
            _param_values.reset(token)

    def rows(self, **values) -> list[M]:
        return self._run(values, list)

    def first(self, **values) -> M | None:
        found = self.rows(**values)
        return found[0] if found else None


class CompiledExists(CompiledQuery):
    """`queryset.exists()` with `Param`s (`SELECT 1 ... LIMIT 1`, as Django writes it)."""

    def __call__(self, **values) -> bool:
        return self._run(values, QuerySet.exists)


def _plain(value):
    # A choices member (`OrderFamily.PARTNER`) goes to the database as its value, as Django
    # would send it; the driver alone would send an Enum's name.
    return value.value if isinstance(value, Enum) else value


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


class CompiledInsert:
    """INSERTs of one model, the statement written once per process from the model's `_meta`.

    `Model.save()` compiles its INSERT on every call (a sixth of an order creation's CPU). Here
    every value goes through the field's own `pre_save` and `get_db_prep_save`, as `save()`
    sends it; what `save()` also does and this does not: no `pre_save`/`post_save` signals (the
    models written this way have no receivers: tests/core/test_compiled_query.py checks), no
    parent models. An auto-increment key is left to the database and read back (RETURNING).
    """

    def __init__(self, model: type[Model]):
        self.model = model
        meta = model._meta
        self.fields = [
            field
            for field in meta.local_concrete_fields
            if not (field.primary_key and getattr(field, "db_returning", False))
            and not getattr(field, "generated", False)
        ]
        quote = connections[DEFAULT_DB_ALIAS].ops.quote_name
        columns = ", ".join(quote(field.column) for field in self.fields)
        values = ", ".join(["%s"] * len(self.fields))
        # Names from the model, quoted; every value is a placeholder.
        self.sql = f"INSERT INTO {table(model)} ({columns}) VALUES ({values})"  # noqa: S608
        self.returned_pk = meta.pk if meta.pk not in self.fields else None
        if self.returned_pk is not None:
            self.sql += f" RETURNING {quote(meta.pk.column)}"

    def params(self, instance: Model) -> list:
        connection = connections[DEFAULT_DB_ALIAS]
        return [
            field.get_db_prep_save(field.pre_save(instance, True), connection)
            for field in self.fields
        ]


def rows_insert(*pairs: tuple[CompiledInsert, Model]) -> None:
    """Writes each instance with its compiled INSERT, all in one round trip, in order; each
    instance is then as if read back from its row (not `adding`)."""
    connection = connections[DEFAULT_DB_ALIAS]
    sql = "; ".join(insert.sql for insert, _ in pairs)
    params = [value for insert, instance in pairs for value in insert.params(instance)]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for position, (insert, instance) in enumerate(pairs):
            if position:
                cursor.nextset()  # one result per statement, in the order they ran
            if insert.returned_pk is not None:
                setattr(instance, insert.returned_pk.attname, cursor.fetchone()[0])
            instance._state.adding, instance._state.db = False, connection.alias
