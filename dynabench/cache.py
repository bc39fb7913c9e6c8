"""The cache backend: Django's ``RedisCache``, with one redis-py client kept per connection pool."""

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient


class _Client(RedisCacheClient):
    """Django's client builds a new ``redis.Redis`` for every cache call, over a pool it keeps.

    Building one copies redis-py's table of response callbacks (about 170 entries, 0.1 to
    0.2 ms on the 2-core machine), and a logged-in submission makes two cache calls (its
    session and its rate window). A ``redis.Redis`` over a shared pool is safe to share between
    threads (redis-py's documentation), so one is kept per pool."""

    def __init__(self, servers, **options):
        super().__init__(servers, **options)
        self._clients = {}

    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)
        client = self._clients.get(pool)
        if client is None:
            client = self._clients[pool] = self._client(connection_pool=pool)
        return client


class RedisCache(DjangoRedisCache):
    """``django.core.cache.backends.redis.RedisCache`` with ``_Client``: same settings, same keys."""

    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = _Client
