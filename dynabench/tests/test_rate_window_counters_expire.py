"""``ratelimits.count_hit`` counts per key and window, and every window's counter expires."""

from django.core.cache import cache

from dynabench import ratelimits
from dynabench.ratelimits import _window, count_hit, hits


def test_hits_are_counted_per_key_and_read_back_without_counting():
    cache.clear()
    assert [count_hit("test:a", window_s=3600)[0] for _ in range(3)] == [1, 2, 3]
    assert count_hit("test:b", window_s=3600)[0] == 1
    assert hits("test:a", window_s=3600)[0] == 3
    assert hits("test:a", window_s=3600)[0] == 3
    assert hits("test:unseen", window_s=3600)[0] == 0


def test_the_window_s_counter_expires_after_the_window():
    cache.clear()
    count, resets_in = count_hit("test:expiry", window_s=3600)
    assert count == 1 and 0 < resets_in <= 3600
    key = cache.make_and_validate_key(_window("test:expiry", 3600, ratelimits.time.time()))  # the clock count_hit read (conftest)
    ttl = cache._cache.get_client(key).ttl(key)
    assert 0 < ttl <= 3605
