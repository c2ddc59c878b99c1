"""Retention: removing what is past its time in small batches that keep no request waiting
(docs/operations.md "Retention").

A run goes through the rows of a queryset in batches. Each batch is its own short transaction: it
takes at most RETENTION_BATCH_SIZE rows with `FOR UPDATE SKIP LOCKED` (a row a request holds is
left for the next run), in the order of an indexed column, acts on them (deletes them), and
commits. The next batch starts after the last row of the one before (keyset order), so rows the
rule keeps are walked once per run, not once per batch. A run ends when nothing is left or when
RETENTION_TIME_BUDGET_SECONDS are spent; the next run goes on from the oldest row again.

Two runs at once take disjoint batches: each row is removed, and counted, once.
"""

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet

from delivery import metrics
from delivery.log_format import log_periodic_result

#: acts on the primary keys of one locked batch, inside its transaction; returns how many
#: records it removed
BatchAction = Callable[[list[Any]], int]


@dataclass(frozen=True)
class BatchRun:
    """What a run did: records removed, batches taken, and whether it saw the end (False: its
    time budget ran out first; the next run goes on)."""

    removed: int = 0
    batches: int = 0
    finished: bool = True

    def __add__(self, other: "BatchRun") -> "BatchRun":
        return BatchRun(
            self.removed + other.removed,
            self.batches + other.batches,
            self.finished and other.finished,
        )


def deadline(budget_seconds: float | None = None) -> float:
    """When a run that starts now must stop taking batches (a `time.monotonic()` value; the
    clock tests travel with does not move it)."""
    budget = settings.RETENTION_TIME_BUDGET_SECONDS if budget_seconds is None else budget_seconds
    return time.monotonic() + budget


def in_batches(
    queryset: QuerySet,
    act: BatchAction,
    *,
    order_by: str,
    batch_size: int | None = None,
    until: float | None = None,
) -> BatchRun:
    """Runs `act` over the rows of `queryset` in batches (module docstring): each batch's rows
    locked with SKIP LOCKED, oldest `order_by` first (a column with an index that serves the
    queryset's filter), in a transaction of its own. Stops when nothing is left, or after the
    batch that ends past `until` (default: RETENTION_TIME_BUDGET_SECONDS from now)."""
    size = batch_size or settings.RETENTION_BATCH_SIZE
    stop_at = deadline() if until is None else until
    removed = batches = 0
    after: tuple[Any, Any] | None = None
    while True:
        batch = queryset.select_for_update(skip_locked=True, of=("self",)).order_by(order_by, "pk")
        if after is not None:
            value, pk = after
            # `>=` first, so the index on the column serves the range; the rest breaks ties.
            batch = batch.filter(**{f"{order_by}__gte": value}).filter(
                Q(**{f"{order_by}__gt": value}) | Q(pk__gt=pk)
            )
        with transaction.atomic():
            rows = list(batch.values_list(order_by, "pk")[:size])
            if rows:
                removed += act([pk for _, pk in rows])
        if not rows:
            return BatchRun(removed, batches, finished=True)
        batches += 1
        after = rows[-1]
        if len(rows) < size:
            return BatchRun(removed, batches, finished=True)
        if time.monotonic() >= stop_at:
            return BatchRun(removed, batches, finished=False)


def delete_rows(model) -> BatchAction:
    """The action that deletes a batch's rows of `model` (with what cascades from them);
    returns how many rows of `model` went, which the batch's lock makes exactly the batch."""

    def delete(pks: Sequence[Any]) -> int:
        # Only the keys: Django loads the rows it cascades from, and needs no more of them.
        model._default_manager.filter(pk__in=pks).only("pk").delete()
        return len(pks)

    return delete


def delete_in_batches(
    queryset: QuerySet,
    *,
    order_by: str,
    batch_size: int | None = None,
    until: float | None = None,
) -> BatchRun:
    """Deletes the rows of `queryset` in batches (`in_batches`)."""
    return in_batches(
        queryset,
        delete_rows(queryset.model),
        order_by=order_by,
        batch_size=batch_size,
        until=until,
    )


def retention_result(
    logger: logging.Logger,
    task: str,
    kind: str,
    removed: int,
    what: str,
    *,
    along: dict[str, int] | None = None,
) -> int:
    """A retention task's one line (`couriers.prune_trails deleted 12 trail points`, none when it
    removed nothing) and the `retention_removed_total{kind}` metric; `along` counts records of
    other kinds that went with them (a field of the line each, and their metric)."""
    for name, count in {kind: removed, **(along or {})}.items():
        if count:
            metrics.retention_removed(name, count)
    return log_periodic_result(logger, task, "deleted", removed, what, more=along)
