"""Calls to an endpoint from the event loop (async views under ASGI): while the endpoint thinks, the
caller holds no thread.

The same rules as ``calls``, step for step: the breaker refuses at once while open, the URL is
checked against the allow-list before each call (its DNS look-up runs off the loop), the key goes
only into the ``Authorization`` header, the shared concurrency limit (``slots``) is awaited, the
retry rule is ``calls.Retries`` (``async for``), and answers are read up to their byte bound.

``httpx.AsyncClient`` objects belong to the event loop that made them, so each loop keeps its own
per endpoint setting (under uvicorn a process has one loop; under a WSGI server each async view
runs in a loop of its own, whose clients go with it).
"""

from __future__ import annotations

import time
import weakref

import asyncio
from asgiref.sync import sync_to_async

from tasks.loop import gate
from tasks.loop.endpoints.base import Answer, EndpointCode, EndpointError, logger, setting
from tasks.loop.endpoints.breaker import breaker_open_for, record_outcome
from tasks.loop.endpoints.calls import Retries, answer_of, json_object, request_body, request_content
from tasks.loop.endpoints.keys import api_key
from tasks.loop.endpoints.slots import slots
from tasks.loop.endpoints.urls import api_url, check_url

_clients: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def async_client_for(endpoint):
    """The running loop's ``httpx.AsyncClient`` for the endpoint's current settings."""
    import httpx

    per_loop = _clients.setdefault(asyncio.get_running_loop(), {})
    key = (endpoint.model_id, endpoint.updated_at, endpoint.max_concurrency, endpoint.timeout_s)
    if key not in per_loop:
        limits = httpx.Limits(max_connections=endpoint.max_concurrency, max_keepalive_connections=endpoint.max_concurrency)
        per_loop[key] = httpx.AsyncClient(timeout=httpx.Timeout(endpoint.timeout_s), limits=limits,
                                          follow_redirects=False, trust_env=False)
    return per_loop[key]


async def acheck(endpoint) -> None:
    """Refuse while the breaker is open (``EndpointError``, ``endpoint_unavailable``) and check the URL
    against the allow-list (``RuleError``), its DNS look-up on a thread of the default executor."""
    if breaker_open_for(endpoint.model) > 0:
        raise EndpointError(EndpointCode.UNAVAILABLE, "The endpoint's circuit breaker is open after repeated failures.")
    await sync_to_async(check_url, thread_sensitive=False)(endpoint.base_url)


def headers_for(endpoint, **extra) -> dict:
    """The request headers: the key (if any) in ``Authorization`` only, plus ``extra``."""
    key = api_key(endpoint)
    return ({"Authorization": f"Bearer {key}"} if key else {}) | extra


async def aread_bounded(response, limit: int) -> bytes:
    """The body of an ``httpx`` async response, refused (``EndpointError``) past ``limit`` bytes."""
    chunks, size = [], 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise EndpointError(EndpointCode.FAILED, f"The endpoint's answer is larger than {limit} bytes.")
        chunks.append(chunk)
    return b"".join(chunks)


async def areserve(admission, messages, params):
    """``admission.reserve`` from the event loop: on a thread, only for a request counted in a round."""
    if not admission.counted:
        return None
    return await sync_to_async(gate.released(admission.reserve))(messages, params)


async def acall(endpoint, messages: list[dict]) -> Answer:
    """``calls.call`` for a coroutine: send one request and return its ``Answer``; raise
    ``EndpointError`` when it fails after its retries (counted in the breaker) or ``RuleError`` for a
    URL the allow-list refuses or the round's budget spent). Inside the gate's admission only, as ``call``."""
    admission = gate.admission_for(endpoint.model)
    await acheck(endpoint)
    model, client = endpoint.model, async_client_for(endpoint)
    url, headers = api_url(endpoint), headers_for(endpoint)
    content = request_content(endpoint, request_body(endpoint, messages))
    limit = int(setting("DYNABENCH_ENDPOINT_MAX_RESPONSE_BYTES", 2**20))
    reservation = await areserve(admission, messages, endpoint.params)
    started = time.perf_counter()
    tries = Retries(endpoint)
    async for _ in tries:
        with tries.guard():
            async with slots(endpoint).ahold(), client.stream("POST", url, **content, headers=headers) as response:
                data = await aread_bounded(response, limit)
                if response.status_code == 200:
                    answer = answer_of(endpoint, data, (time.perf_counter() - started) * 1000)
                    admission.settle(reservation, answer)
                    record_outcome(model, True)
                    return answer
                tries.refused(response, data)
    admission.settle(reservation, None, latency_ms=(time.perf_counter() - started) * 1000)
    record_outcome(model, False, tries.error.message)
    logger.warning("endpoint model %s: %s", model.pk, tries.error.message)
    raise tries.error


async def apost_json(endpoint, path: str, body: dict, *, max_bytes: int) -> tuple[dict, float]:
    """``calls.post_json`` for a coroutine: POST ``body`` to ``<base_url>/v1/<path>`` with every guard
    of ``acall``; return ``(parsed JSON object, latency in ms)``; raise ``EndpointError`` or ``RuleError``."""
    admission = gate.admission_for(endpoint.model)
    await acheck(endpoint)
    model, client = endpoint.model, async_client_for(endpoint)
    base = endpoint.base_url.rstrip("/")
    url = (base if base.endswith("/v1") else base + "/v1") + "/" + path.lstrip("/")
    headers = headers_for(endpoint)
    reservation = await areserve(admission, [body.get("prompt", "")], {"max_tokens": 1})
    started = time.perf_counter()
    tries = Retries(endpoint)
    async for _ in tries:
        with tries.guard():
            async with slots(endpoint).ahold(), client.stream("POST", url, json=body, headers=headers) as response:
                data = await aread_bounded(response, max_bytes)
                if response.status_code == 200:
                    parsed = json_object(data)
                    latency_ms = (time.perf_counter() - started) * 1000
                    admission.settle(reservation, Answer("", {}, latency_ms, None, None))
                    record_outcome(model, True)
                    return parsed, latency_ms
                tries.refused(response, data)
    admission.settle(reservation, None, latency_ms=(time.perf_counter() - started) * 1000)
    record_outcome(model, False, tries.error.message)
    logger.warning("endpoint model %s: %s", model.pk, tries.error.message)
    raise tries.error
