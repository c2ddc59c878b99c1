"""The dispatcher's page in Django admin (contract "Dispatch", "Django admin"): per date and zone,
the newest plan of that day drawn as a map, each route's stops with ETAs in the zone's time, the
unassigned with their reasons and the excluded; stops move before committing, and Plan and Commit
buttons start a plan and commit it.

The views only translate: the services make plans (`planning.plan_request`, which queues the
solve), move stops (`moves.plan_move`) and commit (`committing.plan_commit`); what they refuse
is shown as an admin message. Scoping is admin's own: plans through this admin's queryset, zones
through the zones' admin, both `OrganizationScopedAdmin`s.
"""

from dataclasses import dataclass, field
from datetime import date
from urllib.parse import urlencode

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html
from django.views.decorators.http import require_POST

from delivery.errors import ApplicationError
from delivery.timezones import zone_tz
from dispatch import admin_map, selectors
from dispatch.models import Plan, PlanLeftOut, PlanRoute, PlanStatus, PlanStop
from dispatch.services import committing, moves, planning
from tenants.admin_display import calendar_day, utc_time, zone_period, zone_time
from tenants.admin_scoping import OrganizationScopedAdmin, ReadOnlyAdminMixin
from zones.models import Zone

PAGE_TEMPLATE = "admin/dispatch/dispatcher.html"
#: how often the page reloads itself while its plan is being solved
PLANNING_REFRESH_SECONDS = 2
DATE_MESSAGE = "date must be a valid date (format: YYYY-MM-DD)"


@dataclass
class StopRow:
    stop: PlanStop
    eta: str | None
    window: str | None

    @property
    def late(self) -> bool:
        """Reached after its window closes (a move the dispatcher accepted)."""
        return self.stop.eta > self.stop.window_end


@dataclass
class RouteRow:
    route: PlanRoute
    colour: str
    timezone_name: str
    stops: list[StopRow] = field(default_factory=list)

    @property
    def period(self) -> str | None:
        return zone_period(self.route.start_at, self.route.end_at, self.timezone_name)

    @property
    def travel_minutes(self) -> int:
        return round(self.route.travel_seconds / 60)

    @property
    def past_shift(self) -> bool:
        return self.route.end_at is not None and self.route.end_at > self.route.shift_end

    @property
    def distance_km(self) -> float:
        return round(self.route.distance_meters / 1000, 1)


@dataclass
class LeftOutRow:
    left_out: PlanLeftOut
    window: str | None


@dataclass
class Board:
    """What the page shows of a plan."""

    plan: Plan
    zone_names: list[str]
    routes: list[RouteRow]
    unassigned: list[LeftOutRow]
    excluded: list[LeftOutRow]
    svg: str
    assigned: int
    travel_minutes: int
    distance_km: float


class PlanAdmin(ReadOnlyAdminMixin, OrganizationScopedAdmin):
    """Plans are written by the services only: the list links each to the dispatcher's page."""

    list_display = ("day", "status", "routing", "created", "solver_ms")
    #: the date links to the dispatcher's page, the plan's own page is only its figures
    list_display_links = None
    fields = ("date", "status", "routing", "error", "solver_ms", "created_at", "solved_at")
    list_filter = ("status",)
    date_hierarchy = "date"
    change_list_template = "admin/dispatch/plan/change_list.html"

    @admin.display(description="Date", ordering="date")
    def day(self, plan: Plan):
        query = urlencode({"plan": str(plan.id)})
        return format_html(
            '<a href="{}?{}">{}</a>',
            reverse("admin:dispatch_plan_dispatcher"),
            query,
            calendar_day(plan.date),
        )

    @admin.display(description="Created", ordering="created_at")
    def created(self, plan: Plan):
        return utc_time(plan.created_at)

    def get_urls(self):
        site = self.admin_site
        return [
            path(
                "dispatcher/",
                site.admin_view(self.dispatcher_view),
                name="dispatch_plan_dispatcher",
            ),
            path(
                "dispatcher/plan/",
                site.admin_view(require_POST(self.plan_view)),
                name="dispatch_plan_dispatcher_plan",
            ),
            path(
                "<str:plan_id>/dispatcher/move/",
                site.admin_view(require_POST(self.move_view)),
                name="dispatch_plan_dispatcher_move",
            ),
            path(
                "<str:plan_id>/dispatcher/commit/",
                site.admin_view(require_POST(self.commit_view)),
                name="dispatch_plan_dispatcher_commit",
            ),
            *super().get_urls(),
        ]

    def has_dispatch_permission(self, request, obj=None) -> bool:
        """Planning, moving and committing: whoever administers the plan's organization."""
        return self._allowed(request, obj)

    # ----- reading the request -----

    def _zones(self, request) -> list[Zone]:
        zone_admin = self.admin_site.get_model_admin(Zone)
        return list(
            zone_admin.get_queryset(request)
            .select_related("organization")
            .order_by("organization__name", "name", "id")
        )

    def _plan_or_404(self, request, plan_id: str) -> Plan:
        plan = self.get_object(request, plan_id)
        if plan is None:
            raise Http404("Plan not found")
        return plan

    def _zone_chosen(self, request, zones: list[Zone], plan: Plan | None) -> Zone | None:
        wanted = request.GET.get("zone") or request.POST.get("zone")
        if plan is not None:
            covered = [zone for zone in zones if zone.id in plan.zone_ids]
            chosen = next((zone for zone in covered if str(zone.id) == wanted), None)
            return chosen or (covered[0] if covered else None)
        if wanted:
            chosen = next((zone for zone in zones if str(zone.id) == wanted), None)
            if chosen is not None:
                return chosen
            messages.error(request, "Zone not found")
        return zones[0] if zones else None

    def _day_chosen(self, request, zone: Zone | None, plan: Plan | None) -> date:
        if plan is not None:
            return plan.date
        text = (request.GET.get("date") or request.POST.get("date") or "").strip()
        if text:
            try:
                return date.fromisoformat(text)
            except ValueError:
                messages.error(request, DATE_MESSAGE)
        # Today where the zone is: a dispatcher in Berlin plans Berlin's day.
        return timezone.now().astimezone(zone_tz(zone.timezone if zone else "UTC")).date()

    def _back(self, *, day: date | None, zone: Zone | None, plan: Plan | None = None):
        query = {}
        if day is not None:
            query["date"] = day.isoformat()
        if zone is not None:
            query["zone"] = str(zone.id)
        if plan is not None:
            query["plan"] = str(plan.id)
        url = reverse("admin:dispatch_plan_dispatcher")
        return HttpResponseRedirect(f"{url}?{urlencode(query)}" if query else url)

    # ----- the page -----

    def dispatcher_view(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        zones = self._zones(request)
        plan_id = request.GET.get("plan")
        plan = self._plan_or_404(request, plan_id) if plan_id else None
        zone = self._zone_chosen(request, zones, plan)
        day = self._day_chosen(request, zone, plan)
        if plan is None and zone is not None:
            plan = selectors.plan_of_zone_day(
                organization_id=zone.organization_id, zone_id=zone.id, day=day
            )
        board = None
        if plan is not None:
            plan = selectors.plan_get(organization_id=plan.organization_id, plan_id=plan.id)
            board = _board(plan, {item.id: item for item in zones})
        several_organizations = len({item.organization_id for item in zones}) > 1
        context = {
            **self.admin_site.each_context(request),
            "title": "Dispatch"
            if zone is None
            else f"Dispatch of {zone.name}, {calendar_day(day)}",
            "opts": self.model._meta,
            "zones": [
                (
                    item,
                    f"{item.organization.name}: {item.name}"
                    if several_organizations
                    else item.name,
                )
                for item in zones
            ],
            "zone": zone,
            "day": day,
            "plan": plan,
            "board": board,
            "movable": plan is not None and plan.status == PlanStatus.READY,
            "planning": plan is not None and plan.status == PlanStatus.PLANNING,
            "refresh_seconds": PLANNING_REFRESH_SECONDS,
            "zone_map": None if board is not None or zone is None else _zone_map(zone),
            "committed_at": _committed_at(plan, zone),
        }
        return TemplateResponse(request, PAGE_TEMPLATE, context)

    # ----- the buttons -----

    def plan_view(self, request):
        """Plan: a plan of the day over the chosen zone, its solve queued."""
        zones = self._zones(request)
        if not zones:
            raise PermissionDenied
        wanted = request.POST.get("zone")
        zone = next((item for item in zones if str(item.id) == wanted), None)
        if zone is None:
            messages.error(request, "Zone not found")
            return self._back(day=None, zone=None)
        if not self.has_dispatch_permission(request, zone):
            raise PermissionDenied
        text = (request.POST.get("date") or "").strip()
        try:
            day = date.fromisoformat(text)
        except ValueError:
            messages.error(request, DATE_MESSAGE)
            return self._back(day=None, zone=zone)
        try:
            plan, created = planning.plan_request(
                organization_id=zone.organization_id, day=day, zone_ids=[zone.id]
            )
        except ApplicationError as refusal:
            messages.error(request, str(refusal))
            return self._back(day=day, zone=zone)
        if created:
            messages.info(request, f"Planning {zone.name} on {calendar_day(day)}.")
        else:
            messages.info(request, "This day is already being planned: that plan is shown.")
        return self._back(day=day, zone=zone, plan=plan)

    def move_view(self, request, plan_id: str):
        plan = self._plan_or_404(request, plan_id)
        if not self.has_dispatch_permission(request, plan):
            raise PermissionDenied
        zone = self._zone_chosen(request, self._zones(request), plan)
        back = self._back(day=plan.date, zone=zone, plan=plan)
        try:
            position = int(request.POST.get("position", ""))
        except ValueError:
            messages.error(request, "position must be a whole number")
            return back
        try:
            moved = moves.plan_move(
                plan=plan,
                order_id=request.POST.get("order", ""),
                route_id=request.POST.get("route", ""),
                position=position,
            )
        except ApplicationError as refusal:
            messages.error(request, str(refusal))
            return back
        route = selectors.route_get(plan=plan, route_id=moved.route.id)
        stop = next(item for item in route.stops.all() if item.sequence == position)
        messages.success(
            request,
            f"Order {stop.order.external_ref} is now stop {position} of {route.driver.name}'s "
            "route; the routes it left and joined are re-timed.",
        )
        for warning in moved.warnings:
            messages.warning(request, warning.message)
        return back

    def commit_view(self, request, plan_id: str):
        plan = self._plan_or_404(request, plan_id)
        if not self.has_dispatch_permission(request, plan):
            raise PermissionDenied
        zone = self._zone_chosen(request, self._zones(request), plan)
        back = self._back(day=plan.date, zone=zone, plan=plan)
        plan = selectors.plan_get(organization_id=plan.organization_id, plan_id=plan.id)
        refs = {
            stop.order_id: stop.order.external_ref
            for route in plan.routes.all()
            for stop in route.stops.all()
        }
        refs.update({item.order_id: item.order.external_ref for item in plan.left_out.all()})
        try:
            result = committing.plan_commit(organization_id=plan.organization_id, plan_id=plan.id)
        except ApplicationError as refusal:
            messages.error(request, str(refusal))
            return back
        messages.success(
            request,
            f"Plan committed: {result.assigned} orders assigned, {len(result.skipped)} skipped.",
        )
        if result.skipped:
            skipped = ", ".join(
                f"{refs.get(item.order_id, item.order_id)} ({item.reason})"
                for item in result.skipped
            )
            messages.warning(request, f"Skipped: {skipped}")
        return back


def _committed_at(plan: Plan | None, zone: Zone | None) -> str | None:
    if plan is None or plan.committed_at is None:
        return None
    return zone_time(plan.committed_at, zone.timezone if zone is not None else None)


def _map_zone(zone: Zone) -> admin_map.MapZone:
    rings = (zone.geodata or {}).get("coordinates") or [[]]
    return admin_map.MapZone(name=zone.name, ring=rings[0])


def _depot_point(zone: Zone) -> admin_map.MapPoint:
    return admin_map.MapPoint(
        zone.depot_lat, zone.depot_lng, "D", f"Depot of {zone.name}: {zone.depot_address}"
    )


def _zone_map(zone: Zone) -> str:
    """The zone alone (and its depot), before any plan of the day."""
    depots = [_depot_point(zone)] if zone.has_depot else []
    return admin_map.plan_map_svg(zones=[_map_zone(zone)], depots=depots, routes=[])


def _board(plan: Plan, zones_by_id: dict) -> Board:
    """The plan as the page shows it: times in each route's (or order's) zone, with its name."""
    plan_zones = [zones_by_id[zone_id] for zone_id in plan.zone_ids if zone_id in zones_by_id]
    fallback = plan_zones[0].timezone if plan_zones else "UTC"

    def timezone_of(zone_id) -> str:
        zone = zones_by_id.get(zone_id)
        return zone.timezone if zone is not None else fallback

    routes = []
    for index, route in enumerate(plan.routes.all()):
        row = RouteRow(route, admin_map.route_colour(index), timezone_of(route.zone_id))
        row.stops = [
            StopRow(
                stop,
                zone_time(stop.eta, row.timezone_name),
                zone_period(stop.window_start, stop.window_end, row.timezone_name),
            )
            for stop in route.stops.all()
        ]
        routes.append(row)
    unassigned, excluded = [], []
    for item in plan.left_out.all():
        window = zone_period(item.window_start, item.window_end, timezone_of(item.order.zone_id))
        (excluded if item.excluded else unassigned).append(LeftOutRow(item, window))

    depots = {}
    for route in plan.routes.all():
        depots.setdefault((route.depot_lat, route.depot_lng), route.zone_id)
    svg = admin_map.plan_map_svg(
        zones=[_map_zone(zone) for zone in plan_zones],
        depots=[
            admin_map.MapPoint(lat, lng, "D", f"Depot of {zones_by_id[zone_id].name}")
            if zone_id in zones_by_id
            else admin_map.MapPoint(lat, lng, "D", "Depot")
            for (lat, lng), zone_id in depots.items()
        ]
        or [_depot_point(zone) for zone in plan_zones if zone.has_depot],
        routes=[
            admin_map.MapRoute(
                colour=row.colour,
                depot=(row.route.depot_lat, row.route.depot_lng),
                stops=[
                    admin_map.MapPoint(
                        item.stop.lat,
                        item.stop.lng,
                        str(item.stop.sequence),
                        f"{row.route.driver.name}, stop {item.stop.sequence}: "
                        f"{item.stop.order.external_ref}, ETA {item.eta}",
                    )
                    for item in row.stops
                ],
            )
            for row in routes
        ],
        unassigned=[
            admin_map.MapPoint(
                row.left_out.order.dropoff_lat,
                row.left_out.order.dropoff_lng,
                "?",
                f"{row.left_out.order.external_ref}: {row.left_out.get_reason_display()}",
            )
            for row in unassigned
            if row.left_out.order.dropoff_lat is not None
            and row.left_out.order.dropoff_lng is not None
        ],
    )
    return Board(
        plan=plan,
        zone_names=[zone.name for zone in plan_zones],
        routes=routes,
        unassigned=unassigned,
        excluded=excluded,
        svg=svg,
        assigned=sum(len(row.stops) for row in routes),
        travel_minutes=round(sum(row.route.travel_seconds for row in routes) / 60),
        distance_km=round(sum(row.route.distance_meters for row in routes) / 1000, 1),
    )
