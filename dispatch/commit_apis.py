"""Management API of committing plans (contract "Dispatch", "Commit"), and the order transition
as dispatch serves it: an order assigned by hand joins its driver's route of the day."""

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from delivery.schema import errors
from dispatch import commit_examples as examples
from dispatch import selectors
from dispatch.commit_serializers import PlanCommitOutput
from dispatch.services import committing, routes_of_day
from integrations import apis as order_apis
from tenants.api_bases import ManagementApiView


class PlanCommitApi(ManagementApiView):
    @extend_schema(
        summary="Commit a ready plan",
        request=None,
        responses={200: PlanCommitOutput, **errors(401, 404, 409)},
        examples=examples.COMMIT,
    )
    def post(self, request, org_id, plan_id):
        """Assigns the plan's orders to its drivers, in one transaction: each order moves to
        `assigned` with its route, sequence and `eta` (the partner's `order.assigned` carries the
        driver and the ETA). Each order is locked and checked again first: one that changed since
        planning is skipped and listed with why (`cancelled`, `failed`, `delivered`, `started`,
        `reassigned`, `rescheduled`, `driver_inactive`, `driver_busy`), never overwritten. The
        plan supersedes the committed plan of its date whose zones overlap; an order moved to
        another driver goes through `dispatching` and gets a new `order.assigned`; an order kept
        by its driver gets no second event; a started stop (picked up, in transit) never moves
        and stays first on its driver's route. An order the plan leaves unassigned that was
        assigned goes back to `dispatching`.

        For an organization admin with a bearer token (401 `Invalid or missing token`).

        Errors:

        - 404 `Organization not found`, `Plan not found`

        - 409 `Plan is <status>` (only a `ready` plan is committed)"""
        organization = self.get_organization()
        result = committing.plan_commit(organization_id=organization.id, plan_id=plan_id)
        result.plan = selectors.plan_get(organization_id=organization.id, plan_id=result.plan.id)
        return Response(PlanCommitOutput(result).data)


class ManagedOrderTransitionApi(order_apis.ManagedOrderTransitionApi):
    """The management transition (integrations), with `assigned` putting the order at the end of
    its driver's route of the day with an ETA (contract "Dispatch", "Manual assignment")."""

    def order_move(self, **move) -> None:
        # The base's keyword arguments, as routes_of_day.order_move takes them.
        routes_of_day.order_move(**move)
