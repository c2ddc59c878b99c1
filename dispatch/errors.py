"""Errors of dispatch (contract "Dispatch"); docs/contract.md "Error codes" lists each code."""

from delivery.errors import BadRequest, Conflict, NotFound


class PlanNotFound(NotFound):
    code = "plan_not_found"
    default_message = "Plan not found"


class RouteNotFound(NotFound):
    code = "route_not_found"
    default_message = "Route not found"


class ZoneHasNoDepot(BadRequest):
    """Neither the zone's depot nor the slot policy's default pickup address (geocoded)."""

    code = "zone_has_no_depot"

    def __init__(self, zone_name: str):
        super().__init__(f"Zone {zone_name} has no depot")


class NoOrdersToPlan(BadRequest):
    """A plan for a day (and zones) without a single order to route or exclude."""

    code = "no_orders_to_plan"

    def __init__(self, day):
        super().__init__(f"No orders to plan on {day.isoformat()}")


class PlanNotReady(Conflict):
    """Moving (or committing) a plan that is not `ready`."""

    code = "plan_not_ready"

    def __init__(self, status: str):
        super().__init__(f"Plan is {status}")


class OrderNotInPlan(BadRequest):
    """A move names an order that is neither a stop nor unassigned in the plan."""

    code = "order_not_in_plan"

    def __init__(self, external_ref: str):
        super().__init__(f"Order {external_ref} is not in this plan")


class OrderExcluded(BadRequest):
    """A move names an order the plan excluded (click & collect is never routed)."""

    code = "order_excluded"

    def __init__(self, external_ref: str):
        super().__init__(f"Order {external_ref} is excluded from routing")


class OrderWithoutCoordinates(BadRequest):
    """A move of an order without dropoff coordinates onto a route: no stop can be timed."""

    code = "order_without_coordinates"

    def __init__(self, external_ref: str):
        super().__init__(f"Order {external_ref} has no coordinates")
