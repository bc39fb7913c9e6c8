"""When the endpoint keeps failing, the streamed turn ends with a ``problem`` event saying why; the
turn is not counted, and the same conversation goes on once the endpoint answers again."""

import json
import re

from django.urls import reverse

from annotation.models import Example
from tests.generative_support import read_stream


def _state(html):
    return re.search(r'name="state" value="([^"]+)"', html).group(1)


def _events(response):
    body = read_stream(response).decode()
    return [(re.search(r"^event: (.*)$", b, re.M).group(1), json.loads(re.search(r"^data: (.*)$", b, re.M).group(1)))
            for b in body.strip().split("\n\n")]


def test_a_failed_turn_is_not_counted(client, annotator, chat_task, endpoint_server):
    client.force_login(annotator)
    client.post(reverse("annotation:acknowledge_warning", args=[chat_task.code]))
    state = _state(client.get(reverse("annotation:chat", args=[chat_task.code]) + "?mode=conversation").content.decode())
    turn = reverse("annotation:chat_turn", args=[chat_task.code])
    endpoint_server.fail_next = [503] * 4  # more than the endpoint's 3 retries
    events = _events(client.post(turn, {"state": state, "prompt": "hello"}, HTTP_ACCEPT="text/event-stream"))
    assert [name for name, _ in events] == ["problem"]
    assert "did not finish" in events[0][1]["message"] and "HTTP 503" in events[0][1]["message"]
    assert "3 turns left" in events[0][1]["html"]  # the conversation is where it was
    events = _events(client.post(turn, {"state": state, "prompt": "hello"}, HTTP_ACCEPT="text/event-stream"))
    assert events[-1][0] == "done"
    assert "3 turns left" not in events[-1][1]["html"] and "2 turns left" in events[-1][1]["html"]
    assert Example.objects.count() == 0
