"""The API-key lookup cache in Redis, so authentication costs no database query (BENCH.md).

Entries are keyed by the key's digest and removed when the key is rotated, revoked or updated,
so a rotated-away value is refused at once by every process. A Redis failure falls back to the
database; it never refuses a valid key.
"""

import logging
import time
from dataclasses import asdict, dataclass
from functools import cached_property

from django.core.cache import cache
from django.db import transaction
from redis.exceptions import RedisError

from tenants.models import Organization

logger = logging.getLogger(__name__)

ENTRY_TTL_SECONDS = 300
LAST_USED_INTERVAL_SECONDS = 60


@dataclass(frozen=True)
class ApiKeyPrincipal:
    """Who is calling with an API key: the key, its organization and its platform."""

    key_id: str
    organization_id: str
    platform: str
    name: str

    @cached_property
    def organization(self):
        return Organization.objects.get(pk=self.organization_id)


def _entry_key(digest: str) -> str:
    return f"apikey:{digest}"


def read(digest: str) -> ApiKeyPrincipal | None:
    try:
        data = cache.get(_entry_key(digest))
    except (RedisError, OSError) as exc:
        logger.warning("API key cache unavailable: %s", exc.__class__.__name__)
        return None
    return ApiKeyPrincipal(**data) if data else None


def store(digest: str, principal: ApiKeyPrincipal) -> None:
    try:
        cache.set(_entry_key(digest), asdict(principal), ENTRY_TTL_SECONDS)
    except (RedisError, OSError) as exc:
        logger.warning("API key cache unavailable: %s", exc.__class__.__name__)


def forget(digest: str) -> None:
    try:
        cache.delete(_entry_key(digest))
    except (RedisError, OSError):
        # The entry expires on its own within ENTRY_TTL_SECONDS; say loudly that it lingers.
        logger.error("could not drop API key cache entry; it expires within %ss", ENTRY_TTL_SECONDS)


def forget_on_commit(digest: str) -> None:
    # Dropped now (no request may re-read the old row after we commit) and again after commit
    # (a request that read the old row before our commit may have cached it meanwhile).
    forget(digest)
    transaction.on_commit(lambda: forget(digest))


# Per process: when this process may next ask Redis for a key's lastUsedAt slot (time.time()),
# so most requests make no Redis call for it at all.
_next_claim_at: dict[str, float] = {}


def claim_last_used_slot(key_id) -> bool:
    """True at most once a minute per key: the caller then writes lastUsedAt. Each process asks
    Redis (which decides between processes) at most once a minute per key."""
    now = time.time()
    if _next_claim_at.get(str(key_id), 0.0) > now:
        return False
    if len(_next_claim_at) > 10_000:
        _next_claim_at.clear()
    _next_claim_at[str(key_id)] = now + LAST_USED_INTERVAL_SECONDS
    try:
        return bool(cache.add(f"apikey-used:{key_id}", 1, LAST_USED_INTERVAL_SECONDS))
    except (RedisError, OSError):
        return False
