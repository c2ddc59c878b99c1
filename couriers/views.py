"""The courier web app (contract "Couriers", "The courier web app"): one page for a driver's
phone over the courier API.

It loads nothing from anywhere: its style and script are inline, held to that by a Content
Security Policy with a per-response nonce. The page carries no data of its own: the script signs
in with the driver's token (kept in the phone's localStorage) and reads everything from
`/api/courier/...`.
"""

import secrets

from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_safe

from integrations.models import FailureReason

#: the script's timings, in milliseconds: retrying the queue, refreshing the route, batching
#: positions
SCRIPT_TIMINGS = {"retryMs": 15_000, "refreshMs": 60_000, "locationBatchMs": 60_000}


def _content_security_policy(nonce: str) -> str:
    return "; ".join(
        (
            "default-src 'none'",
            f"script-src 'nonce-{nonce}'",
            f"style-src 'nonce-{nonce}'",
            "connect-src 'self'",
            # the app's own service worker, which keeps the page for opening it offline
            "worker-src 'self'",
            "manifest-src 'none'",
            # data: the thumbnails of photos taken, read from the phone before they are sent
            "img-src 'self' data:",
            "base-uri 'none'",
            "form-action 'none'",
            "frame-ancestors 'none'",
        )
    )


@require_safe
def courier_app(request):
    nonce = secrets.token_urlsafe(16)
    config = {
        "apiBase": "/api/courier",
        "serviceWorker": reverse("courier-app-worker"),
        "failureReasons": [
            {"value": value, "label": label} for value, label in FailureReason.choices
        ],
        **SCRIPT_TIMINGS,
    }
    response = render(request, "couriers/app.html", {"config": config, "csp_nonce": nonce})
    response["Content-Security-Policy"] = _content_security_policy(nonce)
    response["Referrer-Policy"] = "no-referrer"
    response["X-Robots-Tag"] = "noindex, nofollow"
    # The page is the same for every driver and holds no data; no-cache lets a new version in.
    response["Cache-Control"] = "no-cache"
    return response


@require_safe
def courier_service_worker(request):
    """The script that keeps the app's page for opening it offline (scope `/courier/`)."""
    response = render(
        request, "couriers/service_worker.js", content_type="text/javascript; charset=utf-8"
    )
    response["Cache-Control"] = "no-cache"
    return response
