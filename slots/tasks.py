"""Celery interface of the slots app: periodic, id-free, safe to run twice."""

from celery import shared_task

from slots import services


@shared_task(name="slots.delete_expired_holds", acks_late=True, ignore_result=True)
def delete_expired_holds() -> int:
    """Expired slot holds already count for nothing; this only removes their rows."""
    return services.slot_holds_expired_delete()
