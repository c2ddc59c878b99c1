from delivery.routing import route
from webhooks import apis

urlpatterns = [
    *route(
        "manage/organizations/<str:org_id>/webhook-deliveries",
        apis.DeliveriesApi.as_view(),
    ),
    *route(
        "manage/organizations/<str:org_id>/webhook-deliveries/recover",
        apis.DeliveriesRecoverApi.as_view(),
    ),
    *route(
        "manage/organizations/<str:org_id>/webhook-deliveries/<str:delivery_id>/redeliver",
        apis.DeliveryRedeliverApi.as_view(),
    ),
    *route(
        "manage/organizations/<str:org_id>/api-keys/<str:key_id>/test-webhook",
        apis.ApiKeyTestWebhookApi.as_view(),
    ),
]
