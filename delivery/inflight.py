"""Requests in flight per organization and kind of caller (contract "Rate limits"), counted in
Redis so every web process shares one count.

Each scope (an organization and a kind of caller: `api-key`, `management`) is a sorted set whose
members are the requests running now, scored by when they expire. One Lua script drops the
expired members, counts the rest and adds the new request only below the limit, atomically, so
two processes never both take the last place. A request gives its place back when it ends; the
expiry is what gives back the place of a worker that crashed or was killed mid-request. Every
place is also in one set of all scopes, so a request knows whether another caller has requests in
flight (delivery/fairness.py caps a caller across the instance only then).
"""

import functools
import logging
import uuid
from dataclasses import dataclass

import redis
from django.conf import settings

logger = logging.getLogger(__name__)

#: the kinds of caller a scope names (couriers will add theirs)
API_KEY = "api-key"
MANAGEMENT = "management"

# KEYS[1]: the scope's set, KEYS[2] (when instance turns are on): every scope's places; ARGV:
# member, limit, expiry in ms. Redis's own clock (TIME), so the processes' clocks never disagree
# about what expired. Returns {taken (1/0), in flight in the scope after, in every scope after}.
_ACQUIRE = """
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now_ms)
local count = redis.call('ZCARD', KEYS[1])
local total = count
if KEYS[2] then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now_ms)
  total = redis.call('ZCARD', KEYS[2])
end
if count >= tonumber(ARGV[2]) then
  return {0, count, total}
end
for _, key in ipairs(KEYS) do
  redis.call('ZADD', key, now_ms + tonumber(ARGV[3]), ARGV[1])
  redis.call('PEXPIRE', key, tonumber(ARGV[3]))
end
return {1, count + 1, total + 1}
"""


@dataclass(frozen=True)
class Place:
    """A request's place in its scope's count, given back by `release`; `others`: requests of
    other scopes in flight when it was taken."""

    key: str
    member: str
    others: int = 0


@dataclass(frozen=True)
class Refusal:
    """The scope was full: the limit the request met."""

    kind: str
    limit: int


@functools.lru_cache(maxsize=4)
def _redis_for(url: str) -> redis.Redis:
    """One connection pool per process and URL, made on first use (after gunicorn forked)."""
    return redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1)


@functools.lru_cache(maxsize=4)
def _acquire_script(url: str):
    return _redis_for(url).register_script(_ACQUIRE)


def scope_key(organization_id: str, kind: str) -> str:
    return f"{settings.SERVICE_NAME}:in-flight:{kind}:{organization_id}"


def all_scopes_key() -> str:
    return f"{settings.SERVICE_NAME}:in-flight:all"


def _all_scopes_keys() -> list[str]:
    # Kept only for instance turns (delivery/fairness.py), the one reader of `Place.others`.
    return [all_scopes_key()] if settings.FAIR_INSTANCE_RUNNING_PER_CALLER > 0 else []


def limit() -> int:
    """IN_FLIGHT_LIMIT (0: no limit)."""
    return max(0, settings.IN_FLIGHT_LIMIT)


def acquire(*, organization_id: str, kind: str) -> Place | Refusal | None:
    """Takes a place for one request of `kind` from `organization_id`: the place to release,
    a Refusal when the organization already has IN_FLIGHT_LIMIT such requests running, or None
    when nothing is counted (the limit is off, or Redis is unreachable: the limit fails open,
    with an error log, as the rate limits do)."""
    most = limit()
    if not most:
        return None
    key, member = scope_key(organization_id, kind), uuid.uuid4().hex
    expiry_ms = int(settings.IN_FLIGHT_EXPIRY_SECONDS * 1000)
    try:
        taken, count, total = _acquire_script(settings.REDIS_URL)(
            keys=[key, *_all_scopes_keys()], args=[member, most, expiry_ms]
        )
    except (redis.RedisError, OSError) as exc:
        logger.error("in-flight limiter unavailable, failing open: %s", exc.__class__.__name__)
        return None
    if not taken:
        return Refusal(kind=kind, limit=most)
    return Place(key=key, member=member, others=total - count)


def release(place: Place) -> None:
    try:
        pipeline = _redis_for(settings.REDIS_URL).pipeline(transaction=False)
        for key in (place.key, *_all_scopes_keys()):
            pipeline.zrem(key, place.member)
        pipeline.execute()
    except (redis.RedisError, OSError) as exc:
        # The place expires on its own after IN_FLIGHT_EXPIRY_SECONDS.
        logger.error("in-flight limiter could not release a place: %s", exc.__class__.__name__)


def in_flight(*, organization_id: str, kind: str) -> int:
    """Requests of `kind` from `organization_id` holding a place now, expired ones left out."""
    client = _redis_for(settings.REDIS_URL)
    key = scope_key(organization_id, kind)
    seconds, microseconds = client.time()
    return client.zcount(key, seconds * 1000 + microseconds // 1000 + 1, "+inf")
