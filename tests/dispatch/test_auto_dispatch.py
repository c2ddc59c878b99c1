"""Auto-dispatch at cutoff (contract "Dispatch", `autoDispatch: at_cutoff`): a zone's day is
planned and committed when one of its slots' booking cutoff passes, and `autoDispatchLeadMinutes`
before a partner window opens; safe to run twice, and on two beat processes at once."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest
import time_machine
from django.conf import settings
from django.db import connection

from dispatch import tasks
from dispatch.models import AutoDispatchRun, Plan
from dispatch.services import auto_dispatch
from dispatch.services.policy import dispatch_policy_update
from integrations.models import Order, OrderStatusEvent
from tests import builders
from tests.dispatch import committed_world as world

#: the Sunday slot 10:00-14:00 (Berlin) closes for booking at 08:00 Berlin, 07:00 UTC
CUTOFF = datetime(2030, 1, 6, 7, 0, tzinfo=UTC)


@pytest.fixture
def at_cutoff(organization):
    return dispatch_policy_update(organization_id=organization.id, auto_dispatch="at_cutoff")


def booked_day(organization):
    """A slot zone's Sunday with two orders booked in its 10:00 slot, and a driver."""
    zone = world.depot_zone(organization)
    zone.purpose = "slot"  # no partner windows: the slot's cutoff alone triggers
    zone.save(update_fields=["purpose"])
    template = builders.slot_template(zone, day_of_week=0, start="10:00", duration=240, cutoff=120)
    client = builders.erp_client(organization)
    # Booked now, years before the slot's cutoff.
    for n, north in enumerate((400, 900)):
        lat, lng = builders.offset(*world.DEPOT, north_m=north)
        response = builders.book(
            client, template, world.DAY, ref=f"SO-{n}", dropoffLat=lat, dropoffLng=lng
        )
        assert response.status_code == 201, response.content
    builders.driver(organization, "Samira Haddad")
    return zone


def tick(moment: datetime) -> auto_dispatch.AutoDispatchReport:
    with time_machine.travel(moment, tick=False):
        return auto_dispatch.auto_dispatch_run()


@pytest.mark.django_db
def test_a_slot_cutoff_plans_and_commits_the_zones_day(organization, at_cutoff, test_broker):
    zone = booked_day(organization)

    before = tick(datetime(2030, 1, 6, 6, 59, tzinfo=UTC))
    assert (before.claimed, Plan.objects.count()) == (0, 0)

    assert tick(CUTOFF).claimed == 1
    plan = Plan.objects.get()
    assert (plan.date, plan.zone_ids, plan.status) == (world.DAY, [zone.id], "planning")
    tasks.solve_plan(str(plan.id))  # as the worker does with the queued solve

    assert tick(datetime(2030, 1, 6, 7, 1, tzinfo=UTC)).committed == 1
    plan.refresh_from_db()
    assert plan.status == "committed"
    assert set(Order.objects.values_list("status", flat=True)) == {"assigned"}
    assert all(order.eta is not None for order in Order.objects.all())
    run = AutoDispatchRun.objects.get()
    assert (run.trigger, run.plan_id, run.error) == ("slot_cutoff", plan.id, "")
    assert run.finished_at is not None


@pytest.mark.django_db
def test_running_twice_plans_once(organization, at_cutoff, test_broker):
    booked_day(organization)

    assert tick(CUTOFF).claimed == 1
    assert tick(CUTOFF).claimed == 0

    assert Plan.objects.count() == 1
    assert AutoDispatchRun.objects.count() == 1


@pytest.mark.django_db
def test_nothing_happens_with_auto_dispatch_off(organization, test_broker):
    booked_day(organization)

    assert tick(CUTOFF).claimed == 0
    assert not Plan.objects.exists()


@pytest.mark.django_db
def test_a_partner_window_is_planned_its_lead_time_before_it_opens(
    organization, at_cutoff, test_broker
):
    zone = world.depot_zone(organization)
    zone.purpose = "dispatch"
    zone.save(update_fields=["purpose"])
    dispatch_policy_update(organization_id=organization.id, auto_dispatch_lead_minutes=90)
    world.window_order(organization, zone, "W-1")  # the 08:00-12:00 window (Berlin)

    # 08:00 Berlin is 07:00 UTC: 90 minutes before is 05:30 UTC.
    assert tick(datetime(2030, 1, 6, 5, 29, tzinfo=UTC)).claimed == 0
    assert tick(datetime(2030, 1, 6, 5, 30, tzinfo=UTC)).claimed == 1

    run = AutoDispatchRun.objects.get()
    assert (run.trigger, run.due_at) == ("window_lead", datetime(2030, 1, 6, 5, 30, tzinfo=UTC))


@pytest.mark.django_db(transaction=True)
def test_two_beat_processes_at_once_plan_and_commit_once(organization, at_cutoff, test_broker):
    booked_day(organization)
    ticks = 4
    barrier = threading.Barrier(ticks)

    def beat(_):
        try:
            barrier.wait()
            return auto_dispatch.auto_dispatch_run(now=CUTOFF)
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=ticks) as pool:
        reports = list(pool.map(beat, range(ticks)))

    assert sum(report.claimed for report in reports) == 1
    assert Plan.objects.count() == 1
    tasks.solve_plan(str(Plan.objects.get().id))

    with ThreadPoolExecutor(max_workers=ticks) as pool:
        reports = list(pool.map(beat, range(ticks)))

    assert sum(report.committed for report in reports) == 1
    assert list(Plan.objects.values_list("status", flat=True)) == ["committed"]
    assigned = OrderStatusEvent.objects.filter(to_status="assigned")
    assert sorted(assigned.values_list("order__external_ref", flat=True)) == ["SO-0", "SO-1"]


def test_with_a_real_worker_the_day_is_planned_then_committed(celery_worker, organization):
    dispatch_policy_update(organization_id=organization.id, auto_dispatch="at_cutoff")
    booked_day(organization)

    assert auto_dispatch.auto_dispatch_run(now=CUTOFF).claimed == 1
    plan = Plan.objects.get()
    deadline = time.monotonic() + 60
    while plan.status == "planning" and time.monotonic() < deadline:
        time.sleep(0.2)
        plan.refresh_from_db()
    assert plan.status == "ready", plan.error
    assert auto_dispatch.auto_dispatch_run(now=CUTOFF).committed == 1

    plan.refresh_from_db()
    assert plan.status == "committed"
    for route in plan.routes.all():
        world.route_check(route)
    assert set(Order.objects.values_list("status", flat=True)) == {"assigned"}


def test_the_beat_runs_it_every_minute():
    entry = settings.CELERY_BEAT_SCHEDULE["dispatch-auto-dispatch"]
    assert (entry["task"], entry["schedule"]) == (tasks.AUTO_DISPATCH_TASK, 60.0)
