"""Streamed chat answers of endpoint models, for the open-ended kind's conversations
(``tasks/kinds/open_ended.py``) and its side-by-side comparisons.

``stream_chat(endpoint, messages)`` sends one ``/v1/chat/completions`` request with ``"stream":
true`` (and ``stream_options.include_usage``) and yields the answer's text as the endpoint sends
it: ``("token", piece)`` per server-sent event that carries text, then one ``("done", Answer)``
(``tasks.loop.endpoints.base.Answer``: the whole text, finish reason, usage, latency, and ``first_token_ms``
in ``raw``). It keeps every rule of ``tasks.loop.endpoints.calls.call``: the URL is checked again before the
call (allow-list, no server-side request forgery), the circuit breaker refuses at once while
open and counts the outcome, the key goes only into the ``Authorization`` header, at most
``max_concurrency`` calls are in flight across all processes (``tasks.loop.endpoints.slots``), and the answer is read up to
``DYNABENCH_ENDPOINT_MAX_RESPONSE_BYTES``. A 429, a 5xx or a lost connection *before the first
token* is retried with the same backoff; once text has been shown a failure ends the stream
(``EndpointError``) rather than repeat it. A ``/v1/completions`` endpoint cannot stream chat:
its whole answer (``tasks.loop.endpoints.aio.acall``) comes as one piece. It runs on the event
loop (an async generator): waiting on the endpoint holds no thread.

Streamed answers are not put in the response cache: a conversation's turns are asked once.

A local causal language model directory (safetensors only, loaded by the registry) answers in
process: ``CausalLMPredictor.stream`` gives the same events.
"""

from __future__ import annotations

import json
import threading
import time
from typing import AsyncIterator, Iterator

from dynabench.jsonbounds import loads_bounded
from tasks.loop import gate
from tasks.loop.endpoints.aio import acall, acheck, areserve, async_client_for, headers_for
from tasks.loop.endpoints.base import Answer, EndpointCode, EndpointError, setting
from tasks.loop.endpoints.breaker import record_outcome
from tasks.loop.endpoints.calls import Retries, request_body
from tasks.loop.endpoints.slots import slots
from tasks.loop.endpoints.urls import api_url
from tasks.loop.registry import Predictor


async def _events(response, limit: int) -> AsyncIterator[dict | None]:
    """The JSON payloads of a server-sent event stream (``None`` for ``[DONE]``), read up to ``limit`` bytes."""
    size = 0
    async for line in response.aiter_lines():
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


async def stream_chat(endpoint, messages: list[dict]) -> AsyncIterator[tuple[str, object]]:
    """Yield ``("token", str)`` for each piece of the answer as it arrives, then ``("done", Answer)``,
    from the event loop: while the endpoint thinks, no thread is held.

    ``endpoint``: a ``tasks.models.Endpoint`` (its ``model`` loaded). Raises ``EndpointError``
    (codes ``endpoint_failed``, ``endpoint_timed_out``, ``endpoint_unavailable``) when the call
    fails, and ``RuleError`` when the URL is no longer allowed (see the module docstring). Retries
    follow ``tasks.loop.endpoints.calls.Retries``, and stop once part of the answer has been shown.
    The slot of the endpoint's shared concurrency limit is renewed as the stream is read.
    """
    if endpoint.api != endpoint.Api.CHAT:
        answer = await acall(endpoint, messages)
        answer.raw["first_token_ms"] = answer.latency_ms
        yield "token", answer.text
        yield "done", answer
        return
    model = endpoint.model  # cached on the predictor's endpoint (predictor_for): no query here
    admission = gate.admission_for(model)
    await acheck(endpoint)
    url, client = api_url(endpoint), async_client_for(endpoint)
    headers = headers_for(endpoint, Accept="text/event-stream")
    body = request_body(endpoint, messages) | {"stream": True, "stream_options": {"include_usage": True}}
    limit = int(setting("DYNABENCH_ENDPOINT_MAX_RESPONSE_BYTES", 2**20))
    renew_every = slots(endpoint).lease_s / 3
    reservation = await areserve(admission, messages, endpoint.params)
    started = time.perf_counter()
    shown = False
    tries = Retries(endpoint)
    async for _ in tries:
        with tries.guard():
            async with slots(endpoint).ahold() as renew, client.stream("POST", url, json=body, headers=headers) as response:
                if response.status_code == 200:
                    text, usage, finish, first_ms, chunk_id = [], {}, "", None, ""
                    renewed = time.monotonic()
                    async for event in _events(response, limit):
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
                        if time.monotonic() - renewed > renew_every:
                            await renew()
                            renewed = time.monotonic()
                    latency_ms = (time.perf_counter() - started) * 1000
                    whole = "".join(text)
                    raw = {"id": chunk_id, "model": endpoint.model_name, "finish_reason": finish, "text": whole,
                           "usage": usage, "stream": True, "first_token_ms": round(first_ms if first_ms is not None else latency_ms, 3)}
                    answer = Answer(text=whole, raw=raw, latency_ms=latency_ms, prompt_tokens=_count(usage, "prompt_tokens"),
                                    completion_tokens=_count(usage, "completion_tokens"))
                    admission.settle(reservation, answer)
                    record_outcome(model, True)
                    yield "done", answer
                    return
                await response.aread()
                tries.refused(response)
        if shown:
            tries.stop()
    admission.settle(reservation, None, latency_ms=(time.perf_counter() - started) * 1000)
    record_outcome(model, False, tries.error.message)
    raise tries.error


def sse(event: str, data) -> bytes:
    """One server-sent event (``event:`` name, ``data:`` JSON on one line), as the pages send them."""
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


# --- a local causal language model, in-process ---------------------------------------------------

DEFAULT_MAX_NEW_TOKENS = 128


def _prompt_text(tokenizer, messages: list[dict]) -> str:
    """The model's own chat template when its tokenizer has one, else ``role: content`` lines and ``assistant:``."""
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return "\n".join(f"{m['role']}: {m['content']}" for m in messages) + "\nassistant:"


class CausalLMPredictor(Predictor):
    """A local causal language model (a Hugging Face ``*ForCausalLM`` directory, safetensors only,
    loaded and checked by the registry like every model directory: ``tasks.loop.registry.load_predictor``)
    answering the open-ended kind in-process.

    ``stream(messages)`` yields ``("token", piece)`` as ``generate`` produces them (transformers'
    ``TextIteratorStreamer``, generation in a thread), then ``("done", Answer)``; decoding is greedy
    (deterministic) for at most the task's ``max_new_tokens`` (128 by default). ``predict`` answers
    ``{"text": ...}`` per input, for the registry's contract. One generation at a time per model.
    """

    kind = "open_ended"

    @classmethod
    def for_task(cls, task, hf_config: dict, **common) -> "CausalLMPredictor":
        return cls(max_new_tokens=int(task.config.get("max_new_tokens", DEFAULT_MAX_NEW_TOKENS)), **common)

    def __init__(self, *, max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS, **kwargs):
        super().__init__(**kwargs)
        self.max_new_tokens = max_new_tokens
        self._generate_lock = threading.Lock()

    @property
    def params(self) -> dict:
        return {"max_new_tokens": self.max_new_tokens, "do_sample": False}

    def stream(self, messages: list[dict]) -> Iterator[tuple[str, object]]:
        from transformers import TextIteratorStreamer

        import torch

        started = time.perf_counter()
        with self._tokenizer_lock:
            ids = self.tokenizer(_prompt_text(self.tokenizer, messages), return_tensors="pt")["input_ids"][:, -self.max_length:]
        streamer = TextIteratorStreamer(self.tokenizer, skip_prompt=True, skip_special_tokens=True, timeout=300)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.tokenizer.eos_token_id
        kwargs = {"input_ids": ids.to(self.device), "attention_mask": torch.ones_like(ids).to(self.device),
                  "max_new_tokens": self.max_new_tokens, "do_sample": False, "streamer": streamer, "pad_token_id": pad}
        failure = []

        def run():
            try:
                with self._generate_lock, torch.inference_mode():
                    self.model.generate(**kwargs)
            except Exception as error:  # noqa: BLE001 - reported to the caller below
                failure.append(error)
                streamer.end()

        thread = threading.Thread(target=run, daemon=True, name="causal-lm-stream")
        thread.start()
        pieces, first_ms = [], None
        for piece in streamer:
            if piece:
                first_ms = first_ms if first_ms is not None else (time.perf_counter() - started) * 1000
                pieces.append(piece)
                yield "token", piece
        thread.join()
        if failure:
            raise EndpointError(EndpointCode.FAILED, f"The local model failed to generate ({type(failure[0]).__name__}).")
        text = "".join(pieces)
        latency_ms = (time.perf_counter() - started) * 1000
        n_new = len(self.tokenizer(text, add_special_tokens=False)["input_ids"]) if text else 0
        raw = {"id": "", "model": "local", "finish_reason": "", "text": text, "usage": {}, "stream": True,
               "first_token_ms": round(first_ms if first_ms is not None else latency_ms, 3)}
        yield "done", Answer(text=text, raw=raw, latency_ms=latency_ms, prompt_tokens=int(ids.shape[1]), completion_tokens=n_new)

    def predict(self, inputs, *, batch_size=None):
        (prompts,) = self._fields(inputs)
        out = []
        for prompt in prompts:
            steps = list(self.stream([{"role": "user", "content": prompt}]))
            out.append({"text": steps[-1][1].text})
        return out
