import logging.config
import os

from celery import Celery
from celery.signals import setup_logging, task_postrun, task_prerun
from django.conf import settings
from django.db import close_old_connections

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "delivery.settings")

app = Celery("delivery")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@task_prerun.connect
@task_postrun.connect
def _close_old_database_connections(**kwargs) -> None:
    """Around every task, what Django does around every request: drop the thread's database
    connection when it is past CONN_MAX_AGE or saw an error, and health-check it before its
    next use. Celery's own Django fixup would close it after every task instead
    (a new PostgreSQL backend per webhook delivery: measured as one connection per order under
    load, the worker's largest cost); CELERY_DB_REUSE_MAX in the settings keeps it from that."""
    close_old_connections()


@setup_logging.connect
def _log_as_the_web_does(**kwargs) -> None:
    """Worker and beat log through the LOGGING setting, as gunicorn's workers do: the same
    format (LOG_FORMAT), level (LOG_LEVEL, which `--loglevel` does not change) and request-id
    field, and the filter that keeps the periodic tasks' runs quiet. Without this receiver
    Celery replaces the root logger's handlers with its own plain format."""
    logging.config.dictConfig(settings.LOGGING)
