"""Reads of dispatch (contract "Dispatch"): plans with their routes, stops and left-out orders,
and drivers with the zones they serve. Every read is scoped by the organization."""

from datetime import date
from uuid import UUID

from django.db.models import Prefetch, QuerySet

from delivery.fields import parse_uuid
from delivery.queries import Page, page_of
from dispatch.errors import PlanNotFound
from dispatch.models import DriverZone, Plan, PlanLeftOut, PlanRoute, PlanStop
from dispatch.services.planning import driver_capacity
from slots.models import SlotPolicy, default_vehicle_capacity
from tenants.models import Driver


def _with_contents(plans: QuerySet[Plan]) -> QuerySet[Plan]:
    stops = PlanStop.objects.select_related("order").order_by("sequence", "id")
    routes = (
        PlanRoute.objects.select_related("driver")
        .prefetch_related(Prefetch("stops", queryset=stops))
        .order_by("driver__name", "driver_id")
    )
    left_out = PlanLeftOut.objects.select_related("order").order_by("order__external_ref", "id")
    return plans.prefetch_related(
        Prefetch("routes", queryset=routes), Prefetch("left_out", queryset=left_out)
    )


def plan_list(
    *, organization_id: UUID | str, day: date | None = None, status: str | None = None
) -> QuerySet[Plan]:
    """The organization's plans, newest first, with their routes and left-out orders."""
    plans = Plan.objects.filter(organization_id=organization_id)
    if day is not None:
        plans = plans.filter(date=day)
    if status:
        plans = plans.filter(status=status)
    return _with_contents(plans).order_by("-created_at", "-id")


def plan_page(
    *,
    organization_id: UUID | str,
    day: date | None,
    status: str | None,
    page: int,
    page_size: int,
) -> Page[Plan]:
    return page_of(
        plan_list(organization_id=organization_id, day=day, status=status),
        page=page,
        page_size=page_size,
    )


def plan_get(*, organization_id: UUID | str, plan_id: UUID | str) -> Plan:
    """The organization's plan with its contents; 404 `Plan not found` for an unknown,
    malformed or another organization's id."""
    parsed = parse_uuid(plan_id)
    plan = (
        _with_contents(Plan.objects.filter(organization_id=organization_id, pk=parsed)).first()
        if parsed
        else None
    )
    if plan is None:
        raise PlanNotFound()
    return plan


def route_get(*, plan: Plan, route_id: UUID | str) -> PlanRoute:
    """A route of `plan` with its stops, as a move answers it."""
    return (
        PlanRoute.objects.select_related("driver")
        .prefetch_related(
            Prefetch(
                "stops", queryset=PlanStop.objects.select_related("order").order_by("sequence")
            )
        )
        .get(plan=plan, pk=route_id)
    )


def drivers_with_dispatch(*, organization_id: UUID | str, drivers: list[Driver]) -> list[Driver]:
    """`drivers`, each given `zone_ids` (the zones it serves; empty: every zone) and
    `effective_capacity` (what plans use: its own, else the vehicle default, else 20)."""
    # Read, not created: a GET writes nothing; without a policy its default applies.
    policy = SlotPolicy.objects.filter(organization_id=organization_id).first()
    vehicle_capacity = (
        default_vehicle_capacity() if policy is None else policy.default_vehicle_capacity
    )
    served: dict[UUID, list[UUID]] = {}
    for driver_id, zone_id in (
        DriverZone.objects.filter(driver__in=[driver.id for driver in drivers])
        .order_by("zone__name", "zone_id")
        .values_list("driver_id", "zone_id")
    ):
        served.setdefault(driver_id, []).append(zone_id)
    for driver in drivers:
        driver.zone_ids = served.get(driver.id, [])
        driver.effective_capacity = driver_capacity(driver, vehicle_capacity)
    return drivers
