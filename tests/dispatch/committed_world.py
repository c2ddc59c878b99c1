"""A day to commit: a zone with a depot, drivers, window orders, and ready plans written as rows
(what a solve stores), so commits are tested without waiting for the solver.

Every stop keeps the order's version as planning stores it (`order_version`), and its ETA is
given by the test; `route_check` reads a stored route back for the rules the contract names.
"""

from datetime import UTC, datetime, time, timedelta

from dispatch.models import Plan, PlanLeftOut, PlanRoute, PlanStatus, PlanStop
from dispatch.services.order_versions import order_version
from integrations.models import Order
from tests import builders

DAY = builders.SUNDAY
#: 08:00 to 12:00 on DAY in Berlin (+01:00 in January)
WINDOW = (datetime(2030, 1, 6, 7, 0, tzinfo=UTC), datetime(2030, 1, 6, 11, 0, tzinfo=UTC))
DEPOT = (52.52, 13.40)


def depot_zone(organization, name: str = "Mitte"):
    zone = builders.zone(organization, name)
    zone.depot_lat, zone.depot_lng, zone.depot_address = DEPOT[0], DEPOT[1], "Depot 1"
    zone.save(update_fields=["depot_lat", "depot_lng", "depot_address"])
    return zone


def window_order(organization, zone, ref: str, *, north_m: float = 500.0, **fields) -> Order:
    lat, lng = builders.offset(*DEPOT, north_m=north_m, east_m=200.0)
    return builders.order_row(
        organization,
        zone=zone,
        window=WINDOW,
        external_ref=ref,
        dropoff_lat=lat,
        dropoff_lng=lng,
        **fields,
    )


def shift(day=DAY, start: time = time(7, 0), end: time = time(19, 0)):
    # 08:00 to 20:00 in Berlin, as UTC instants
    return datetime.combine(day, start, tzinfo=UTC), datetime.combine(day, end, tzinfo=UTC)


def ready_plan(organization, zones, routes: dict, *, unassigned=(), day=DAY) -> Plan:
    """A `ready` plan of `day` over `zones`: `routes` maps each driver to its orders in sequence,
    each stop 10 minutes after the previous from 08:10 (Berlin); `unassigned` are left out with
    reason `capacity`."""
    plan = Plan.objects.create(
        organization=organization,
        date=day,
        zone_ids=sorted((zone.id for zone in zones), key=str),
        request_key=f"test-{Plan.objects.count()}",
        status=PlanStatus.READY,
        origin=datetime.combine(day, time(0), tzinfo=UTC) - timedelta(hours=1),
        solver_ms=1,
        solved_at=datetime.combine(day, time(0), tzinfo=UTC) - timedelta(days=1),
    )
    start, end = shift(day)
    for driver, orders in routes.items():
        route = PlanRoute.objects.create(
            plan=plan,
            driver=driver,
            date=day,
            zone=zones[0],
            vehicle_type=driver.vehicle_type,
            capacity=20,
            shift_start=start,
            shift_end=end,
            depot_lat=DEPOT[0],
            depot_lng=DEPOT[1],
            start_at=start,
            end_at=start + timedelta(hours=2),
        )
        for sequence, order in enumerate(orders, start=1):
            order.refresh_from_db()
            PlanStop.objects.create(
                plan=plan,
                route=route,
                order=order,
                sequence=sequence,
                eta=start + timedelta(minutes=10 * sequence),
                window_start=WINDOW[0],
                window_end=WINDOW[1],
                lat=order.dropoff_lat,
                lng=order.dropoff_lng,
                service_seconds=240,
                order_version=order_version(order),
            )
    for order in unassigned:
        order.refresh_from_db()
        PlanLeftOut.objects.create(
            plan=plan,
            order=order,
            reason="capacity",
            window_start=WINDOW[0],
            window_end=WINDOW[1],
            order_version=order_version(order),
        )
    return plan


def committed_routes(organization, day=DAY) -> dict:
    """driver name -> external refs in sequence, over every committed plan of `day`."""
    routes: dict[str, list[str]] = {}
    for route in PlanRoute.objects.filter(
        plan__organization=organization, date=day, plan__status=PlanStatus.COMMITTED
    ).select_related("driver"):
        assert route.driver.name not in routes, "a driver with two routes of one day"
        routes[route.driver.name] = [
            stop.order.external_ref
            for stop in route.stops.select_related("order").order_by("sequence")
        ]
    return routes


def route_check(route: PlanRoute) -> None:
    """The stored route keeps its own promises: stops numbered from 1, ETAs in sequence, none
    before its window opens."""
    stops = list(route.stops.order_by("sequence"))
    assert [stop.sequence for stop in stops] == list(range(1, len(stops) + 1))
    etas = [stop.eta for stop in stops]
    assert etas == sorted(etas)
    for stop in stops:
        assert stop.eta >= stop.window_start
