from delivery.routing import route
from dispatch import apis

urlpatterns = [
    *route("manage/organizations/<str:org_id>/dispatch-policy", apis.DispatchPolicyApi.as_view()),
    *route("manage/organizations/<str:org_id>/drivers", apis.DriversApi.as_view()),
    *route(
        "manage/organizations/<str:org_id>/drivers/<str:driver_id>", apis.DriverDetailApi.as_view()
    ),
    *route("manage/organizations/<str:org_id>/dispatch/plans", apis.PlansApi.as_view()),
    *route(
        "manage/organizations/<str:org_id>/dispatch/plans/<str:plan_id>",
        apis.PlanDetailApi.as_view(),
    ),
    *route(
        "manage/organizations/<str:org_id>/dispatch/plans/<str:plan_id>/moves",
        apis.PlanMovesApi.as_view(),
    ),
]
