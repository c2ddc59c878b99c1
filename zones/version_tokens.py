"""Version tokens in Redis: what is cached under a token (a zone index, geocoder answers) is
retired at once by replacing the token, everywhere."""

import uuid

from django.core.cache import cache


def version_token_get(key: str, *, timeout: int | None) -> str:
    """The token under `key`, created when missing (concurrent first calls agree: `add` keeps the
    first). Raises RedisError or OSError when Redis is away; callers decide what that means."""
    version = cache.get(key)
    if version is None:
        cache.add(key, uuid.uuid4().hex, timeout)
        version = cache.get(key)
    return version
