"""JSON log lines for production: one object per line, with the request id.

A line's own fields come from `extra={"fields": {...}}` (the access line's method, route,
status...; a sweep's counts): they become keys of the object beside the standard ones. Nothing
else a library attaches to a record is written (Django attaches the request, whose path may
carry a token)."""

import json
import logging
from datetime import UTC, datetime


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, tz=UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "requestId": getattr(record, "request_id", "-"),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            entry.update({name: value for name, value in fields.items() if name not in entry})
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


#: Celery's lines that name the task among their arguments, and at which position: the beat's
#: "Sending due task %s (%s)" (entry, task) and the worker's "Discarding revoked task: %s[%s]"
#: (task, id; a run that expired unstarted, superseded by the next one).
_TASK_NAME_ARGUMENT = {"Scheduler: Sending due task": 1, "Discarding revoked task": 0}


class PeriodicTaskRunFilter(logging.Filter):
    """Drops Celery's INFO lines about runs of the beat's periodic tasks: the beat's "Sending
    due task", the worker's "received", "succeeded" and "Discarding revoked task" (every 5 s
    for the webhook sweep). Their failures (ERROR) pass, and every other task's lines too; a
    sweep logs a line of its own when it did something."""

    def __init__(self, task_names=()):
        super().__init__()
        self.task_names = frozenset(task_names)

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno > logging.INFO:
            return True
        return self._task_name(record) not in self.task_names

    @staticmethod
    def _task_name(record: logging.LogRecord) -> str | None:
        # The worker passes what it formats as `extra={"data": {...}}` (celery.app.trace,
        # celery.worker.strategy).
        data = getattr(record, "data", None)
        if isinstance(data, dict):
            return data.get("name")
        for start, position in _TASK_NAME_ARGUMENT.items():
            if str(record.msg).startswith(start) and isinstance(record.args, tuple):
                return record.args[position] if len(record.args) > position else None
        return None


def log_periodic_result(
    logger: logging.Logger,
    task: str,
    action: str,
    count: int,
    what: str,
    *,
    more: dict[str, int] | None = None,
) -> int:
    """One INFO line for a periodic task that did something (`webhooks.sweep queued 2 due
    deliveries`, with `{task, <action>: count}` and any `more` counts as fields); none when it
    found nothing, so an idle service writes no line every few seconds."""
    if count:
        logger.info(
            "%s %s %s %s",
            task,
            action,
            count,
            what,
            extra={"fields": {"task": task, action: count, **(more or {})}},
        )
    return count
