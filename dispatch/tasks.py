"""Celery interface of dispatch: tasks take ids and are safe to run twice."""

from celery import shared_task

from dispatch.services import auto_dispatch, planning


@shared_task(name=planning.SOLVE_TASK, acks_late=True, ignore_result=True)
def solve_plan(plan_id: str) -> str | None:
    """Solves a `planning` plan (`dispatch.services.planning.plan_solve`); a repeated message
    finds it no longer planning and does nothing. Answers the plan's status."""
    plan = planning.plan_solve(plan_id=plan_id)
    return None if plan is None else plan.status


# ----- auto-dispatch at cutoff (contract "Dispatch", `autoDispatch: at_cutoff`) -----

AUTO_DISPATCH_TASK = "dispatch.auto_dispatch"


@shared_task(name=AUTO_DISPATCH_TASK, ignore_result=True)
def auto_dispatch_tick() -> dict:
    """Plans each zone's day whose slot cutoff or window lead time is due, and commits the plans
    solved since (`dispatch.services.auto_dispatch`); safe to run twice, and on two beats."""
    report = auto_dispatch.auto_dispatch_run()
    return {"claimed": report.claimed, "committed": report.committed}
