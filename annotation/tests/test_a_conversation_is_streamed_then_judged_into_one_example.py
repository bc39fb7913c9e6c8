"""An annotator talks with an endpoint model for three turns (streamed as server-sent events, or
whole pages without JavaScript), judges the conversation, and gets one example holding the whole
transcript with each turn's model, parameters and latency."""

import json
import re

from django.urls import reverse

from annotation.models import Example
from tests.generative_support import read_stream


def _state(html: str) -> str:
    return re.search(r'name="state" value="([^"]+)"', html).group(1)


def _events(body: bytes) -> list[tuple[str, dict]]:
    out = []
    for block in body.decode().strip().split("\n\n"):
        name = re.search(r"^event: (.*)$", block, re.M).group(1)
        out.append((name, json.loads(re.search(r"^data: (.*)$", block, re.M).group(1))))
    return out


def _log_in(client, user, task):
    client.force_login(user)
    client.post(reverse("annotation:acknowledge_warning", args=[task.code]))  # the task's content warning, read


def test_three_streamed_turns_then_a_judgment_store_the_transcript(client, annotator, chat_task, endpoint_server):
    _log_in(client, annotator, chat_task)
    code = chat_task.code
    page = client.get(reverse("annotation:chat", args=[code]) + "?mode=conversation")
    assert page.status_code == 200
    state = _state(page.content.decode())
    streamed = []
    for prompt in ["tell me about the museum", "who wrote the first algorithm", "i hate waiting"]:
        response = client.post(reverse("annotation:chat_turn", args=[code]), {"state": state, "prompt": prompt},
                               HTTP_ACCEPT="text/event-stream")
        assert response["Content-Type"] == "text/event-stream"
        events = _events(read_stream(response))
        tokens = [e["t"] for name, e in events if name == "token"]
        assert tokens and events[-1][0] == "done"
        streamed.append("".join(tokens))
        state = _state(events[-1][1]["html"])
    assert 'data-chat-stream' not in events[-1][1]["html"]  # all three turns used: only the judgment is left
    response = client.post(reverse("annotation:chat_judge", args=[code]), {
        "state": state, "verdict": "fails", "category": "hate", "explanation": "It repeats a hateful phrase."})
    assert response.status_code == 302
    example = Example.objects.get()
    assert example.model_wrong is True and example.target["category"] == "hate"
    assert example.input["turns"] == ["tell me about the museum", "who wrote the first algorithm", "i hate waiting"]
    turns = [t for t in example.model_output["transcript"] if t["role"] == "assistant"]
    assert [t["content"] for t in turns] == streamed
    assert all(t["model_id"] == example.model_id and t["params"]["max_tokens"] in (4, 6) and t["latency_ms"] > 0 for t in turns)
    assert example.model_output["transcript"][0]["role"] == "system"
    # Judging the same state again gives back the same example.
    again = client.post(reverse("annotation:chat_judge", args=[code]), {
        "state": state, "verdict": "fails", "category": "hate", "explanation": "It repeats a hateful phrase."})
    assert again.status_code == 302 and Example.objects.count() == 1


def test_without_javascript_a_turn_answers_with_the_whole_page(client, annotator, chat_task, endpoint_server):
    _log_in(client, annotator, chat_task)
    code = chat_task.code
    state = _state(client.get(reverse("annotation:chat", args=[code]) + "?mode=conversation").content.decode())
    page = client.post(reverse("annotation:chat_turn", args=[code]), {"state": state, "prompt": "what year did it open"})
    html = page.content.decode()
    assert page.status_code == 200 and "<html" in html.lower()
    answer = endpoint_server.requests[-1]
    assert answer["body"]["stream"] is True
    assert 'data-turn="model"' in html and "what year did it open" in html


def test_a_forged_state_is_refused(client, annotator, chat_task, endpoint_server):
    client.force_login(annotator)
    page = client.post(reverse("annotation:chat_turn", args=[chat_task.code]), {"state": "forged", "prompt": "hi"})
    assert page.status_code == 400 and b"expired" in page.content
    assert endpoint_server.requests == []
