from django.urls import include, path

from delivery.routing import route
from integrations import apis

ORG = "manage/organizations/<str:org_id>"

urlpatterns = [
    # Under a prefix of their own, a request of another family skips a whole include at once
    # (an unprefixed include is walked pattern by pattern on every request that misses it).
    path("integrations/erp/", include("integrations.erp.urls")),
    path("integrations/", include("integrations.partner.urls")),
    *route(f"{ORG}/orders", apis.ManagedOrdersApi.as_view()),
    *route(f"{ORG}/orders/<str:order_id>", apis.ManagedOrderDetailApi.as_view()),
    # .../orders/<id>/transition is served by dispatch (dispatch/urls.py): an assigned order
    # joins its driver's route of the day there.
    *route(f"{ORG}/orders/<str:order_id>/simulate", apis.ManagedOrderSimulateApi.as_view()),
]
