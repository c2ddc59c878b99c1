"""Routes of committing plans and of the order transition dispatch serves (contract "Dispatch")."""

from delivery.routing import route
from dispatch import commit_apis

ORG = "manage/organizations/<str:org_id>"

urlpatterns = [
    *route(
        f"{ORG}/dispatch/plans/<str:plan_id>/commit",
        commit_apis.PlanCommitApi.as_view(),
    ),
    *route(
        f"{ORG}/orders/<str:order_id>/transition",
        commit_apis.ManagedOrderTransitionApi.as_view(),
    ),
]
