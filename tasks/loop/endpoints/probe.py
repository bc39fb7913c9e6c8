"""*Test connection*: one short call to an endpoint that says whether it answers, and if not, why.

``acheck_connection(endpoint)`` sends one tiny chat message (``PROBE_MESSAGES``, at most
``PROBE_MAX_TOKENS`` tokens), or to a transcriptions API one second of a quiet 440 Hz tone
(``probe_clip``), once (no retry) through every guard of an ordinary call (``aio.acall``'s):
the URL checked against the allow-list first, the key only in the ``Authorization`` header, the
endpoint's timeout and shared concurrency limit, the answer read up to its byte bound, the outcome
counted in the circuit breaker (a configuration error is not counted: it is reported to the owners,
``breaker.record_outcome``). Unlike an annotator's call it is sent while the breaker is open, so an
owner can see whether the endpoint answers again. Nothing goes into the response cache or a round's
budget. It runs on the event loop (an async view): waiting on the endpoint holds no thread.
"""

from __future__ import annotations

import copy
import dataclasses
import time

from asgiref.sync import sync_to_async

from dynabench.errors import RuleError
from tasks.loop import gate
from tasks.loop.endpoints.aio import aread_bounded, async_client_for, headers_for
from tasks.loop.endpoints.base import REASON_CHARS, EndpointError, audio_messages, setting
from tasks.loop.endpoints.breaker import record_outcome
from tasks.loop.endpoints.calls import Retries, answer_of, request_body, request_content
from tasks.loop.endpoints.slots import slots
from tasks.loop.endpoints.urls import api_url, check_url

PROBE_MESSAGES = [{"role": "user", "content": "Reply with one word: ready."}]

PROBE_MAX_TOKENS = 16


@dataclasses.dataclass(frozen=True)
class ConnectionCheck:
    """What *Test connection* found: ``ok`` (the endpoint answered 200 with a completion), ``text``
    (its answer, or the failure's message with the server's own reason; at most ``REASON_CHARS``
    characters, plain text for pages to escape), ``code`` (the failure's ``EndpointCode``, '' when
    ok), ``config_error`` (the endpoint refused the settings: fix them) and ``latency_ms``."""

    ok: bool
    text: str
    code: str = ""
    config_error: bool = False
    latency_ms: float | None = None


def _bounded(text: str) -> str:
    return text if len(text) <= REASON_CHARS else text[: REASON_CHARS - 1] + "…"


def probe_clip() -> bytes:
    """One second of a 440 Hz tone at a tenth of full scale, 16 kHz mono 16-bit FLAC: what *Test connection*
    asks a transcriptions API to transcribe (any answer, even an empty one, says the server reads audio)."""
    import numpy as np

    from tasks.data.audio_files import MODEL_RATE, model_flac

    t = np.arange(MODEL_RATE) / MODEL_RATE
    return model_flac(0.1 * np.sin(2 * np.pi * 440 * t))


def _probe(endpoint):
    """A copy of ``endpoint`` (never saved) that tries once and asks for at most ``PROBE_MAX_TOKENS`` tokens
    (a transcriptions API takes no token limit). Its timeout and concurrency stay the endpoint's, so it
    shares the endpoint's client and slots."""
    probe = copy.copy(endpoint)
    probe.max_retries = 0
    if endpoint.api != endpoint.Api.TRANSCRIPTIONS:
        probe.params = {**endpoint.params, "max_tokens": min(int(endpoint.params.get("max_tokens") or PROBE_MAX_TOKENS),
                                                             PROBE_MAX_TOKENS)}
    return probe


async def acheck_connection(endpoint) -> ConnectionCheck:
    """Send ``PROBE_MESSAGES`` to ``endpoint`` (a ``tasks.models.Endpoint`` with its ``model`` loaded) once
    and return a ``ConnectionCheck``; never raises for what the endpoint or the allow-list says (those are
    the answer). Sent inside the gate's admission for ``test`` (``tasks.loop.gate.aadmit``), which
    records it; it reads no database itself."""
    probe = _probe(endpoint)
    model = endpoint.model
    admission = gate.admission_for(model)
    started = time.perf_counter()
    try:
        await sync_to_async(check_url, thread_sensitive=False)(probe.base_url)
        client, url, headers = async_client_for(probe), api_url(probe), headers_for(probe)
        messages = audio_messages(probe_clip()) if probe.api == probe.Api.TRANSCRIPTIONS else PROBE_MESSAGES
        content = request_content(probe, request_body(probe, messages))
    except RuleError as refused:
        return ConnectionCheck(False, _bounded(refused.message), refused.code, config_error=True)
    limit = int(setting("DYNABENCH_ENDPOINT_MAX_RESPONSE_BYTES", 2**20))
    tries = Retries(probe)
    async for _ in tries:
        with tries.guard():
            async with slots(probe).ahold(), client.stream("POST", url, **content, headers=headers) as response:
                data = await aread_bounded(response, limit)
                if response.status_code == 200:
                    latency_ms = (time.perf_counter() - started) * 1000
                    answer = answer_of(probe, data, latency_ms)
                    admission.settle(None, answer)
                    record_outcome(model, True)
                    return ConnectionCheck(True, _bounded(answer.text), latency_ms=latency_ms)
                tries.refused(response, data)
    error: EndpointError = tries.error
    admission.settle(None, None, latency_ms=(time.perf_counter() - started) * 1000)
    record_outcome(model, False, error.message)
    return ConnectionCheck(False, _bounded(str(error.message)), error.code, config_error=error.config_error)
