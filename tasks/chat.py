"""Streamed chat answers of endpoint models, for the open-ended kind's conversations
(``tasks/kinds/open_ended.py``) and its side-by-side comparisons.

``stream_chat(endpoint, messages)`` sends one ``/v1/chat/completions`` request with ``"stream":
true`` (and ``stream_options.include_usage``) and yields the answer's text as the endpoint sends
it: ``("token", piece)`` per server-sent event that carries text, then one ``("done", Answer)``
(``tasks.endpoints.Answer``: the whole text, finish reason, usage, latency, and ``first_token_ms``
in ``raw``). It keeps every rule of ``tasks.endpoints.call``: the URL is checked again before the
call (allow-list, no server-side request forgery), the circuit breaker refuses at once while
open and counts the outcome, the key goes only into the ``Authorization`` header, at most
``max_concurrency`` calls are in flight per process, and the answer is read up to
``DYNABENCH_ENDPOINT_MAX_RESPONSE_BYTES``. A 429, a 5xx or a lost connection *before the first
token* is retried with the same backoff; once text has been shown a failure ends the stream
(``EndpointError``) rather than repeat it. A ``/v1/completions`` endpoint cannot stream chat:
its whole answer (``tasks.endpoints.call``) comes as one piece.

Streamed answers are not put in the response cache: a conversation's turns are asked once.
"""

from __future__ import annotations

import json
import time
from typing import Iterator

from dynabench.jsonbounds import loads_bounded
from tasks import endpoints
from tasks.endpoints import Answer, EndpointCode, EndpointError


def _events(response, limit: int) -> Iterator[dict | None]:
    """The JSON payloads of a server-sent event stream (``None`` for ``[DONE]``), read up to ``limit`` bytes."""
    size = 0
    for line in response.iter_lines():
        size += len(line) + 1
        if size > limit:
            raise EndpointError(EndpointCode.FAILED, f"The endpoint's answer is larger than {limit} bytes.")
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            yield None
            return
        try:
            yield loads_bounded(data.encode())
        except ValueError:
            raise EndpointError(EndpointCode.FAILED, "The endpoint's stream holds an event that is not JSON.") from None


def _piece(event: dict) -> str:
    try:
        choice = (event.get("choices") or [{}])[0]
        content = (choice.get("delta") or {}).get("content")
    except (AttributeError, TypeError, IndexError):
        raise EndpointError(EndpointCode.FAILED, "The endpoint's stream is not an OpenAI-style chat stream.") from None
    return content if isinstance(content, str) else ""


def _count(usage: dict, name: str) -> int | None:
    value = usage.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def stream_chat(endpoint, messages: list[dict]) -> Iterator[tuple[str, object]]:
    """Yield ``("token", str)`` for each piece of the answer as it arrives, then ``("done", Answer)``.

    ``endpoint``: a ``tasks.models.Endpoint`` (its ``model`` loaded). Raises ``EndpointError``
    (codes ``endpoint_failed``, ``endpoint_timed_out``, ``endpoint_unavailable``) when the call
    fails, and ``RuleError`` when the URL is no longer allowed (see the module docstring).
    """
    import httpx

    if endpoint.api != endpoint.Api.CHAT:
        answer = endpoints.call(endpoint, messages)
        answer.raw["first_token_ms"] = answer.latency_ms
        yield "token", answer.text
        yield "done", answer
        return
    model_id = endpoint.model_id
    if endpoints.breaker_open_for(model_id) > 0:
        raise EndpointError(EndpointCode.UNAVAILABLE, "The endpoint's circuit breaker is open after repeated failures.")
    url = endpoints.api_url(endpoint)
    endpoints.check_url(endpoint.base_url)
    client, semaphore = endpoints._client(endpoint)
    key = endpoints.api_key(endpoint)
    headers = {"Authorization": f"Bearer {key}", "Accept": "text/event-stream"} if key else {"Accept": "text/event-stream"}
    body = endpoints.request_body(endpoint, messages) | {"stream": True, "stream_options": {"include_usage": True}}
    limit = int(endpoints._setting("DYNABENCH_ENDPOINT_MAX_RESPONSE_BYTES", 2**20))
    started = time.perf_counter()
    error, shown = None, False
    for attempt in range(endpoint.max_retries + 1):
        retry_after = None
        try:
            with semaphore, client.stream("POST", url, json=body, headers=headers) as response:
                if response.status_code == 200:
                    text, usage, finish, first_ms, chunk_id = [], {}, "", None, ""
                    for event in _events(response, limit):
                        if event is None:
                            break
                        if not isinstance(event, dict):
                            raise EndpointError(EndpointCode.FAILED, "The endpoint's stream is not an OpenAI-style chat stream.")
                        chunk_id = chunk_id or str(event.get("id", ""))[:200]
                        if isinstance(event.get("usage"), dict):
                            usage = event["usage"]
                        choices = event.get("choices") or []
                        if choices and isinstance(choices[0], dict) and choices[0].get("finish_reason"):
                            finish = str(choices[0]["finish_reason"])[:50]
                        piece = _piece(event) if choices else ""
                        if piece:
                            if first_ms is None:
                                first_ms = (time.perf_counter() - started) * 1000
                            shown = True
                            text.append(piece)
                            yield "token", piece
                    latency_ms = (time.perf_counter() - started) * 1000
                    whole = "".join(text)
                    raw = {"id": chunk_id, "model": endpoint.model_name, "finish_reason": finish, "text": whole,
                           "usage": usage, "stream": True, "first_token_ms": round(first_ms if first_ms is not None else latency_ms, 3)}
                    endpoints._record_outcome(model_id, True)
                    yield "done", Answer(text=whole, raw=raw, latency_ms=latency_ms, prompt_tokens=_count(usage, "prompt_tokens"),
                                         completion_tokens=_count(usage, "completion_tokens"))
                    return
                response.read()
                error = EndpointError(EndpointCode.FAILED, f"The endpoint answered HTTP {response.status_code}.")
                if response.status_code != 429 and response.status_code < 500:
                    break
                retry_after = response.headers.get("retry-after")
        except httpx.TimeoutException:
            error = EndpointError(EndpointCode.TIMED_OUT, f"The endpoint did not answer within {endpoint.timeout_s:g} s.")
            break
        except httpx.TransportError as exc:
            error = EndpointError(EndpointCode.FAILED, f"The connection to the endpoint failed ({type(exc).__name__}).")
        except EndpointError as exc:
            error = exc
            break
        if shown:
            break
        if attempt < endpoint.max_retries:
            time.sleep(endpoints._backoff(attempt, retry_after))
    endpoints._record_outcome(model_id, False, error.message)
    raise error


def sse(event: str, data) -> bytes:
    """One server-sent event (``event:`` name, ``data:`` JSON on one line), as the pages send them."""
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()
