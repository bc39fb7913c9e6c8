"""``/tasks/<code>/rounds/<n>/croissant.json``: the round export's Croissant description, for the task's
owners as the export itself. ``mlcroissant validate`` accepts it, and saved beside the export it
loads with ``mlcroissant.Dataset`` (the export's sha256 checked), one record per example."""

import json

from django.test import Client

from annotation.models import Example
from tests.croissant_support import records_script, validate_and_load
from validation.models import Validation

LOAD = records_script("examples")


def test_the_round_export_loads_with_its_croissant(sentiment_task, owner, annotator, validator, tmp_path):
    round1 = sentiment_task.rounds.get(number=1)
    context = round1.contexts.first()
    examples = [
        Example.objects.create(round=round1, context=context, author=annotator, input={"text": f"Sentence {i}."},
                               target={"label": "negative"}, model_output={"label": "positive", "probs": {"positive": 0.9}},
                               model_wrong=True)
        for i in range(3)
    ]
    Validation.objects.create(example=examples[0], validator=validator, label="correct", mode="user")
    browser = Client()
    browser.force_login(owner)
    outsider = Client()
    outsider.force_login(annotator)

    export = b"".join(browser.get("/tasks/sentiment/rounds/1/export.jsonl").streaming_content)
    answer = browser.get("/tasks/sentiment/rounds/1/croissant.json")
    refused = outsider.get("/tasks/sentiment/rounds/1/croissant.json")
    folder = tmp_path / "download"
    folder.mkdir()
    (folder / "sentiment-r1.jsonl").write_bytes(export)
    (folder / "croissant.json").write_bytes(answer.content)
    validated, loaded = validate_and_load(folder / "croissant.json", LOAD, tmp_path / "cache")

    assert answer.status_code == 200 and refused.status_code == 403
    said = validated.stdout + validated.stderr
    assert validated.returncode == 0 and "Done." in said and "WARNING" not in said, said
    assert loaded.returncode == 0, loaded.stderr[-3000:]
    records = json.loads(loaded.stdout.strip().splitlines()[-1])
    assert sorted(int(r["id"]) for r in records) == sorted(e.pk for e in examples)
    assert all(r["model_wrong"] in (True, "True", "true") for r in records)
    assert sorted(r["input_text"] for r in records) == [f"Sentence {i}." for i in range(3)]
    assert {r["model_output_label"] for r in records} == {"positive"}
    body = json.loads(answer.content)
    assert body["isBasedOn"]["examples"] == 3 and body["distribution"][0]["contentUrl"] == "sentiment-r1.jsonl"
