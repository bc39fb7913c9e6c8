"""An owner downloads the validated judgments of an open-ended task as JSONL in the layouts
training libraries read (``messages`` per conversation, ``prompt``/``chosen``/``rejected`` per
comparison), anonymised, and the ``datasets`` library loads each file as it is."""

import json

import pytest
from django.urls import reverse

from annotation import chat
from tests.generative_support import compare, run_turns
from validation.queue import next_example_for
from validation.services import record_validation


def _download(client, task, layout, path):
    response = client.get(reverse("validation:export_judgments", args=[task.code, layout]))
    assert response.status_code == 200
    path.write_bytes(b"".join(response.streaming_content))
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_export_loads_with_datasets(client, annotator, validator, admin_user, chat_task, endpoint_server, tmp_path):
    datasets = pytest.importorskip("datasets")  # pinned in requirements-dev.txt
    state = run_turns(user=annotator, task=chat_task, mode=chat.CONVERSATION, prompts=["hello there", "and then"])
    chat.judge(user=annotator, task=chat_task, state=state,
               target={"verdict": "fails", "category": "violence", "explanation": "It describes an attack."})
    chosen = compare(user=annotator, task=chat_task, prompt="who wrote the first algorithm", preference="b")
    compare(user=annotator, task=chat_task, prompt="what year did the museum open", preference="tie")
    overturned = compare(user=annotator, task=chat_task, prompt="i hate waiting", preference="a")
    round = chat_task.current_round()
    for _ in range(4):
        example = next_example_for(validator=validator, round=round)
        record_validation(example=example, validator=validator, label="incorrect" if example.pk == overturned.pk else "correct")

    client.force_login(admin_user)
    messages = _download(client, chat_task, "messages", tmp_path / "messages.jsonl")
    preferences = _download(client, chat_task, "preferences", tmp_path / "preferences.jsonl")
    assert len(messages) == 1 and len(preferences) == 1  # the tie has no chosen answer; the overturned one is not data
    conversation = messages[0]
    assert [m["role"] for m in conversation["messages"]] == ["system", "user", "assistant", "user", "assistant"]
    assert conversation["judgment"]["category"] == "violence"
    pair = preferences[0]
    # Both layouts carry the system prompt the models were given (the task's, filled from the context).
    system = chat_task.spec.chat_messages(chat_task.config, chosen.context.data, [])
    assert [m["role"] for m in system] == ["system"] and system[0]["content"]
    assert pair["prompt"] == [*system, {"role": "user", "content": "who wrote the first algorithm"}]
    assert pair["chosen"][0]["role"] == "assistant" and pair["rejected"][0]["role"] == "assistant"
    text = (tmp_path / "messages.jsonl").read_text() + (tmp_path / "preferences.jsonl").read_text()
    assert annotator.username not in text and len(pair["annotator"]) == 16

    loaded = datasets.load_dataset("json", data_files=str(tmp_path / "preferences.jsonl"), split="train",
                                   cache_dir=str(tmp_path / "hf-cache"))
    assert loaded.num_rows == 1 and loaded[0]["chosen"] == pair["chosen"]
    loaded = datasets.load_dataset("json", data_files=str(tmp_path / "messages.jsonl"), split="train",
                                   cache_dir=str(tmp_path / "hf-cache"))
    assert loaded[0]["messages"] == conversation["messages"]


def test_only_owners_download_judgments(client, annotator, chat_task):
    client.force_login(annotator)
    response = client.get(reverse("validation:export_judgments", args=[chat_task.code, "messages"]))
    assert response.status_code == 403
