"""The circuit breaker, in the shared cache (Redis: every web and worker process sees it): open after repeated failures, for a cool-down."""

from __future__ import annotations

import os
import threading
import time

from django.core.cache import cache

from dynabench.errors import RuleError
from tasks.loop.endpoints.base import EndpointCode, setting


_memo: dict[str, tuple[float, dict]] = {}

_memo_lock = threading.Lock()


def _reset_after_fork() -> None:
    global _memo_lock
    _memo_lock = threading.Lock()
    _memo.clear()


os.register_at_fork(after_in_child=_reset_after_fork)


def _breaker_key(model) -> str:
    """The breaker's cache key: the model's id and creation time (a reused id never inherits a state)."""
    return f"endpoint-breaker:{model.pk}:{model.created_at.timestamp() if model.created_at else 0:.6f}"


def _read(model) -> dict:
    """The breaker's state, read from the shared cache at most every ``DYNABENCH_ENDPOINT_BREAKER_READ_EVERY_S``
    seconds per process (1 s; this process's own outcomes update it at once), so a call does not pay a
    cache round trip: another process's opening is seen here within that time."""
    key = _breaker_key(model)
    now = time.monotonic()
    with _memo_lock:
        memo = _memo.get(key)
    if memo is not None and now - memo[0] < float(setting("DYNABENCH_ENDPOINT_BREAKER_READ_EVERY_S", 1.0)):
        return memo[1]
    state = cache.get(key) or {}
    with _memo_lock:
        _memo[key] = (now, state)
    return state


def _remember(key: str, state: dict) -> None:
    with _memo_lock:
        _memo[key] = (time.monotonic(), state)


def breaker_open_for(model) -> float:
    """Seconds until ``model``'s breaker lets a call through again (0: closed or cooled down)."""
    return max(0.0, float(_read(model).get("open_until", 0.0)) - time.time())


def record_outcome(model, ok: bool, reason: str = "") -> None:
    key = _breaker_key(model)
    if ok:
        cache.delete(key)
        _remember(key, {})
        return
    state = cache.get(key) or {}
    failures = int(state.get("failures", 0)) + 1
    state = {"failures": failures, "open_until": state.get("open_until", 0.0), "reason": reason[:300]}
    if failures >= int(setting("DYNABENCH_ENDPOINT_BREAKER_FAILURES", 5)):
        state["open_until"] = time.time() + float(setting("DYNABENCH_ENDPOINT_BREAKER_COOLDOWN_S", 30))
    cache.set(key, state, timeout=3600)
    _remember(key, state)


def breaker_state(model) -> dict:
    """``{"open": bool, "seconds": float, "failures": int, "reason": str}`` of ``model``'s breaker."""
    state = _read(model)
    seconds = max(0.0, float(state.get("open_until", 0.0)) - time.time())
    return {"open": seconds > 0, "seconds": seconds, "failures": int(state.get("failures", 0)), "reason": state.get("reason", "")}


def reset_breaker(model) -> None:
    """Close ``model``'s breaker (an owner fixed the endpoint)."""
    key = _breaker_key(model)
    cache.delete(key)
    _remember(key, {})


def unavailable(model, seconds: float) -> RuleError:
    """The refusal while ``model``'s breaker is open (503)."""
    return RuleError(
        EndpointCode.UNAVAILABLE,
        f"The model in the loop ({model.name}) is an endpoint that stopped answering, so the platform stopped "
        f"calling it for {seconds:.0f} s more. Nothing was saved; keep your text and submit again then.",
        status_code=503,
    )
