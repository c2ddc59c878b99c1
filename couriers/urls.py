from couriers import apis
from delivery.routing import route

urlpatterns = [
    *route("courier/route", apis.CourierRouteApi.as_view()),
    *route("courier/photos", apis.CourierPhotosApi.as_view()),
    *route("courier/locations", apis.CourierLocationsApi.as_view()),
    *route("courier/orders/<str:order_id>/events", apis.CourierOrderEventsApi.as_view()),
    *route(
        "manage/organizations/<str:org_id>/orders/<str:order_id>/proof",
        apis.ManagedOrderProofApi.as_view(),
    ),
    *route(
        "manage/organizations/<str:org_id>/orders/<str:order_id>/reattempt",
        apis.ManagedOrderReattemptApi.as_view(),
    ),
    *route("proof-files/<str:token>", apis.ProofFileApi.as_view(), name="courier-proof-file"),
    *route(
        "manage/organizations/<str:org_id>/drivers/<str:driver_id>/access-token",
        apis.DriverAccessTokenApi.as_view(),
    ),
]
