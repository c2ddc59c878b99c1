"""Celery interface of the zones app: tasks take ids and are safe to run twice."""

from celery import shared_task

from zones import services


@shared_task(name=services.IMPORT_TASK, acks_late=True, ignore_result=True)
def import_gazetteer(import_id: str) -> str | None:
    """Runs a queued gazetteer import (zones.services.gazetteer_import_run); a repeated
    message finds it no longer queued and does nothing. Answers the import's status."""
    record = services.gazetteer_import_run(import_id=import_id)
    return None if record is None else record.status
