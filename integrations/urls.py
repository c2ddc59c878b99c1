from django.urls import include, path

from delivery.routing import route
from integrations import apis

ORG = "manage/organizations/<str:org_id>"

urlpatterns = [
    path("", include("integrations.partner.urls")),
    path("", include("integrations.erp.urls")),
    *route(f"{ORG}/orders", apis.ManagedOrdersApi.as_view()),
    *route(f"{ORG}/orders/<str:order_id>", apis.ManagedOrderDetailApi.as_view()),
    *route(f"{ORG}/orders/<str:order_id>/transition", apis.ManagedOrderTransitionApi.as_view()),
    *route(f"{ORG}/orders/<str:order_id>/simulate", apis.ManagedOrderSimulateApi.as_view()),
]
