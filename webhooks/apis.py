"""Management API of webhook deliveries (decisions §7, §11, §12)."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response

from delivery.schema import errors
from tenants import selectors as tenant_selectors
from tenants.api_bases import ManagementApiView
from webhooks import probes, selectors, services
from webhooks.serializers import (
    DeliveryListInput,
    DeliveryOutput,
    DeliveryPageOutput,
    TestWebhookOutput,
)

TAG = ["management"]


class DeliveriesApi(ManagementApiView):
    @extend_schema(
        tags=TAG,
        parameters=[
            OpenApiParameter("status", str, enum=["pending", "delivered", "failed"]),
            OpenApiParameter("page", int, description="From 1 (default 1)"),
            OpenApiParameter("pageSize", int, description="1 to 100 (default 50)"),
        ],
        responses={200: DeliveryPageOutput, **errors(400, 401, 404)},
    )
    def get(self, request, org_id):
        organization = self.get_organization()
        serializer = DeliveryListInput(data=request.query_params)
        serializer.is_valid(raise_exception=True)
        params = serializer.validated_data
        page = selectors.delivery_page(
            organization=organization,
            status=params.get("status"),
            page=params["page"],
            page_size=params["pageSize"],
        )
        return Response(DeliveryPageOutput(page).data)


class DeliveryRedeliverApi(ManagementApiView):
    @extend_schema(tags=TAG, request=None, responses={202: DeliveryOutput, **errors(401, 404)})
    def post(self, request, org_id, delivery_id):
        delivery = selectors.delivery_get(
            organization=self.get_organization(), delivery_id=delivery_id
        )
        delivery = services.delivery_redeliver(delivery=delivery)
        return Response(DeliveryOutput(delivery).data, status=202)


class ApiKeyTestWebhookApi(ManagementApiView):
    @extend_schema(
        tags=TAG,
        request=None,
        responses={200: TestWebhookOutput, **errors(400, 401, 404, 409)},
        description=(
            "Sends a signed `webhook.test` event to the key's webhookUrl at once (one attempt, "
            "recorded as a delivery) and answers how it went: `delivered` is true for a 2xx. "
            "400 `API key has no webhook URL`; 409 `API key is revoked`."
        ),
    )
    def post(self, request, org_id, key_id):
        api_key = tenant_selectors.api_key_get(organization=self.get_organization(), key_id=key_id)
        result = probes.api_key_webhook_test(api_key=api_key)
        return Response(TestWebhookOutput(result).data)
