"""The base view of the courier kind of caller, beside those of tenants/api_bases.py."""

from django.conf import settings
from rest_framework.throttling import BaseThrottle
from rest_framework.views import APIView

from couriers.authentication import CourierTokenAuthentication
from delivery.ratelimit import enforce_rate_limit


class CourierThrottle(BaseThrottle):
    """COURIER_RATE_LIMIT per driver (docs/contract.md "Rate limits"), counted in Redis."""

    @staticmethod
    def counts(view_class, method: str) -> bool:
        return True

    def allow_request(self, request, view) -> bool:
        enforce_rate_limit(
            request,
            group="courier",
            key=str(request.auth.driver_id),
            rate=settings.COURIER_RATE_LIMIT,
        )
        return True


class CourierApiView(APIView):
    """A driver's app with its access token (`/api/courier/...`, contract "Couriers")."""

    authentication_classes = [CourierTokenAuthentication]
    throttle_classes = [CourierThrottle]
    openapi_tags = ["courier"]

    @property
    def driver(self):
        return self.request.auth.driver

    @property
    def actor(self) -> str:
        """Whom an order's status history names for the changes this request makes."""
        return f"driver {self.driver.name} ({self.driver.id})"
