"""Django's Redis cache backend, with one redis-py client per connection pool.

Django's `RedisCacheClient.get_client` builds a new `redis.Redis` for every cache call, and
redis-py copies its response callbacks into a fresh dict in each constructor: in process, a
cache GET took 546 µs that way against 116 µs with the client kept (a raw GET: 95 µs). Every
authenticated request makes at least one cache call (the API-key cache), a partner order
creation two. A client holds nothing but its pool, and redis-py clients are thread-safe (pools reset
themselves in a forked child), so one client per pool is kept. Behaviour is Django's otherwise.
"""

from django.core.cache.backends import redis as django_redis


class RedisCacheClient(django_redis.RedisCacheClient):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict = {}

    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)
        client = self._clients.get(pool)
        if client is None:
            client = self._clients[pool] = self._client(connection_pool=pool)
        return client


class RedisCache(django_redis.RedisCache):
    def __init__(self, server, params) -> None:
        super().__init__(server, params)
        self._class = RedisCacheClient
