"""Failed-login throttling of POST /api/auth/token and the Django admin's login form
(docs/contract.md "Failed logins").

Three counters of wrong passwords, per fixed window of LOGIN_FAILURE_WINDOW_SECONDS, in the
Django cache (Redis), so every web process shares them:

- per account and address: at its limit the pair is locked out (429 `login_locked`, the right
  password too), and every further failure in the window locks it again for twice as long,
  from LOGIN_LOCKOUT_SECONDS up to LOGIN_LOCKOUT_MAX_SECONDS: the growing delays;
- per address, any account: the same at a higher limit (one address trying many accounts);
- per account, any address: never locks. Past its limit every failure makes the account's next
  login wait a growing delay (429 `login_slowed_down`), except from an address that logged in
  to it before, so guessers spread over many addresses cannot keep its admin out.

Deadlines are stored as timestamps and compared with the clock (Redis expiry only tidies up).
A success clears its pair's counter and lockout. The throttle is one of the rate limits:
RATELIMIT_ENABLE=false turns it off, and Redis down lets logins through with an error log, as
the other limits do. Why not django-axes: docs/contract.md "Failed logins".
"""

import hashlib
import logging
import math
import time

from django.conf import settings
from django.core.cache import cache
from redis.exceptions import RedisError

from tenants.errors import LoginLocked, LoginSlowedDown

logger = logging.getLogger(__name__)

#: a doubling delay stops doubling long before it would overflow (it is capped anyway)
_MAX_DOUBLINGS = 30


def ensure_login_allowed(*, account: str, address: str) -> None:
    """Raises LoginLocked or LoginSlowedDown when a login of `account` from `address` must
    wait; checked before the password is."""
    if not settings.RATELIMIT_ENABLE:
        return
    keys = _Keys(account, address)
    try:
        values = cache.get_many([keys.pair_lock, keys.address_lock, keys.slowed, keys.known])
    except (RedisError, OSError) as exc:
        logger.error("login throttle unavailable, failing open: %s", exc.__class__.__name__)
        return
    now = time.time()
    locked_until = max(values.get(keys.pair_lock, 0), values.get(keys.address_lock, 0))
    if locked_until > now:
        raise LoginLocked(retry_after=math.ceil(locked_until - now))
    slowed_until = values.get(keys.slowed, 0)
    if slowed_until > now and not values.get(keys.known):
        raise LoginSlowedDown(retry_after=math.ceil(slowed_until - now))


def login_failed(*, account: str, address: str) -> None:
    """Counts a wrong password; raises LoginLocked when this failure locks the pair or the
    address (so the failure that reaches a limit already answers 429)."""
    if not settings.RATELIMIT_ENABLE:
        return
    keys = _Keys(account, address)
    try:
        lockout_seconds = _count_failure(keys, account, address)
    except (RedisError, OSError) as exc:
        logger.error("login throttle unavailable, failing open: %s", exc.__class__.__name__)
        return
    if lockout_seconds:
        raise LoginLocked(retry_after=lockout_seconds)


def login_succeeded(*, account: str, address: str) -> None:
    """Clears the pair's counter and lockout, and remembers the address as one the account logs
    in from (exempt from the account's slow-down)."""
    if not settings.RATELIMIT_ENABLE:
        return
    keys = _Keys(account, address)
    try:
        cache.delete_many([keys.failures(keys.pair), keys.pair_lock])
        cache.set(keys.known, 1, timeout=settings.LOGIN_KNOWN_ADDRESS_SECONDS)
    except (RedisError, OSError) as exc:
        logger.error("login throttle unavailable: %s", exc.__class__.__name__)


def _count_failure(keys: "_Keys", account: str, address: str) -> int:
    """Counts the failure on the three counters; the longest lockout it started, or 0."""
    now = time.time()
    window = settings.LOGIN_FAILURE_WINDOW_SECONDS
    counts = {}
    for counter in (keys.pair, keys.address, keys.account):
        key = keys.failures(counter)
        cache.add(key, 0, timeout=2 * window)
        counts[counter] = cache.incr(key)
    longest = 0
    for scope, counter, lock, limit in (
        ("account and address", keys.pair, keys.pair_lock, settings.LOGIN_FAILURE_LIMIT),
        ("address", keys.address, keys.address_lock, settings.LOGIN_FAILURE_LIMIT_PER_ADDRESS),
    ):
        failures = counts[counter]
        if failures < limit:
            continue
        seconds = _doubling(
            settings.LOGIN_LOCKOUT_SECONDS, settings.LOGIN_LOCKOUT_MAX_SECONDS, failures - limit
        )
        cache.set(lock, now + seconds, timeout=seconds + 1)
        longest = max(longest, seconds)
        logger.warning(
            "login locked out by %s: account=%s address=%s failures=%d retry_after=%ds",
            scope,
            masked_email(account),
            address,
            failures,
            seconds,
        )
    failures = counts[keys.account]
    limit = settings.LOGIN_FAILURE_LIMIT_PER_ACCOUNT
    if failures >= limit:
        seconds = _doubling(
            settings.LOGIN_SLOWDOWN_SECONDS, settings.LOGIN_SLOWDOWN_MAX_SECONDS, failures - limit
        )
        cache.set(keys.slowed, now + seconds, timeout=seconds + 1)
        if failures == limit:
            logger.warning(
                "login slowed down for account=%s (last address=%s) failures=%d",
                masked_email(account),
                address,
                failures,
            )
    return longest


def _doubling(first: int, most: int, doublings: int) -> int:
    return min(first * 2 ** min(doublings, _MAX_DOUBLINGS), most)


def masked_email(email: str) -> str:
    """`a***@example.com`: enough for whoever reads the log to recognise their own admin, not
    a list of the service's accounts."""
    local, at, domain = email.partition("@")
    return f"{local[:1]}***{at}{domain}"


class _Keys:
    """The cache keys of one login attempt; accounts and addresses enter them as digests."""

    def __init__(self, account: str, address: str):
        self.pair = f"pair:{_digest(account, address)}"
        self.address = f"address:{_digest(address)}"
        self.account = f"account:{_digest(account)}"
        self.pair_lock = f"login:locked:{self.pair}"
        self.address_lock = f"login:locked:{self.address}"
        self.slowed = f"login:slowed:{self.account}"
        self.known = f"login:known:{self.pair}"

    @staticmethod
    def failures(counter: str) -> str:
        window = int(time.time() // settings.LOGIN_FAILURE_WINDOW_SECONDS)
        return f"login:failures:{counter}:{window}"


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:32]
