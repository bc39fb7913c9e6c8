"""A test that counts up to a rate limit never sees the limit's window end under it (the root
conftest's ``_one_rate_limit_window``): ``dynabench.ratelimits`` reads one instant for the whole
test, even when the real clock crosses the end of an hour or a minute meanwhile."""

import time

from django.core.cache import cache

from dynabench.ratelimits import count_hit


def test_counts_go_on_in_one_window_while_the_real_clock_crosses_the_hour(monkeypatch):
    cache.clear()
    hour = (time.time() // 3600 + 1) * 3600  # the end of this clock hour
    counts = []
    for now in (hour - 0.5, hour - 0.1, hour + 0.1, hour + 61):  # the real clock, read by everything else
        monkeypatch.setattr(time, "time", lambda now=now: now)
        counts.append(count_hit("test:across-the-hour", window_s=3600)[0])
        counts.append(count_hit("test:across-the-minute", window_s=60)[0])
    assert counts == [1, 1, 2, 2, 3, 3, 4, 4]
