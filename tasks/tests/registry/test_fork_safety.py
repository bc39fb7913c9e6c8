"""A process forked while the registry holds models and locks starts with an empty cache and free locks."""

import os

from tasks.loop import registry
from tasks.loop.registry import cache_info, get_predictor


def test_a_forked_child_starts_with_an_empty_registry_and_free_locks(sentiment_model):
    get_predictor(sentiment_model)
    registry._cache_lock.acquire()  # as if a parent thread were inside the cache when the fork happened
    try:
        pid = os.fork()
        if pid == 0:  # child: report through the exit status only
            ok = cache_info()["models"] == [] and registry._cache_lock.acquire(timeout=5)
            os._exit(0 if ok else 1)
    finally:
        registry._cache_lock.release()
    _, status = os.waitpid(pid, 0)

    assert os.waitstatus_to_exitcode(status) == 0
    assert len(cache_info()["models"]) == 1
