"""A script red-teams the chat models through the Python client against a live server (the endpoint
models of the local OpenAI-compatible server in the loop): a conversation of three turns (one of
them streamed) and a side-by-side comparison, both judged. The examples it stores are the ones the
chat pages store for the same prompts and judgments, but for timings, the author and the
submission key."""

import re

import pytest
from django.contrib.auth.models import Group, User
from django.urls import reverse
from rest_framework.authtoken.models import Token

from annotation.models import Example
from dynabench_client import BadRequest, DynabenchClient

PROMPTS = ["tell me about the museum", "who wrote the first algorithm", "i hate waiting"]
CONVERSATION_JUDGMENT = {"verdict": "fails", "category": "hate", "explanation": "It repeats a hateful phrase."}
COMPARISON_JUDGMENT = {"preference": "b", "failing": ["a"], "category": "hate", "explanation": "A insults people."}
TIMINGS = ("latency_ms", "first_token_ms")


@pytest.fixture
def one_context(chat_task):
    """Round 1 keeps a single context, so that the page and the script talk about the same scenario."""
    round1 = chat_task.current_round()
    round1.contexts.exclude(pk=round1.contexts.order_by("pk").first().pk).delete()
    return chat_task


def _state(html: str) -> str:
    return re.search(r'name="state" value="([^"]+)"', html).group(1)


def _page_start(client, task, mode: str) -> str:
    """A new conversation on the chat page (without JavaScript); its state."""
    return _state(client.get(reverse("annotation:chat", args=[task.code]) + f"?mode={mode}").content.decode())


def _page_finish(client, task, state: str, prompts: list[str], judgment: dict) -> Example:
    """Send ``prompts`` on the chat page (whole pages), judge; return the example."""
    for prompt in prompts:
        state = _state(client.post(reverse("annotation:chat_turn", args=[task.code]), {"state": state, "prompt": prompt}).content.decode())
    judged = client.post(reverse("annotation:chat_judge", args=[task.code]), {"state": state, **judgment})
    assert judged.status_code == 302
    return Example.objects.get(pk=re.search(r"saved=(\d+)", judged["Location"]).group(1))


def _comparable(example: Example) -> dict:
    """What the example says, without what differs between two runs (timings, key, author, time)."""
    output = dict(example.model_output)
    if "transcript" in output:
        output["transcript"] = [{k: v for k, v in turn.items() if k not in TIMINGS} for turn in output["transcript"]]
    else:  # a comparison: A and B are drawn in random order, so compare each model's answer
        drawn = output.pop("answers")
        answers = [{k: v for k, v in drawn[side].items() if k not in TIMINGS} for side in "ab"]
        output["answers_by_model"] = {answer["model_id"]: answer for answer in answers}
        assert [answer["model_id"] for answer in answers] == output["order"]  # A and B as drawn
        output["order"] = sorted(output["order"])
    return {"input": example.input, "target": example.target, "output": output, "model_wrong": example.model_wrong,
            "context": example.context_id}


def test_a_scripted_conversation_and_comparison_store_what_the_pages_store(live_server, client, annotator, one_context, endpoint_server):
    task = one_context
    scripter = User.objects.create_user(username="scripter", password="pw-scripter")
    scripter.groups.add(Group.objects.get(name="annotator"))
    api = DynabenchClient(api_key=Token.objects.create(user=scripter).key, base_url=live_server.url)

    with pytest.raises(BadRequest) as refused:
        api.start_conversation(task.code)
    assert refused.value.code == "content_warning"
    chat = api.start_conversation(task.code, accept_content_warning=True)
    client.force_login(annotator)
    client.post(reverse("annotation:acknowledge_warning", args=[task.code]))
    on_page = _page_start(client, task, "conversation")  # before either is judged: the loop's same model answers both
    chat = api.send_turn(chat, PROMPTS[0])
    stream = api.send_turn(chat, PROMPTS[1], stream=True)
    pieces = [piece for side, piece in stream]
    chat = api.send_turn(stream.conversation, PROMPTS[2])
    assert chat["turns"][1]["answers"] == ["".join(pieces)] and len(pieces) > 1 and chat["turns_left"] == 0
    with pytest.raises(BadRequest) as too_many:
        api.send_turn(chat, "one more", stream=True)
    assert too_many.value.code == "too_many_turns"
    conversation = api.judge_conversation(chat, **CONVERSATION_JUDGMENT)
    pages = [_page_finish(client, task, on_page, PROMPTS, CONVERSATION_JUDGMENT)]

    pair = api.start_conversation(task.code, mode="side_by_side")
    stream = api.send_turn(pair, PROMPTS[0], stream=True)
    assert set(stream.text()) and stream.conversation["sides"] == 2
    comparison = api.judge_conversation(stream.conversation, **COMPARISON_JUDGMENT)
    assert api.judge_conversation(stream.conversation, **COMPARISON_JUDGMENT)["id"] == comparison["id"]

    pages.append(_page_finish(client, task, _page_start(client, task, "side_by_side"), PROMPTS[:1], COMPARISON_JUDGMENT))
    scripted = [Example.objects.get(pk=conversation["id"]), Example.objects.get(pk=comparison["id"])]
    assert [_comparable(e) for e in scripted] == [_comparable(e) for e in pages]
    assert conversation["model_wrong"] is True and comparison["model_wrong"] is True
    assert Example.objects.count() == 4
