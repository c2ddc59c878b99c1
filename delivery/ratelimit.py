"""Fixed-window rate limits on the Redis cache through django-ratelimit (decisions §4)."""

import hashlib
import logging

from django.conf import settings
from django_ratelimit.core import get_usage
from redis.exceptions import RedisError

from delivery.errors import RateLimited

logger = logging.getLogger(__name__)


def enforce_rate_limit(request, *, group: str, key: str, rate: str) -> None:
    """Counts one request against `key` in `group`; raises RateLimited past `rate`.

    `key` is an opaque string (a key id, a digest of the secret, a client address). When Redis is
    unreachable the limit fails open and the failure is logged: availability beats limiting.
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
    if usage["should_limit"]:
        raise RateLimited(retry_after=usage["time_left"])


def client_address(request) -> str:
    return request.META.get("REMOTE_ADDR", "") or "unknown"
