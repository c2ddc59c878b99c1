"""Management API of webhook deliveries (contract "Webhooks", "Management API")."""

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.response import Response

from delivery.schema import ErrorBody, error_example, errors, page_parameters
from tenants import selectors as tenant_selectors
from tenants.api_bases import ManagementApiView
from webhooks import openapi_examples as examples
from webhooks import probes, selectors, services
from webhooks import serializers as delivery_serializers
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
        summary="List webhook deliveries",
        parameters=[
            OpenApiParameter("status", str, enum=["pending", "delivered", "failed"]),
            *page_parameters(
                max_page_size=delivery_serializers.MAX_PAGE_SIZE,
                default_page_size=delivery_serializers.DEFAULT_PAGE_SIZE,
            ),
        ],
        responses={200: DeliveryPageOutput, **errors(400, 401, 404)},
        examples=examples.DELIVERY_LIST,
    )
    def get(self, request, org_id):
        """The organization's webhook deliveries, newest first, one page at a time, optionally only
        those `pending`, `delivered` or `failed`: for each, the event, the URL, how many attempts
        were made, the last status code or error and when the next attempt is due.

        Called by an organization admin with a bearer token.

        Errors: 400 an unknown status, a page or pageSize out of range; 401 `Invalid or missing
        token`; 404 `Organization not found`."""
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
    @extend_schema(
        summary="Redeliver a webhook delivery",
        request=None,
        responses={202: DeliveryOutput, **errors(401, 404)},
        examples=examples.DELIVERY_REDELIVER,
    )
    def post(self, request, org_id, delivery_id):
        """Starts a new round of attempts for one delivery at once, on the full retry schedule, to
        the key's current webhookUrl (so a corrected URL is used), whatever its status; answers 202
        with the delivery, now `pending`. Takes no body.

        Called by an organization admin with a bearer token.

        Errors: 401 `Invalid or missing token`; 404 `Organization not found`, `Delivery not
        found`."""
        delivery = selectors.delivery_get(
            organization_id=self.get_organization().id, delivery_id=delivery_id
        )
        delivery = services.delivery_redeliver(delivery=delivery)
        return Response(DeliveryOutput(delivery).data, status=202)


class ApiKeyTestWebhookApi(ManagementApiView):
    @extend_schema(
        summary="Send a test event to an API key's webhook URL",
        request=None,
        examples=examples.TEST_WEBHOOK,
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
        """Sends a signed `webhook.test` event to the key's webhookUrl at once (one attempt, made
        by the worker and recorded as a delivery) and answers how it went: `delivered` is true
        for a 2xx. Waits for the attempt at most 2 s: a receiver that has not answered by then
        gets `delivered` false, `statusCode` null and the error `Timed out after 2 s waiting for
        the receiver; the attempt goes on and is recorded in the deliveries` (or `Not sent within
        2 s ...` when no worker could start it yet); the attempt goes on. Takes no body.

        Called by an organization admin with a bearer token, to check a receiver before going live.

        Errors: 400 `API key has no webhook URL`; 401 `Invalid or missing token`; 404 `Organization
        not found`, `API key not found`; 409 `API key is revoked`."""
        api_key = tenant_selectors.api_key_get(
            organization_id=self.get_organization().id, key_id=key_id
        )
        result = probes.api_key_webhook_test(api_key=api_key)
        return Response(TestWebhookOutput(result).data)


class DeliveriesRecoverApi(ManagementApiView):
    @extend_schema(
        summary="Redeliver every delivery that failed in a time range",
        request=RecoverInput,
        responses={202: RecoverOutput, **errors(400, 401, 404)},
        examples=examples.DELIVERIES_RECOVER,
    )
    def post(self, request, org_id):
        """Queues again every delivery of the organization that ended `failed` (its last attempt) in
        [since, until) — of one key with `keyId` — oldest event first, each once; a new round of
        attempts to the key's current webhookUrl. `since` is required; `until` (default now) must be
        after it; date-times are ISO 8601 (UTC without an offset). Answers 202 with how many
        deliveries were queued.

        Called by an organization admin with a bearer token, typically after a receiver's outage.

        Failed deliveries are kept 90 days after their last attempt (WEBHOOK_FAILED_RETENTION_DAYS),
        so `since` may be at most that long ago.

        Errors: 400 `since is required`, `until must be after since`, a date-time that is not ISO
        8601, `since must not be more than 90 days ago: failed deliveries are kept 90 days`; 401
        `Invalid or missing token`; 404 `Organization not found`, `API key not found` (a keyId not
        of the organization)."""
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
