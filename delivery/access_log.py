"""One access line per request on the `delivery.access` logger (docs/operations.md "Logs").

The line names the route (the URL pattern, as the metrics label it), never the raw path: paths
carry tracking and invite tokens, which are secrets. The caller's organization is named by the
code that identified it (`attribute_request`): an API key's authentication, a management view
once it checked the organization in its path, Django admin for an admin of one organization.
`LOG_LEVEL` or the `LOGGING` setting turns the line off like any other logger.
"""

import logging
import time

from delivery.metrics import route_of

logger = logging.getLogger("delivery.access")

#: the attribute of the Django request that `attribute_request` fills
CALLER_ATTRIBUTE = "access_log_caller"
CALLER_FIELDS = ("organizationId", "apiKeyId", "userId")


def attribute_request(request, **caller) -> None:
    """Names who made `request` (a Django or DRF request) on its access line: any of
    `organizationId`, `apiKeyId`, `userId`. Ids only; never a secret."""
    django_request = getattr(request, "_request", request)
    known = django_request.__dict__.setdefault(CALLER_ATTRIBUTE, {})
    known.update({name: str(value) for name, value in caller.items() if value is not None})


class AccessLogMiddleware:
    """Logs the request's method, route, status, duration and caller once it is answered.

    Inside RequestIdMiddleware, so the line carries the request id; outside everything else,
    so it sees the status the client gets (errors already turned into their JSON body)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not logger.isEnabledFor(logging.INFO):
            return self.get_response(request)
        started = time.perf_counter()
        response = self.get_response(request)
        duration_ms = round((time.perf_counter() - started) * 1000, 1)
        route = route_of(request)
        caller = getattr(request, CALLER_ATTRIBUTE, {})
        fields = {
            "method": request.method,
            "route": route,
            "status": response.status_code,
            "durationMs": duration_ms,
            **{name: caller.get(name) for name in CALLER_FIELDS},
        }
        named = "".join(
            f" {name}={caller[name]}" for name in CALLER_FIELDS if caller.get(name) is not None
        )
        logger.info(
            "%s %s %s %sms%s",
            request.method,
            route,
            response.status_code,
            duration_ms,
            named,
            extra={"fields": fields},
        )
        return response
