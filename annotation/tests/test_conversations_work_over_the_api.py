"""Conversations and side-by-side comparisons over the REST API, against the real local endpoint
server, with the chat pages' rules: the content warning is accepted first, a turn answers as JSON
or as server-sent events, the judgment stores one example (a repeat returns it), and a forged
state, a turn too many, a failed model and a task without conversations are refused."""

import json
import re

from annotation.models import Example
from tests.api.conftest import client_for
from tests.generative_support import read_stream


def _events(response) -> list[tuple[str, dict]]:
    body = read_stream(response).decode()
    return [(re.search(r"^event: (.*)$", b, re.M).group(1), json.loads(re.search(r"^data: (.*)$", b, re.M).group(1)))
            for b in body.strip().split("\n\n")]


def _url(task, tail=""):
    return f"/api/v1/tasks/{task.code}/chat{tail}"


def test_a_conversation_of_three_turns_is_judged_into_one_example(annotator, chat_task, endpoint_server):
    api = client_for(annotator)
    refused = api.post(_url(chat_task), {"mode": "conversation"}, format="json")
    assert refused.status_code == 400 and refused.json()["code"] == "content_warning"
    assert chat_task.content_warning in refused.json()["detail"]

    started = api.post(_url(chat_task), {"mode": "conversation", "accept_content_warning": True}, format="json")
    assert started.status_code == 200, started.content
    body = started.json()
    assert body["mode"] == "conversation" and body["sides"] == 1 and body["turns"] == [] and body["turns_left"] == 3
    assert set(body["context"]) == {"scenario"} and {"name": "hate", "label": "Hate and harassment"} in body["categories"]

    body = api.post(_url(chat_task, "/turns"), {"state": body["state"], "prompt": "tell me about the museum"}, format="json").json()
    streamed = api.post(_url(chat_task, "/turns"), {"state": body["state"], "prompt": "who wrote it"}, format="json",
                        HTTP_ACCEPT="text/event-stream")
    assert streamed["Content-Type"] == "text/event-stream"
    events = _events(streamed)
    assert [name for name, _ in events[:-1]] == ["token"] * (len(events) - 1) and events[-1][0] == "done"
    body = events[-1][1]
    assert body["turns"][1]["answers"] == ["".join(e["t"] for name, e in events if name == "token")]
    body = api.post(_url(chat_task, "/turns"), {"state": body["state"], "prompt": "i hate waiting"}, format="json").json()
    assert [t["prompt"] for t in body["turns"]] == ["tell me about the museum", "who wrote it", "i hate waiting"]
    assert body["turns_left"] == 0

    too_many = api.post(_url(chat_task, "/turns"), {"state": body["state"], "prompt": "one more"}, format="json",
                        HTTP_ACCEPT="text/event-stream")
    assert too_many.status_code == 400 and too_many["Content-Type"] == "application/json"
    assert too_many.json()["code"] == "too_many_turns"

    judgment = {"state": body["state"], "verdict": "fails", "category": "hate", "explanation": "It repeats a hateful phrase."}
    saved = api.post(_url(chat_task, "/judgments"), judgment, format="json")
    assert saved.status_code == 201, saved.content
    example = Example.objects.get()
    assert saved.json()["id"] == example.pk and example.model_wrong and example.author == annotator
    assert example.input["turns"] == ["tell me about the museum", "who wrote it", "i hate waiting"]
    assert [t["content"] for t in example.model_output["transcript"] if t["role"] == "assistant"] == [t["answers"][0] for t in body["turns"]]
    again = api.post(_url(chat_task, "/judgments"), judgment, format="json")
    assert again.status_code == 200 and again["Idempotent-Replayed"] == "true" and again.json()["id"] == example.pk
    assert Example.objects.count() == 1


def test_a_comparison_shows_two_anonymous_answers_and_stores_the_preference(annotator, chat_task, endpoint_server):
    api = client_for(annotator)
    body = api.post(_url(chat_task), {"mode": "side_by_side", "accept_content_warning": True}, format="json").json()
    assert body["sides"] == 2 and body["turns_left"] == 1 and "alpha" not in json.dumps(body) and "beta" not in json.dumps(body)
    events = _events(api.post(_url(chat_task, "/turns"), {"state": body["state"], "prompt": "hello there"}, format="json",
                              HTTP_ACCEPT="text/event-stream"))
    assert {e["side"] for name, e in events if name == "token"} == {0, 1}
    body = events[-1][1]
    unjudged = api.post(_url(chat_task, "/judgments"), {"state": body["state"]}, format="json")
    assert unjudged.status_code == 400 and unjudged.json()["field"] == "preference" and Example.objects.count() == 0
    saved = api.post(_url(chat_task, "/judgments"), {"state": body["state"], "preference": "b", "failing": ["a"], "category": "hate",
                                                     "explanation": "A insults people."}, format="json")
    assert saved.status_code == 201, saved.content
    example = Example.objects.get()
    assert example.target == {"preference": "b", "failing": ["a"], "category": "hate", "explanation": "A insults people."}
    assert sorted(example.model_output["order"]) == sorted(m.pk for m in chat_task.loop)
    assert [example.model_output["answers"][s]["content"] for s in "ab"] == body["turns"][0]["answers"]


def test_a_model_that_fails_mid_answer_is_a_503_or_a_problem_event_and_the_turn_is_not_counted(annotator, chat_task, endpoint_server):
    api = client_for(annotator)
    state = api.post(_url(chat_task), {"accept_content_warning": True}, format="json").json()["state"]
    endpoint_server.fail_next = [503] * 4  # more than the endpoint's 3 retries
    failed = api.post(_url(chat_task, "/turns"), {"state": state, "prompt": "hello"}, format="json")
    assert failed.status_code == 503 and failed.json()["code"] == "model_failed" and "HTTP 503" in failed.json()["detail"]
    endpoint_server.fail_next = [503] * 4
    events = _events(api.post(_url(chat_task, "/turns"), {"state": state, "prompt": "hello"}, format="json", HTTP_ACCEPT="text/event-stream"))
    assert [name for name, _ in events] == ["problem"] and events[0][1]["code"] == "model_failed"
    answered = api.post(_url(chat_task, "/turns"), {"state": state, "prompt": "hello"}, format="json").json()
    assert answered["turns_left"] == 2 and len(answered["turns"]) == 1


def test_forged_states_other_tasks_and_other_roles_are_refused(annotator, validator, chat_task, sentiment_task, endpoint_server):
    api = client_for(annotator)
    forged = api.post(_url(chat_task, "/turns"), {"state": "forged", "prompt": "hi"}, format="json")
    assert forged.status_code == 400 and forged.json()["code"] == "chat_expired"
    assert api.post(_url(chat_task, "/judgments"), {"state": "forged", "verdict": "holds"}, format="json").json()["code"] == "chat_expired"
    not_chat = api.post("/api/v1/tasks/sentiment/chat", {"accept_content_warning": True}, format="json")
    assert not_chat.status_code == 400 and not_chat.json()["code"] == "not_conversational"
    unknown = api.post(_url(chat_task), {"accept_content_warning": True, "model": 3}, format="json")
    assert unknown.status_code == 400
    assert client_for(validator).post(_url(chat_task), {"accept_content_warning": True}, format="json").status_code == 403
    assert client_for(None).post(_url(chat_task), {}, format="json").status_code == 401
    assert endpoint_server.requests == [] and Example.objects.count() == 0
