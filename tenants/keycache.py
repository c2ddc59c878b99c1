"""The API-key lookup cache in Redis, so authentication (API keys and driver tokens) and finding
where an event's webhook goes cost no database query (docs/performance.md).

Every entry is tagged with the cache generation current when its row was read, and an entry
counts only while that generation is still current. Any change that can refuse a key (rotate,
revoke, an organization deactivated, a key or organization deleted) sets a new generation after
its transaction commits (`invalidate_on_commit`), so every process refuses the key from then on:
the generation lives in Redis, which every process reads with the entry in one round trip.

A request that read the old row just before the commit stores its entry under the old
generation, which no request trusts any more; a request that reads the new generation reads the
row after the commit. A Redis failure falls back to the database; it never refuses a valid key.
"""

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from django.apps import apps
from django.core.cache import cache
from django.db import transaction
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

ENTRY_TTL_SECONDS = 300
LAST_USED_INTERVAL_SECONDS = 60
GENERATION_KEY = "apikey-generation"


@dataclass(frozen=True)
class ApiKeyPrincipal:
    """Who is calling with an API key: the key, its organization and its platform."""

    key_id: str
    organization_id: str
    platform: str
    name: str

    @cached_property
    def organization(self):
        # By name: the models import this module (their bulk updates invalidate the cache), so
        # importing them back would make a cycle.
        return apps.get_model("tenants", "Organization").objects.get(pk=self.organization_id)


def through(entry_key: str, load: Callable[[], Any], *, keep_missing: bool) -> Any:
    """`load()`'s answer, cached as a principal is: under the current generation, read with it
    in one round trip, so it is read again from the database once anything that could change it
    changed. A None answer is cached only with `keep_missing` (never for an unknown secret:
    anyone can send one). Redis unavailable: `load()`."""
    try:
        found = cache.get_many([entry_key, GENERATION_KEY])
    except (RedisError, OSError) as exc:
        logger.warning("API key cache unavailable: %s", exc.__class__.__name__)
        return load()
    generation = found.get(GENERATION_KEY, "")
    entry = found.get(entry_key)
    # "value" in entry: an entry of another shape (an older release's) counts as absent.
    if isinstance(entry, dict) and "value" in entry and entry.get("generation") == generation:
        return entry["value"]
    value = load()
    if value is None and not keep_missing:
        return None
    try:
        cache.set(entry_key, {"generation": generation, "value": value}, ENTRY_TTL_SECONDS)
    except (RedisError, OSError) as exc:
        logger.warning("API key cache unavailable: %s", exc.__class__.__name__)
    return value


def invalidate() -> None:
    """Makes every cached entry stale, in every process, from the next request on."""
    try:
        cache.set(GENERATION_KEY, uuid.uuid4().hex, None)
    except (RedisError, OSError):
        # Entries expire on their own within ENTRY_TTL_SECONDS; say loudly that they linger.
        logger.error(
            "could not invalidate the API key cache; entries expire within %ss", ENTRY_TTL_SECONDS
        )


def invalidate_on_commit() -> None:
    """Now (this very transaction's later reads, and tests, see the change) and again after the
    surrounding transaction commits (at once outside one): a request of another process that
    re-read the old row before the commit may have cached it under the first new generation."""
    if transaction.get_connection().in_atomic_block:
        invalidate()
    transaction.on_commit(invalidate)


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
