"""The log lines of one chat turn, from the page's request to the model call made while the answer
streams, carry the one request id the response names in ``X-Request-ID``."""

import logging
import re

import pytest
from django.urls import reverse

from dynabench import request_ids
from tests.generative_support import read_stream


class _Records(logging.Handler):
    def __init__(self):
        super().__init__()
        self.records = []
        self.addFilter(request_ids.RequestIdFilter())

    def emit(self, record):
        self.records.append(record)


@pytest.fixture
def logged():
    """The records logged, with httpx's line per request to the endpoint (the model call) let through."""
    handler, httpx = _Records(), logging.getLogger("httpx")
    level = httpx.level
    httpx.setLevel(logging.INFO)
    logging.getLogger().addHandler(handler)
    yield handler.records
    logging.getLogger().removeHandler(handler)
    httpx.setLevel(level)


def test_the_model_calls_lines_carry_the_turns_request_id(client, annotator, chat_task, endpoint_server, logged):
    client.force_login(annotator)
    client.post(reverse("annotation:acknowledge_warning", args=[chat_task.code]))
    page = client.get(reverse("annotation:chat", args=[chat_task.code]) + "?mode=conversation")
    state = re.search(r'name="state" value="([^"]+)"', page.content.decode()).group(1)
    endpoint_server.fail_next = [503]  # the first try fails and is retried: two requests to the endpoint

    turn = client.post(reverse("annotation:chat_turn", args=[chat_task.code]), {"state": state, "prompt": "hello"},
                       HTTP_ACCEPT="text/event-stream")
    read_stream(turn)

    from_the_call = [r for r in logged if r.name == "httpx" and endpoint_server.url in r.getMessage()]
    assert len(from_the_call) == 2, [r.getMessage() for r in logged]
    assert {r.request_id for r in from_the_call} == {turn["X-Request-ID"]}
    assert page["X-Request-ID"] != turn["X-Request-ID"]
