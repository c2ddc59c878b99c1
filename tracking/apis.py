"""The public tracking API (contract "Tracking"): no key, limited per client address (contract "Rate
limits")."""

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from delivery.schema import errors
from delivery.throttling import ClientAddressThrottle
from tenants.api_bases import PublicApiView
from tracking import openapi_examples as examples
from tracking import selectors
from tracking.serializers import TrackingOutput

#: the limiter group shared by the API and the page: guessing tokens costs the same on both
RATE_LIMIT_GROUP = "tracking"


class TrackingApi(PublicApiView):
    throttle_classes = [ClientAddressThrottle]
    rate_limit_group = RATE_LIMIT_GROUP
    rate_limit_setting = "TRACKING_RATE_LIMIT"

    @extend_schema(
        tags=["tracking"],
        operation_id="track_order",
        summary="Track an order (public)",
        responses={200: TrackingOutput, **errors(404, 429)},
        examples=examples.TRACKING,
    )
    def get(self, request, token):
        """Where an order stands, for its recipient: status, delivery window, the driver's first
        name once assigned, and every status change oldest first; while a driver has it, the ETA
        rounded to 5 minutes and a window 10 minutes either side, in transit how many stops come
        before, and once delivered when. Nothing private (no recipient, phone, address,
        coordinates, driver's position or other stops). The answer is not cached
        (`Cache-Control: no-store`); the page `GET /track/<token>` shows the same in HTML.

        Called by the recipient's browser or app with the tracking token of the order; no
        credentials (`TRACKING_RATE_LIMIT` per client address, default 120 a minute).

        Errors: 404 `Order not found` (unknown token); 429 `Too many requests`."""
        order = selectors.tracking_order_get(tracking_token=token)
        progress = selectors.tracking_progress(order=order)
        response = Response(TrackingOutput(order, context={"progress": progress}).data)
        # The answer changes with every status change and is no one else's business.
        response["Cache-Control"] = "no-store"
        return response
