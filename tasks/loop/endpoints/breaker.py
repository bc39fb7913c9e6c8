"""The circuit breaker, in the shared cache (Redis: every web and worker process sees it): open after repeated failures, for a cool-down."""

from __future__ import annotations

import asyncio
import hashlib
import os
import threading
import time

from django.core.cache import cache

from dynabench.errors import RuleError
from tasks.loop.endpoints.base import EndpointCode, setting


#: Seconds between two reports of the same configuration error of one model (``report_config_error``).
MISCONFIGURED_EVERY_S = 600

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
    """Count one call's outcome in ``model``'s breaker: a success closes it; a failure counts toward
    ``DYNABENCH_ENDPOINT_BREAKER_FAILURES`` and opens it for the cool-down.

    A configuration error (``reason`` is a ``ConfigErrorMessage``: the endpoint answered with a 4xx
    other than 408/429) is not a failure of the endpoint: it leaves the breaker as it was and tells the
    model's and the task's owners instead (``report_config_error``)."""
    key = _breaker_key(model)
    if not ok and getattr(reason, "config_error", False):
        report_config_error(model, str(reason))
        return
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


def report_config_error(model, reason: str) -> bool:
    """Send ``tasks.signals.endpoint_misconfigured`` for ``model`` with the endpoint's ``reason`` (the
    ``community`` app notifies the task's owners and the model's owner), at most once per model and reason
    every ``MISCONFIGURED_EVERY_S`` seconds (one cache ``add``), so a busy task does
    not queue a job per annotator. Returns whether it was sent. On the event loop (an async view) the signal
    goes out from a thread of the loop's default executor, as its receivers may touch the database (RQ's
    enqueue waits for the transaction's commit)."""
    digest = hashlib.sha256(reason.encode()).hexdigest()[:16]
    if not cache.add(f"endpoint-misconfigured:{_breaker_key(model)}:{digest}", 1, timeout=MISCONFIGURED_EVERY_S):
        return False
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        _send_misconfigured(type(model), model.pk, reason, close=False)
    else:
        loop.run_in_executor(None, _send_misconfigured, type(model), model.pk, reason, True)
    return True


def _send_misconfigured(sender, model_id: int, reason: str, close: bool) -> None:
    from django.db import connections

    from tasks.signals import endpoint_misconfigured

    try:
        endpoint_misconfigured.send(sender=sender, model_id=model_id, reason=reason)
    finally:
        if close:  # an executor thread: its database connection is not a request's, so nothing else closes it
            connections.close_all()


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
