"""Fixed-window counters in the Django cache (Redis by default), so a limit holds across processes."""

import math
import time

from django.core.cache import cache


def _window(key: str, window_s: int, now: float) -> str:
    return f"ratelimit:{key}:{window_s}:{int(now // window_s)}"


def count_hit(key: str, *, window_s: int) -> tuple[int, int]:
    """Count one event for ``key`` in the current fixed window of ``window_s`` seconds.

    Return ``(events in this window including this one, seconds until the window ends)``.
    ``key`` must be safe as a cache key (no spaces or control characters; hash personal data).

    On Redis it is one round trip: a pipeline on the cache's own client (whose connection pool
    lives as long as the process) creates the window's counter at 0 with its expiry unless it
    exists, then increments it. The cache's ``incr`` checks that the key exists first, so it
    would take two round trips, and a window's first event a third; another cache backend
    gets exactly that.
    """
    now = time.time()
    name = _window(key, window_s, now)
    client = getattr(getattr(cache, "_cache", None), "get_client", None)  # RedisCache's client
    if client is not None:
        cache_key = cache.make_and_validate_key(name)
        pipeline = client(cache_key, write=True).pipeline(transaction=False)
        pipeline.set(cache_key, 0, ex=window_s + 5, nx=True)
        pipeline.incr(cache_key)
        count = int(pipeline.execute()[1])
    else:
        try:
            count = cache.incr(name)
        except ValueError:  # the first event of this window
            count = 1 if cache.add(name, 1, timeout=window_s + 5) else cache.incr(name)
    return count, math.ceil(window_s - now % window_s)


def hits(key: str, *, window_s: int) -> tuple[int, int]:
    """Return ``(events counted for key in the current window, seconds until it ends)``, counting nothing."""
    now = time.time()
    return int(cache.get(_window(key, window_s, now)) or 0), math.ceil(window_s - now % window_s)
