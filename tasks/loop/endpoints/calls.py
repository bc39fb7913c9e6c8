"""Calls to an endpoint from a thread: one process-wide ``httpx.Client`` per endpoint setting, the
retry rule (shared with the event loop's calls, ``aio``), the request body, and the plain JSON calls."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import threading
import time
from contextlib import contextmanager


from dynabench.errors import RuleError
from dynabench.jsonbounds import loads_bounded
from tasks.loop import gate
from tasks.loop.endpoints.base import (
    AUDIO_TYPES, Answer, BACKOFF_BASE_S, BACKOFF_MAX_S, EndpointCode, EndpointError, REASON_BYTES, REASON_CHARS, logger, setting,
)
from tasks.loop.endpoints.breaker import breaker_open_for, record_outcome
from tasks.loop.endpoints.keys import api_key
from tasks.loop.endpoints.slots import slots
from tasks.loop.endpoints.urls import api_url, check_url


_clients: dict[tuple, object] = {}
_clients_lock = threading.Lock()


def _reset_after_fork() -> None:
    global _clients_lock
    _clients_lock = threading.Lock()
    _clients.clear()


os.register_at_fork(after_in_child=_reset_after_fork)


def client_for(endpoint):
    """The process's ``httpx.Client`` for the endpoint's current settings (a changed record gets a new one)."""
    import httpx

    key = (endpoint.model_id, endpoint.updated_at, endpoint.max_concurrency, endpoint.timeout_s)
    with _clients_lock:
        if key not in _clients:
            for old in [k for k in _clients if k[0] == endpoint.model_id]:
                _clients.pop(old).close()
            limits = httpx.Limits(max_connections=endpoint.max_concurrency, max_keepalive_connections=endpoint.max_concurrency)
            _clients[key] = httpx.Client(
                timeout=httpx.Timeout(endpoint.timeout_s), limits=limits, follow_redirects=False, trust_env=False,
            )
        return _clients[key]


def _text(content) -> str:
    """A message's text for a completions prompt; content parts (an image) cannot go there: refused
    (``create_endpoint_model`` keeps kinds that send images on the chat API; this catches an endpoint
    switched to completions afterwards)."""
    if isinstance(content, str):
        return content
    raise RuleError(EndpointCode.BAD_SETTINGS, "This task sends images, which only the chat API carries: set the endpoint's API to chat.",
                    field="api")


def _audio_part(messages: list[dict]) -> dict:
    """The ``input_audio`` part (``{"data": base64, "format"}``) of the last message (``base.audio_messages``);
    ``RuleError`` when the messages carry no clip (a kind that sends text, on an endpoint switched to transcriptions)."""
    content = messages[-1]["content"] if messages else None
    for part in content if isinstance(content, list) else []:
        audio = part.get("input_audio") if isinstance(part, dict) and part.get("type") == "input_audio" else None
        if isinstance(audio, dict) and isinstance(audio.get("data"), str) and audio.get("format") in AUDIO_TYPES:
            return audio
    raise RuleError(EndpointCode.BAD_SETTINGS, "This task sends no audio, which the transcriptions API needs: set the "
                    "endpoint's API to chat or completions.", field="api")


def request_body(endpoint, messages: list[dict]) -> dict:
    """What one call sends, as JSON: chat messages; for ``/v1/completions`` one prompt joining them; for
    ``/v1/audio/transcriptions`` the form fields (``model``, the parameters, ``response_format`` ``json``)
    and the clip under ``file`` (``{"data": base64, "format"}``; ``request_content`` sends it as a file)."""
    body = {"model": endpoint.model_name, **endpoint.params}
    if endpoint.api == endpoint.Api.CHAT:
        body["messages"] = messages
    elif endpoint.api == endpoint.Api.TRANSCRIPTIONS:
        body.update(response_format="json", file=_audio_part(messages))
    else:
        body["prompt"] = "\n\n".join(_text(m["content"]) for m in messages) + "\n"
    return body


def request_content(endpoint, body: dict) -> dict:
    """The ``httpx`` keyword arguments that send ``body`` (``request_body``): ``json=`` for the chat and
    completions APIs; for transcriptions a ``multipart/form-data`` request, as OpenAI's API takes it: the
    clip's bytes as ``file`` (``clip.flac``, ``audio/flac``: the stored 16 kHz mono copy, which vLLM,
    ``transformers serve`` and OpenAI read), every other entry as a text field."""
    if endpoint.api != endpoint.Api.TRANSCRIPTIONS:
        return {"json": body}
    import base64

    fields = {name: str(value) for name, value in body.items() if name != "file"}
    audio = body["file"]
    clip = (f"clip.{audio['format']}", base64.b64decode(audio["data"]), AUDIO_TYPES[audio["format"]])
    return {"data": fields, "files": {"file": clip}}


def cache_key(endpoint, messages: list[dict]) -> str:
    """sha256 of the request that decides the answer (API, model name, parameters, messages; a clip by its bytes)."""
    return hashlib.sha256(json.dumps(request_body(endpoint, messages) | {"api": endpoint.api}, sort_keys=True).encode()).hexdigest()


def read_bounded(response, limit: int) -> bytes:
    chunks, size = [], 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > limit:
            raise EndpointError(EndpointCode.FAILED, f"The endpoint's answer is larger than {limit} bytes.")
        chunks.append(chunk)
    return b"".join(chunks)


def answer_of(endpoint, data: bytes, latency_ms: float) -> Answer:
    """The ``Answer`` in an endpoint's 200 answer: ``choices[0]``'s message content (chat) or text
    (completions), or a transcription's ``text``; ``EndpointError`` when it is not such an answer."""
    transcription = endpoint.api == endpoint.Api.TRANSCRIPTIONS
    try:
        body = loads_bounded(data)
        choice = body if transcription else body["choices"][0]
        text = choice["message"]["content"] if endpoint.api == endpoint.Api.CHAT else choice["text"]
        if not isinstance(text, str):
            raise TypeError("the answer's text is not a string")
    except (ValueError, KeyError, IndexError, TypeError) as error:
        shape = "transcription ({\"text\": ...})" if transcription else "completion"
        raise EndpointError(EndpointCode.FAILED, f"The endpoint's answer is not an OpenAI-style {shape} ({error}).") from None
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}

    def count(name):
        value = usage.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None

    raw = {"id": str(body.get("id", ""))[:200], "model": str(body.get("model", ""))[:200],
           "finish_reason": str(choice.get("finish_reason", ""))[:50], "text": text, "usage": usage}
    return Answer(text=text, raw=raw, latency_ms=latency_ms, prompt_tokens=count("prompt_tokens"),
                  completion_tokens=count("completion_tokens"))


def _key_or_none(endpoint) -> str:
    try:
        return api_key(endpoint)
    except RuleError:
        return ""


def server_reason(body: bytes, *, hide: str = "", limit: int = REASON_CHARS) -> str:
    """The reason an endpoint gave for refusing a request, from the first ``REASON_BYTES`` of its answer:
    OpenAI's ``{"error": {"message": ...}}``, ``{"error": "..."}``, ``{"message": ...}`` or FastAPI's
    ``{"detail": ...}``, else the text itself; on one line, ``hide`` (the key) replaced by ``[key]``,
    cut to ``limit`` characters ('' when the answer says nothing). Plain text: pages escape it."""
    text = body[:REASON_BYTES].decode("utf-8", errors="replace")
    try:
        data = loads_bounded(body[:REASON_BYTES]) if len(body) <= REASON_BYTES else None
    except ValueError:
        data = None
    if isinstance(data, dict):
        found = data.get("error", data.get("message", data.get("detail")))
        if isinstance(found, dict):
            found = found.get("message", found)
        if found is not None:
            text = found if isinstance(found, str) else json.dumps(found, ensure_ascii=False)
    text = " ".join(text.split())
    if hide:
        text = text.replace(hide, "[key]")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def backoff(attempt: int, retry_after: str | None) -> float:
    if retry_after:
        try:
            return min(BACKOFF_MAX_S, max(0.0, float(retry_after)))
        except ValueError:
            pass
    return min(BACKOFF_MAX_S, BACKOFF_BASE_S * 2**attempt) * (0.5 + random.random() / 2)


class Retries:
    """The one retry rule of every request to an endpoint, plain (``call``) or streamed
    (``tasks.loop.chat.stream_chat``), from a thread (``for``) or a coroutine (``async for``): after the first try, up to ``endpoint.max_retries`` more on an
    HTTP 408, 429 or 5xx answer and on a connection error, each after ``backoff`` (the answer's
    ``Retry-After`` when it gives one, else exponential backoff with jitter, at most
    ``BACKOFF_MAX_S``); none after a timeout, another HTTP status, or an ``EndpointError`` raised
    by the try itself (a malformed or oversized answer). Another 4xx is a configuration error
    (``refused``: ``error.config_error``, the server's reason in the message). ``error`` holds the last failure
    (``EndpointError``); counting it in the circuit breaker is the caller's (``record_outcome`` reads
    a configuration error from ``error.message`` and does not count it)::

        tries = Retries(endpoint)
        for _ in tries:
            with tries.guard():
                ...  # one request; return on success, tries.refused(response) on another status
        record_outcome(model, False, tries.error.message)
        raise tries.error
    """

    def __init__(self, endpoint):
        self.endpoint = endpoint
        self.error: EndpointError | None = None
        self._stop = False
        self._retry_after: str | None = None

    def __iter__(self):
        for attempt in range(self.endpoint.max_retries + 1):
            self._retry_after = None
            yield attempt
            if self._stop:
                return
            if attempt < self.endpoint.max_retries:
                time.sleep(backoff(attempt, self._retry_after))

    async def __aiter__(self):
        """The same tries for a coroutine (``async for _ in tries``): the backoff awaits instead of sleeping."""
        for attempt in range(self.endpoint.max_retries + 1):
            self._retry_after = None
            yield attempt
            if self._stop:
                return
            if attempt < self.endpoint.max_retries:
                await asyncio.sleep(backoff(attempt, self._retry_after))

    def refused(self, response, body: bytes | None = None) -> None:
        """Record an answer other than 200 (``body``: the bytes read of it, if the caller read them).

        429, 408 and 5xx: retried (after the answer's ``Retry-After``). Any other 4xx is a configuration
        error (``config_error``; code ``endpoint_misconfigured``): the endpoint answered and refused these
        settings, so it is not retried, and its message carries the server's own reason
        (``server_reason``). Anything else (a 3xx: redirects are never followed) fails at once."""
        status = response.status_code
        if status in (408, 429) or status >= 500:
            self.error = EndpointError(EndpointCode.FAILED, f"The endpoint answered HTTP {status}.")
            self._retry_after = response.headers.get("retry-after")
            return
        self._stop = True
        if not 400 <= status < 500:
            self.error = EndpointError(EndpointCode.FAILED, f"The endpoint answered HTTP {status}.")
            return
        if body is None:
            try:
                body = response.content  # read by the caller (``aread``), else no reason to show
            except Exception:  # noqa: BLE001 - httpx.ResponseNotRead / StreamConsumed: the bytes are gone
                body = b""
        reason = server_reason(body, hide=_key_or_none(self.endpoint)) or "no reason given"
        self.error = EndpointError(
            EndpointCode.MISCONFIGURED,
            f"The endpoint refused the request as misconfigured (HTTP {status}): {reason}"
            + ("" if reason.endswith((".", "!", "?", "…")) else "."),
            config_error=True,
        )

    def stop(self) -> None:
        """No more tries (e.g. a stream that already showed part of its answer)."""
        self._stop = True

    @contextmanager
    def guard(self):
        """Run one try: a timeout, a connection error or an ``EndpointError`` inside becomes ``error``."""
        import httpx

        try:
            yield
        except httpx.TimeoutException:
            self.error = EndpointError(EndpointCode.TIMED_OUT, f"The endpoint did not answer within {self.endpoint.timeout_s:g} s.")
            self._stop = True
        except httpx.TransportError as exc:
            self.error = EndpointError(EndpointCode.FAILED, f"The connection to the endpoint failed ({type(exc).__name__}).")
        except EndpointError as exc:
            self.error = exc
            self._stop = True


def call(endpoint, messages: list[dict], *, checked: bool = False, failures_known: bool = True, admission=None,
         reserved: bool = False) -> Answer:
    """Send one request to ``endpoint`` and return its ``Answer``; raise ``EndpointError`` when it fails.

    Refuses at once while the breaker is open (``endpoint_unavailable``) and checks the URL again
    (``check_url``, a ``RuleError``), unless the caller did both just before (``checked``); retries
    429/5xx/connection errors with backoff; counts a failure in the breaker, and a success too when
    the breaker may hold failures (``failures_known``; a caller that read it closed and clean passes
    False and spares the shared cache a round trip). Thread-safe; blocks while ``max_concurrency``
    calls are in flight. Retries follow ``Retries``. Sent only inside the gate's admission of the model
    (``admission``, else the context's: ``tasks.loop.gate.admission_for``), which reserves the call of
    the round's budget first (``endpoint_budget_spent``) and records it; ``reserved``: the caller
    (``EndpointPredictor``, sending from a pool of threads) reserved and settles it in its own thread.
    """
    model = endpoint.model
    admission = admission or gate.admission_for(model)
    if not checked:
        if breaker_open_for(model) > 0:
            raise EndpointError(EndpointCode.UNAVAILABLE, "The endpoint's circuit breaker is open after repeated failures.")
        check_url(endpoint.base_url)
    url = api_url(endpoint)
    client = client_for(endpoint)
    key = api_key(endpoint)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    content = request_content(endpoint, request_body(endpoint, messages))
    limit = int(setting("DYNABENCH_ENDPOINT_MAX_RESPONSE_BYTES", 2**20))
    reservation = None if reserved else admission.reserve(messages, endpoint.params)
    started = time.perf_counter()
    tries = Retries(endpoint)
    for _ in tries:
        with tries.guard(), slots(endpoint).hold(), client.stream("POST", url, **content, headers=headers) as response:
            data = read_bounded(response, limit)
            if response.status_code == 200:
                answer = answer_of(endpoint, data, (time.perf_counter() - started) * 1000)
                if not reserved:
                    admission.settle(reservation, answer)
                if failures_known:
                    record_outcome(model, True)
                return answer
            tries.refused(response, data)
    if not reserved:
        admission.settle(reservation, None, latency_ms=(time.perf_counter() - started) * 1000)
    record_outcome(model, False, tries.error.message)
    logger.warning("endpoint model %s: %s", model.pk, tries.error.message)
    raise tries.error


def json_object(data: bytes) -> dict:
    """The JSON object of an endpoint's 200 answer (another API than completions); ``EndpointError`` when it is none."""
    try:
        parsed = loads_bounded(data)
    except ValueError as exc:
        raise EndpointError(EndpointCode.FAILED, f"The endpoint's answer is not JSON ({exc}).") from None
    if not isinstance(parsed, dict):
        raise EndpointError(EndpointCode.FAILED, "The endpoint's answer is not a JSON object.")
    return parsed


def post_json(endpoint, path: str, body: dict, *, max_bytes: int) -> tuple[dict, float]:
    """POST ``body`` to ``<base_url>/v1/<path>`` (another API of the same server, e.g. ``images/generations``)
    with every guard of ``call``: the breaker (refused at once while open), the allow-list (``check_url``,
    checked before each call), the record's timeout, its retries (``Retries``: after 408/429/5xx/lost
    connections, none after a configuration error), its concurrency limit, the key in the header only; the answer read up to ``max_bytes``.
    Returns ``(parsed JSON object, latency in ms)``; raises ``EndpointError`` (the failure counted in the
    breaker) or ``RuleError`` (a URL the allow-list refuses; the round's budget spent). Inside the gate's
    admission only, as ``call``."""
    model = endpoint.model
    admission = gate.admission_for(model)
    if breaker_open_for(model) > 0:
        raise EndpointError(EndpointCode.UNAVAILABLE, "The endpoint's circuit breaker is open after repeated failures.")
    check_url(endpoint.base_url)
    base = endpoint.base_url.rstrip("/")
    url = (base if base.endswith("/v1") else base + "/v1") + "/" + path.lstrip("/")
    client = client_for(endpoint)
    key = api_key(endpoint)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    reservation = admission.reserve([body.get("prompt", "")], {"max_tokens": 1})
    started = time.perf_counter()
    tries = Retries(endpoint)
    for _ in tries:
        with tries.guard(), slots(endpoint).hold(), client.stream("POST", url, json=body, headers=headers) as response:
            data = read_bounded(response, max_bytes)
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
