from delivery.routing import route
from tenants import apis

urlpatterns = [
    *route("auth/token", apis.AuthTokenApi.as_view()),
    *route("manage/organizations/<str:org_id>/api-keys", apis.ManagedApiKeysApi.as_view()),
    *route(
        "manage/organizations/<str:org_id>/api-keys/<str:key_id>",
        apis.ManagedApiKeyDetailApi.as_view(),
    ),
    *route(
        "manage/organizations/<str:org_id>/api-keys/<str:key_id>/webhook-secret/roll",
        apis.ApiKeyWebhookSecretRollApi.as_view(),
    ),
]
