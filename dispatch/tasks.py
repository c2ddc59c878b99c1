"""Celery interface of dispatch: tasks take ids and are safe to run twice."""

from celery import shared_task

from dispatch.services import planning


@shared_task(name=planning.SOLVE_TASK, acks_late=True, ignore_result=True)
def solve_plan(plan_id: str) -> str | None:
    """Solves a `planning` plan (`dispatch.services.planning.plan_solve`); a repeated message
    finds it no longer planning and does nothing. Answers the plan's status."""
    plan = planning.plan_solve(plan_id=plan_id)
    return None if plan is None else plan.status
