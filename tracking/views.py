"""The public tracking page (contract "Tracking"): server-rendered HTML for recipients on a phone.

It loads nothing from anywhere: its style and its one script are inline, and a Content Security
Policy with a per-response nonce makes browsers hold it to that. Without JavaScript it is a
complete page; with it, it polls the tracking API and updates itself.
"""

import secrets

from django.conf import settings
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_safe

from delivery.errors import RateLimited
from delivery.ratelimit import client_address, enforce_rate_limit
from integrations.errors import OrderNotFound
from tracking import presentation, selectors
from tracking.apis import RATE_LIMIT_GROUP

#: how often the page's script asks the tracking API (a setting so tests can shorten it)
DEFAULT_POLL_INTERVAL_SECONDS = 15.0


def _poll_interval_ms() -> int:
    seconds = float(
        getattr(settings, "TRACKING_POLL_INTERVAL_SECONDS", DEFAULT_POLL_INTERVAL_SECONDS)
    )
    return max(100, round(seconds * 1000))


def _content_security_policy(nonce: str) -> str:
    return "; ".join(
        (
            "default-src 'none'",
            f"script-src 'nonce-{nonce}'",
            f"style-src 'nonce-{nonce}'",
            "connect-src 'self'",
            "img-src 'self'",
            "base-uri 'none'",
            "form-action 'none'",
            "frame-ancestors 'none'",
        )
    )


def _page_response(request, template: str, context: dict, *, status: int = 200):
    nonce = secrets.token_urlsafe(16)
    response = render(request, template, {**context, "csp_nonce": nonce}, status=status)
    response["Content-Security-Policy"] = _content_security_policy(nonce)
    # The token is in the address: never hand it to anyone in a Referer, keep it out of indexes.
    response["Referrer-Policy"] = "no-referrer"
    response["X-Robots-Tag"] = "noindex, nofollow"
    response["Cache-Control"] = "no-store"
    return response


@require_safe
def tracking_page(request, token: str):
    try:
        # contract "Rate limits": the page answers "is this a token?" as the API does, so it shares
        # the API's per-address limit (the same counter as ClientAddressThrottle's "tracking").
        enforce_rate_limit(
            request,
            group=f"address:{RATE_LIMIT_GROUP}",
            key=client_address(request),
            rate=settings.TRACKING_RATE_LIMIT,
        )
    except RateLimited as exc:
        response = _page_response(request, "tracking/rate_limited.html", {}, status=429)
        response["Retry-After"] = str(exc.retry_after)
        return response
    try:
        order = selectors.tracking_order_get(tracking_token=token)
    except OrderNotFound:
        return _page_response(request, "tracking/not_found.html", {}, status=404)
    page = presentation.tracking_page_build(
        order=order, progress=selectors.tracking_progress(order=order)
    )
    config = presentation.script_config(
        api_url=reverse("tracking-api", kwargs={"token": order.tracking_token}),
        poll_interval_ms=_poll_interval_ms(),
        page=page,
    )
    return _page_response(request, "tracking/page.html", {"page": page, "config": config})
