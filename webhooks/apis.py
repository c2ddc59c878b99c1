"""Management API of webhook deliveries (contract "Webhooks", "Management API")."""

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.response import Response

from delivery.schema import ErrorBody, error_example, errors
from tenants import selectors as tenant_selectors
from tenants.api_bases import ManagementApiView
from webhooks import probes, selectors, services
from webhooks.errors import WebhookUrlMissing
from webhooks.serializers import (
    DeliveryListInput,
    DeliveryOutput,
    DeliveryPageOutput,
    RecoverInput,
    RecoverOutput,
    TestWebhookOutput,
)


class DeliveriesApi(ManagementApiView):
    @extend_schema(
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
            organization_id=organization.id,
            status=params.get("status"),
            page=params["page"],
            page_size=params["pageSize"],
        )
        return Response(DeliveryPageOutput(page).data)


class DeliveryRedeliverApi(ManagementApiView):
    @extend_schema(request=None, responses={202: DeliveryOutput, **errors(401, 404)})
    def post(self, request, org_id, delivery_id):
        delivery = selectors.delivery_get(
            organization_id=self.get_organization().id, delivery_id=delivery_id
        )
        delivery = services.delivery_redeliver(delivery=delivery)
        return Response(DeliveryOutput(delivery).data, status=202)


class ApiKeyTestWebhookApi(ManagementApiView):
    @extend_schema(
        request=None,
        responses={
            200: TestWebhookOutput,
            **errors(401, 404, 409),
            400: OpenApiResponse(
                ErrorBody,
                description="API key has no webhook URL",
                examples=[error_example(400, WebhookUrlMissing())],
            ),
        },
    )
    def post(self, request, org_id, key_id):
        """Sends a signed `webhook.test` event to the key's webhookUrl at once (one attempt,
        recorded as a delivery) and answers how it went: `delivered` is true for a 2xx. 400 `API key
        has no webhook URL`; 409 `API key is revoked`."""
        api_key = tenant_selectors.api_key_get(
            organization_id=self.get_organization().id, key_id=key_id
        )
        result = probes.api_key_webhook_test(api_key=api_key)
        return Response(TestWebhookOutput(result).data)


class DeliveriesRecoverApi(ManagementApiView):
    @extend_schema(request=RecoverInput, responses={202: RecoverOutput, **errors(400, 401, 404)})
    def post(self, request, org_id):
        """Queues again every delivery of the organization that ended `failed` (its last attempt) in
        [since, until) — of one key with `keyId` — oldest event first, each once; a new round of
        attempts to the key's current webhookUrl. `since` is required; `until` (default now) must be
        after it; date-times are ISO 8601 (UTC without an offset). An unknown keyId: 404 `API key
        not found`."""
        organization = self.get_organization()
        serializer = RecoverInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        api_key_id = None
        if data.get("keyId") is not None:
            api_key_id = tenant_selectors.api_key_get(
                organization_id=organization.id, key_id=data["keyId"]
            ).id
        queued = services.deliveries_recover(
            organization_id=organization.id,
            since=data["since"],
            until=data.get("until"),
            api_key_id=api_key_id,
        )
        return Response(RecoverOutput({"queued": queued}).data, status=202)
