"""An endpoint's concurrency limit, shared by every web and worker process: at most
``max_concurrency`` calls to one endpoint model are in flight at once, wherever they come from
(``dynabench.semaphore.SharedSemaphore`` in Redis, with leases that expire so that a process that
dies frees its slots)."""

from __future__ import annotations

from dynabench.semaphore import SharedSemaphore

#: Seconds a slot is held without renewal beyond the endpoint's timeout; streamed answers renew
#: their slot as they read, so a long answer keeps it.
LEASE_MARGIN_S = 30.0


def slots(endpoint) -> SharedSemaphore:
    """The shared semaphore of ``endpoint`` (a ``tasks.models.Endpoint``): ``max_concurrency`` slots,
    each leased for the endpoint's timeout plus ``LEASE_MARGIN_S`` seconds. Keyed by the model's id
    and creation time, like the circuit breaker, so a reused id never inherits slots."""
    model = endpoint.model
    created = model.created_at.timestamp() if model.created_at else 0
    return SharedSemaphore(f"endpoint:{model.pk}:{created:.6f}", endpoint.max_concurrency,
                           lease_s=float(endpoint.timeout_s) + LEASE_MARGIN_S)
