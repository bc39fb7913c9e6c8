"""A streamed chat call (``tasks/loop/chat.py``) retries by the one rule of ``tasks.loop.endpoints.calls.Retries``,
as a plain call does: a 429 or a 5xx is tried again until the endpoint answers (within
``max_retries``), a 401 is not (a configuration error, with the server's reason), and running out of tries ends with the last failure's reason."""

import copy

import pytest

from asgiref.sync import async_to_sync

from tasks.loop.chat import stream_chat
from tasks.loop.endpoints.base import EndpointError
from tasks.loop.endpoints.predictor import predictor_for

MESSAGES = [{"role": "user", "content": "tell me about the harbour"}]


@async_to_sync
async def streamed(endpoint, messages) -> list[tuple]:
    """Every step of ``stream_chat`` (an async generator), run to its end."""
    return [step async for step in stream_chat(endpoint, messages)]


@pytest.fixture
def endpoint(chat_task):
    endpoint = copy.copy(predictor_for(chat_task.loop[0]).endpoint)  # the predictor's own stays as it is
    endpoint.max_retries = 2
    return endpoint


def test_a_429_and_a_503_are_tried_again_and_the_answer_streams(endpoint, endpoint_server):
    endpoint_server.fail_next = [429, 503]

    steps = streamed(endpoint, MESSAGES)

    assert len(endpoint_server.requests) == 3 and all(r["body"]["stream"] for r in endpoint_server.requests)
    (answer,) = [value for step, value in steps if step == "done"]
    assert "".join(value for step, value in steps if step == "token") == answer.text and answer.text


def test_a_401_is_not_tried_again_and_says_the_servers_reason(endpoint, endpoint_server):
    endpoint_server.fail_next = [401]

    with pytest.raises(EndpointError) as failed:
        streamed(endpoint, MESSAGES)

    assert failed.value.code == "endpoint_misconfigured" and failed.value.config_error
    assert "HTTP 401" in failed.value.message and "told to answer 401" in failed.value.message
    assert len(endpoint_server.requests) == 1


def test_the_tries_end_at_max_retries_with_the_last_reason(endpoint, endpoint_server):
    endpoint_server.fail_next = [503, 503, 502]

    with pytest.raises(EndpointError) as failed:
        streamed(endpoint, MESSAGES)

    assert "HTTP 502" in failed.value.message and len(endpoint_server.requests) == 3
