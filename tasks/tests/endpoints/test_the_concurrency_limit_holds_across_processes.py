"""An endpoint's ``max_concurrency`` is one limit for every process that calls it (a Redis
semaphore with expiring leases, ``tasks/loop/endpoints/slots.py``), not one per process: two
processes of six calling threads each, against a limit of two, never have more than two calls in
flight at the real local server."""

import multiprocessing
import threading

from django.utils import timezone

from tasks.loop.endpoints.calls import call
from tasks.models import Endpoint, MLModel

THREADS = 6
HANG_S = 120  # a ceiling that only catches a hang


def _endpoint(url: str) -> Endpoint:
    model = MLModel(pk=987654, name="shared", kind=MLModel.Kind.ENDPOINT, created_at=timezone.now())
    return Endpoint(model=model, base_url=url, api=Endpoint.Api.CHAT, model_name="tiny-gpt2", params={"max_tokens": 2},
                    prompt={}, timeout_s=HANG_S, max_retries=0, max_concurrency=2)


def _caller(endpoint: Endpoint, outcomes) -> None:
    """One process: ``THREADS`` threads each make one call; each outcome goes to ``outcomes``."""
    def one(n):
        try:
            call(endpoint, [{"role": "user", "content": f"call {n}"}])
            outcomes.put("ok")
        except Exception as error:  # noqa: BLE001 - reported to the test
            outcomes.put(f"{type(error).__name__}: {error}")

    threads = [threading.Thread(target=one, args=(n,)) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def test_two_processes_share_the_endpoint_s_two_slots(endpoint_server):
    endpoint = _endpoint(endpoint_server.url)
    context = multiprocessing.get_context("fork")
    outcomes = context.Queue()
    endpoint_server.stall()
    processes = [context.Process(target=_caller, args=(endpoint, outcomes)) for _ in range(2)]
    for process in processes:
        process.start()
    try:
        # Both slots are taken and held at the server (the other ten calls wait for one)...
        while len(endpoint_server.requests) < 2:
            assert all(p.is_alive() for p in processes), "a calling process died"
            threading.Event().wait(0.05)
        endpoint_server.release()
        results = [outcomes.get(timeout=HANG_S) for _ in range(2 * THREADS)]
    finally:
        endpoint_server.release()
        for process in processes:
            process.join(HANG_S)
    # ...every call was answered, and never more than two at once.
    assert results == ["ok"] * (2 * THREADS)
    assert len(endpoint_server.answered) == 2 * THREADS
    assert endpoint_server.most_in_flight == 2
