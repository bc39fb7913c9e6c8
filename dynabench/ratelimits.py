"""Fixed-window counters in the Django cache (Redis by default), so a limit holds across processes."""

import math
import time

from django.core.cache import cache


def count_hit(key: str, *, window_s: int) -> tuple[int, int]:
    """Count one event for ``key`` in the current fixed window of ``window_s`` seconds.

    Return ``(events in this window including this one, seconds until the window ends)``.
    ``key`` must be safe as a cache key (no spaces or control characters; hash personal data).
    """
    now = time.time()
    cache_key = f"ratelimit:{key}:{window_s}:{int(now // window_s)}"
    try:
        count = cache.incr(cache_key)  # one round trip in the common case
    except ValueError:  # the first event of this window
        count = 1 if cache.add(cache_key, 1, timeout=window_s + 5) else cache.incr(cache_key)
    return count, math.ceil(window_s - now % window_s)
