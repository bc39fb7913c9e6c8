"""``/tasks/<code>/rounds/<n>/export.jsonl?view=deduplicated``: one example per near-duplicate group (the
first written, with the group's size), retracted examples left out and examples no diversity report has
placed kept; its Croissant description (``croissant.json?view=deduplicated``) validates and loads it,
cluster and group size included. Any other view is a 400 that names the two."""

import json

from django.test import Client

from annotation.diversity_models import ExampleDiversity
from annotation.models import Example
from tests.croissant_support import records_script, validate_and_load

LOAD = records_script("examples")


def test_the_deduplicated_view_keeps_each_groups_first_example(sentiment_task, owner, annotator, tmp_path):
    round1 = sentiment_task.rounds.get(number=1)
    context = round1.contexts.first()
    first, copy, other, second_copy, retracted, unplaced = (
        Example.objects.create(round=round1, context=context, author=annotator, input={"text": f"Sentence {i}."},
                               target={"label": "negative"}, model_output={"label": "positive"}, model_wrong=True)
        for i in range(6)
    )
    for example, leader, size, cluster in ((first, first, 3, 0), (copy, first, 3, 0), (second_copy, first, 3, 0),
                                           (other, other, 1, -1), (retracted, retracted, 1, 0)):
        ExampleDiversity.objects.create(example=example, round=round1, cluster=cluster, representative=leader, group_size=size)
    Example.objects.filter(pk=retracted.pk).update(retracted=True)
    browser = Client()
    browser.force_login(owner)

    download = browser.get("/tasks/sentiment/rounds/1/export.jsonl?view=deduplicated")
    export = b"".join(download.streaming_content)
    everything = b"".join(browser.get("/tasks/sentiment/rounds/1/export.jsonl").streaming_content)
    answer = browser.get("/tasks/sentiment/rounds/1/croissant.json?view=deduplicated")
    wrong = browser.get("/tasks/sentiment/rounds/1/export.jsonl?view=unique")
    folder = tmp_path / "download"
    folder.mkdir()
    (folder / "sentiment-r1-deduplicated.jsonl").write_bytes(export)
    (folder / "croissant.json").write_bytes(answer.content)
    validated, loaded = validate_and_load(folder / "croissant.json", LOAD, tmp_path / "cache")

    lines = [json.loads(line) for line in export.decode().splitlines()]
    assert 'filename="sentiment-r1-deduplicated.jsonl"' in download["Content-Disposition"]
    assert [(r["id"], r["group_size"], r["cluster"], r["near_duplicate_of"]) for r in lines] == [
        (first.pk, 3, 0, None), (other.pk, 1, -1, None), (unplaced.pk, None, None, None)]
    copies = {r["id"]: r["near_duplicate_of"] for r in map(json.loads, everything.decode().splitlines())}
    assert len(copies) == 6 and copies[copy.pk] == copies[second_copy.pk] == first.pk
    assert wrong.status_code == 400 and b"deduplicated" in wrong.content
    said = validated.stdout + validated.stderr
    assert answer.status_code == 200 and validated.returncode == 0 and "WARNING" not in said, said
    assert loaded.returncode == 0, loaded.stderr[-3000:]
    records = sorted(json.loads(loaded.stdout.strip().splitlines()[-1]), key=lambda r: int(r["id"]))
    assert [int(r["id"]) for r in records] == [first.pk, other.pk, unplaced.pk]
    assert [str(r["group_size"]) for r in records[:2]] == ["3", "1"] and str(records[1]["cluster"]) == "-1"
    body = json.loads(answer.content)
    assert body["distribution"][0]["contentUrl"] == "sentiment-r1-deduplicated.jsonl" and body["isBasedOn"]["examples"] == 3
    assert body["isBasedOn"]["export"].endswith("export.jsonl?view=deduplicated")
