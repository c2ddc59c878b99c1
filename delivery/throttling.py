"""DRF throttle classes backed by django-ratelimit on Redis (contract "Rate limits")."""

from django.conf import settings
from rest_framework.throttling import BaseThrottle

from delivery.ratelimit import client_address, enforce_rate_limit


class ProvisioningThrottle(BaseThrottle):
    """The contract's per-endpoint hourly limits, counted against the caller's secret.

    The view names its limit per HTTP method in `rate_limits` (keys of PROVISIONING_RATE_LIMITS).
    """

    @staticmethod
    def counts(view_class, method: str) -> bool:
        return bool(view_class.rate_limits.get(method))

    def allow_request(self, request, view) -> bool:
        name = view.rate_limits.get(request.method)
        if name:
            enforce_rate_limit(
                request,
                group=f"provisioning:{name}",
                key=request.user.rate_limit_key,
                rate=settings.PROVISIONING_RATE_LIMITS[name],
            )
        return True


class ClientAddressThrottle(BaseThrottle):
    """Public endpoints (invites, tracking): counted per client address."""

    @staticmethod
    def counts(view_class, method: str) -> bool:
        return True

    def allow_request(self, request, view) -> bool:
        enforce_rate_limit(
            request,
            group=f"address:{view.rate_limit_group}",
            key=client_address(request),
            rate=getattr(settings, view.rate_limit_setting),
        )
        return True


class ApiKeyThrottle(BaseThrottle):
    """Integration and public endpoints: API_RATE_LIMIT per API key."""

    @staticmethod
    def counts(view_class, method: str) -> bool:
        return True

    def allow_request(self, request, view) -> bool:
        enforce_rate_limit(
            request, group="api-key", key=request.auth.key_id, rate=settings.API_RATE_LIMIT
        )
        return True


class ManagementThrottle(BaseThrottle):
    """Management API: MANAGEMENT_RATE_LIMIT per user (the bearer token's)."""

    @staticmethod
    def counts(view_class, method: str) -> bool:
        return True

    def allow_request(self, request, view) -> bool:
        enforce_rate_limit(
            request,
            group="management",
            key=str(request.user.pk),
            rate=settings.MANAGEMENT_RATE_LIMIT,
        )
        return True


def is_rate_limited(view_class, method: str) -> bool:
    """Whether a request of `method` to `view_class` is counted (and so reports RateLimit)."""
    return any(
        throttle.counts(view_class, method)
        for throttle in getattr(view_class, "throttle_classes", ())
        if hasattr(throttle, "counts")
    )
