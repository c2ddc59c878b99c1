"""Auto-dispatch at cutoff (contract "Dispatch", `autoDispatch: at_cutoff`).

A periodic task (`dispatch.auto_dispatch`, every minute) re-plans and commits a zone's day when
one of its slots' booking cutoff passes, and `autoDispatchLeadMinutes` before one of its partner
windows opens. Each such moment is a trigger, due from its instant until its window ends; the
first tick that finds it due with orders to plan claims it with a unique `AutoDispatchRun` row
(organization, zone, date, trigger, instant), so a task run twice, or two beat processes started
by mistake, plan it once. The claim asks for a plan of the zone's day (solved by the worker, as
any plan); a later tick commits it once `ready` (the commit's own locks make a second commit of
it a no-op) and closes the claim. Routes under way keep their started stops: the planner pins
them (`dispatch.services.replanning`).
"""

import logging
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from delivery.errors import ApplicationError
from delivery.timezones import zone_tz
from dispatch.errors import PlanNotReady
from dispatch.models import (
    AutoDispatch,
    AutoDispatchRun,
    AutoDispatchTrigger,
    DispatchPolicy,
    PlanStatus,
)
from dispatch.services import committing, planning
from dispatch.services.orders_of_day import orders_of_day
from integrations import windows as partner_windows
from slots.models import SlotTemplate
from slots.occurrences import day_of_week, occurrence
from zones.models import DISPATCH_PURPOSES, SLOT_PURPOSES, Zone

logger = logging.getLogger(__name__)

#: days around today (zone time) whose slots and windows are looked at; a cutoff may be set
#: days before its slot
DAYS_BEHIND, DAYS_AHEAD = 1, 7


@dataclass(frozen=True)
class Due:
    zone: Zone
    day: date
    trigger: str
    at: datetime


@dataclass
class AutoDispatchReport:
    claimed: int = 0
    committed: int = 0


def _days_around(now: datetime, zone: Zone) -> list[date]:
    today = now.astimezone(zone_tz(zone.timezone)).date()
    return [today + timedelta(days=offset) for offset in range(-DAYS_BEHIND, DAYS_AHEAD + 1)]


def _slot_cutoffs(zone: Zone, templates: list[SlotTemplate], now: datetime) -> list[Due]:
    """The zone's slots whose booking cutoff has passed and whose window has not yet ended."""
    due = []
    tz = zone_tz(zone.timezone)
    for day in _days_around(now, zone):
        for template in templates:
            if template.day_of_week != day_of_week(day):
                continue
            slot = occurrence(
                day=day,
                start_time=template.start_time,
                duration_minutes=template.duration_minutes,
                cutoff_minutes=template.cutoff_minutes,
                cutoff_day_before_at=template.cutoff_day_before_at,
                tz=tz,
            )
            if slot.cutoff_at <= now < slot.window_end:
                due.append(Due(zone, day, AutoDispatchTrigger.SLOT_CUTOFF, slot.cutoff_at))
    return due


def _window_leads(zone: Zone, lead: timedelta, now: datetime) -> list[Due]:
    """The zone's partner windows that open within `lead` (or have opened) and have not ended."""
    due = []
    tz = zone_tz(zone.timezone)
    for day in _days_around(now, zone):
        for window in partner_windows.windows_for_day(day, tz):
            if window.start - lead <= now < window.end:
                due.append(Due(zone, day, AutoDispatchTrigger.WINDOW_LEAD, window.start - lead))
    return due


def auto_dispatch_due(*, now: datetime) -> list[Due]:
    """Every trigger due at `now`, of the enabled zones of organizations with `at_cutoff`."""
    due: list[Due] = []
    policies = DispatchPolicy.objects.filter(
        auto_dispatch=AutoDispatch.AT_CUTOFF, organization__is_active=True
    )
    for policy in policies:
        lead = timedelta(minutes=policy.auto_dispatch_lead_minutes)
        zones = Zone.objects.filter(organization_id=policy.organization_id, enabled=True)
        templates: dict = {}
        for template in SlotTemplate.objects.filter(
            organization_id=policy.organization_id, deleted_at__isnull=True
        ):
            templates.setdefault(template.zone_id, []).append(template)
        for zone in zones.order_by("name", "id"):
            if zone.purpose in SLOT_PURPOSES:
                due += _slot_cutoffs(zone, templates.get(zone.id, []), now)
            if zone.purpose in DISPATCH_PURPOSES:
                due += _window_leads(zone, lead, now)
    return due


def _claim(due: Due) -> AutoDispatchRun | None:
    """The trigger's claim, or None when another tick (or beat process) has it."""
    try:
        with transaction.atomic():
            return AutoDispatchRun.objects.create(
                organization_id=due.zone.organization_id,
                zone=due.zone,
                date=due.day,
                trigger=due.trigger,
                due_at=due.at,
            )
    except IntegrityError:
        return None


def _claimed(due: Due) -> bool:
    return AutoDispatchRun.objects.filter(
        organization_id=due.zone.organization_id,
        zone=due.zone,
        date=due.day,
        trigger=due.trigger,
        due_at=due.at,
    ).exists()


def _start(due: Due) -> bool:
    """Claims `due` and asks for its plan; False when it is not this tick's to start."""
    if (
        _claimed(due)
        or not orders_of_day(
            organization_id=due.zone.organization_id, day=due.day, zones=[due.zone]
        ).exists()
    ):
        return False
    run = _claim(due)
    if run is None:
        return False
    try:
        plan, _ = planning.plan_request(
            organization_id=due.zone.organization_id, day=due.day, zone_ids=[due.zone.id]
        )
    except ApplicationError as exc:
        AutoDispatchRun.objects.filter(pk=run.pk).update(error=str(exc), finished_at=timezone.now())
        return True
    AutoDispatchRun.objects.filter(pk=run.pk).update(plan=plan)
    return True


def _finish(run: AutoDispatchRun) -> bool:
    """Commits the claim's plan once solved and closes the claim; True when this call did."""
    plan = run.plan
    if plan.status == PlanStatus.PLANNING:
        return False
    committed = False
    if plan.status == PlanStatus.READY:
        try:
            committing.plan_commit(organization_id=plan.organization_id, plan_id=plan.id)
            committed = True
        except PlanNotReady:
            pass  # committed (or superseded) meanwhile, by another tick or by hand
    error = plan.error if plan.status == PlanStatus.FAILED else ""
    AutoDispatchRun.objects.filter(pk=run.pk, finished_at__isnull=True).update(
        finished_at=timezone.now(), error=error
    )
    return committed


def auto_dispatch_run(*, now: datetime | None = None) -> AutoDispatchReport:
    """One tick: claims and plans each trigger due, then commits each claimed plan now solved
    (oldest plan first, so the latest plan of a day is committed last)."""
    now = now or timezone.now()
    report = AutoDispatchReport()
    for due in auto_dispatch_due(now=now):
        if _start(due):
            report.claimed += 1
    open_runs = (
        AutoDispatchRun.objects.filter(finished_at__isnull=True, plan__isnull=False)
        .select_related("plan")
        .order_by("plan__created_at", "id")
    )
    for run in open_runs:
        if _finish(run):
            report.committed += 1
    if report.claimed or report.committed:
        logger.info(
            "auto-dispatch: %s plan(s) requested, %s committed", report.claimed, report.committed
        )
    return report
