"""The cache backend (``dynabench.cache``) is Django's Redis cache that reuses its redis-py client."""

from django.core.cache import cache


def test_it_stores_and_reads_as_django_s_redis_cache_does():
    cache.clear()
    cache.set("test:cache:a", {"n": [1, 2]}, 30)
    cache.set("test:cache:int", 7, 30)
    assert cache.get("test:cache:a") == {"n": [1, 2]}
    assert cache.incr("test:cache:int") == 8
    assert cache.get("test:cache:missing", "default") == "default"
    assert cache.add("test:cache:int", 1) is False


def test_every_call_gets_the_same_client_over_the_same_pool():
    first, second = cache._cache.get_client(write=True), cache._cache.get_client()
    assert first is second
    assert first.connection_pool is cache._cache._get_connection_pool(True)
