"""The public tracking API (contract "Tracking"): no key, limited per client address (contract "Rate
limits")."""

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from delivery.schema import errors
from delivery.throttling import ClientAddressThrottle
from tenants.api_bases import PublicApiView
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
        responses={200: TrackingOutput, **errors(404, 429)},
    )
    def get(self, request, token):
        order = selectors.tracking_order_get(tracking_token=token)
        response = Response(TrackingOutput(order).data)
        # The answer changes with every status change and is no one else's business.
        response["Cache-Control"] = "no-store"
        return response
