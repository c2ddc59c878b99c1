from delivery.routing import route
from zones import apis

urlpatterns = [
    *route("promises/resolve-zone", apis.ResolveZoneApi.as_view()),
    *route(
        "integrations/partner-a/zones/export",
        apis.ZonesExportApi.as_view(integration="partner-a"),
    ),
    *route(
        "integrations/partner-b/zones/export",
        apis.ZonesExportApi.as_view(integration="partner-b"),
    ),
    *route(
        "integrations/partner-c/zones/export",
        apis.ZonesExportApi.as_view(integration="partner-c"),
    ),
    *route("manage/organizations/<str:org_id>/zones", apis.ZonesApi.as_view()),
    *route("manage/organizations/<str:org_id>/zones/<str:zone_id>", apis.ZoneDetailApi.as_view()),
    *route(
        "manage/organizations/<str:org_id>/zones/<str:zone_id>/blackouts",
        apis.ZoneBlackoutsApi.as_view(),
    ),
    *route(
        "manage/organizations/<str:org_id>/zones/<str:zone_id>/blackouts/<str:blackout_id>",
        apis.ZoneBlackoutDetailApi.as_view(),
    ),
]
