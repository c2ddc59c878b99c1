"""Fixed-window rate limits on the Redis cache through django-ratelimit (contract "Rate limits").

Every counted request also remembers where its counter stands, so `RateLimitHeadersMiddleware`
can tell the client before it is refused: the `RateLimit-Policy` and `RateLimit` fields of
draft-ietf-httpapi-ratelimit-headers (docs/contract.md "Rate limits").
"""

import hashlib
import logging
from dataclasses import dataclass

from django.conf import settings
from django_ratelimit.core import _split_rate, get_usage
from redis.exceptions import RedisError

from delivery.errors import RateLimited

logger = logging.getLogger(__name__)

#: the attribute of the Django request that holds the counters its response reports
STATES_ATTRIBUTE = "rate_limit_states"


@dataclass(frozen=True)
class RateLimitState:
    """One counter as a response reports it: the policy, what is left, when it resets."""

    policy: str
    quota: int
    window_seconds: int
    remaining: int
    reset_seconds: int

    def policy_item(self) -> str:
        """A member of `RateLimit-Policy`: `"<policy>";q=<quota>;w=<window>`."""
        return f"{_sf_string(self.policy)};q={self.quota};w={self.window_seconds}"

    def limit_item(self) -> str:
        """A member of `RateLimit`: `"<policy>";r=<remaining>;t=<seconds to reset>`."""
        return f"{_sf_string(self.policy)};r={self.remaining};t={self.reset_seconds}"


def _sf_string(value: str) -> str:
    """An RFC 9651 sf-string (group names are plain ASCII; escape what must be escaped)."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def enforce_rate_limit(request, *, group: str, key: str, rate: str) -> None:
    """Counts one request against `key` in `group`; raises RateLimited past `rate`.

    `key` is an opaque string (a key id, a digest of the secret, a client address). When Redis is
    unreachable the limit fails open and the failure is logged: availability beats limiting (and
    the response then reports no counter, since there is none to report).
    """
    if not settings.RATELIMIT_ENABLE:
        return
    hashed = hashlib.sha256(key.encode()).hexdigest()
    try:
        usage = get_usage(
            request, group=group, key=lambda _group, _request: hashed, rate=rate, increment=True
        )
    except (RedisError, OSError) as exc:
        logger.error("rate limiter unavailable, failing open: %s", exc.__class__.__name__)
        return
    if usage is None:
        return
    # The same parser django-ratelimit counted with, so the policy states the window it used.
    _quota, window_seconds = _split_rate(rate)
    limited = usage["should_limit"]
    # A refused request's t is its Retry-After (at least 1); otherwise the window's true rest.
    reset = max(1, usage["time_left"]) if limited else max(0, usage["time_left"])
    _remember(
        request,
        RateLimitState(
            policy=group,
            quota=usage["limit"],
            window_seconds=window_seconds,
            remaining=max(0, usage["limit"] - usage["count"]),
            reset_seconds=reset,
        ),
    )
    if limited:
        raise RateLimited(retry_after=reset)


def _remember(request, state: RateLimitState) -> None:
    # A DRF Request wraps the Django one; the middleware sees only the Django one.
    django_request = getattr(request, "_request", request)
    states = getattr(django_request, STATES_ATTRIBUTE, None)
    if states is None:
        states = {}
        setattr(django_request, STATES_ATTRIBUTE, states)
    states[state.policy] = state


def rate_limit_states(request) -> list[RateLimitState]:
    """The counters this request was counted against, in the order they were counted."""
    return list(getattr(request, STATES_ATTRIBUTE, {}).values())


def client_address(request) -> str:
    return request.META.get("REMOTE_ADDR", "") or "unknown"
