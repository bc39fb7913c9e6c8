"""A streamed chat call (``tasks/loop/chat.py``) yields the answer piece by piece as the real local
server sends it, and keeps every rule of an ordinary call: the allow-list is checked again before
the call, an open breaker refuses at once, and failures count towards the breaker."""

import pytest

from asgiref.sync import async_to_sync

from dynabench.errors import RuleError
from tasks.loop.chat import stream_chat
from tasks.loop.endpoints.base import EndpointError
from tasks.loop.endpoints.breaker import breaker_state
from tasks.loop.endpoints.predictor import predictor_for
from tests.endpoint_fixtures import allow_local_server


@async_to_sync
async def streamed(endpoint, messages) -> list[tuple]:
    """Every step of ``stream_chat`` (an async generator), run to its end."""
    return [step async for step in stream_chat(endpoint, messages)]


def _endpoint(chat_task):
    return predictor_for(chat_task.loop[0]).endpoint


def test_the_answer_comes_piece_by_piece(chat_task, endpoint_server):
    endpoint = _endpoint(chat_task)
    steps = streamed(endpoint, [{"role": "user", "content": "tell me about the museum"}])
    pieces = [value for step, value in steps if step == "token"]
    (answer,) = [value for step, value in steps if step == "done"]
    assert len(pieces) == 6 and "".join(pieces) == answer.text  # max_tokens 6, one event per token
    assert answer.completion_tokens == 6 and answer.raw["stream"] is True
    assert 0 < answer.raw["first_token_ms"] <= answer.latency_ms
    assert endpoint_server.requests[-1]["body"]["stream"] is True


def test_the_allow_list_and_the_breaker_hold(chat_task, endpoint_server, settings):
    endpoint = _endpoint(chat_task)
    settings.DYNABENCH_ENDPOINT_ALLOWLIST = []
    with pytest.raises(RuleError) as refused:
        streamed(endpoint, [{"role": "user", "content": "hi"}])
    assert refused.value.code == "endpoint_url_not_allowed"
    assert endpoint_server.requests == []
    allow_local_server(settings, endpoint_server.url)
    settings.DYNABENCH_ENDPOINT_BREAKER_FAILURES = 1
    endpoint_server.fail_next = [500] * 4
    with pytest.raises(EndpointError):
        streamed(endpoint, [{"role": "user", "content": "hi"}])
    assert breaker_state(endpoint.model)["open"]
    asked = len(endpoint_server.requests)
    with pytest.raises(EndpointError) as unavailable:
        streamed(endpoint, [{"role": "user", "content": "hi"}])
    assert unavailable.value.code == "endpoint_unavailable" and len(endpoint_server.requests) == asked
