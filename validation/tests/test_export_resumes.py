"""An export streams in id order in bounded chunks and resumes after the last id received (?after=<id>)."""

import json

from annotation.models import Example
from validation.export import export_lines, export_rows
from validation.tests.conftest import make_example


def _ids(response) -> list[int]:
    return [json.loads(line)["id"] for line in b"".join(response.streaming_content).decode().splitlines()]


def test_after_resumes_where_the_download_stopped(client, sentiment_task, annotator, owner):
    made = [make_example(sentiment_task, annotator).pk for _ in range(5)]
    client.force_login(owner)

    whole = _ids(client.get("/tasks/sentiment/rounds/1/export.jsonl"))
    rest = _ids(client.get(f"/tasks/sentiment/rounds/1/export.jsonl?after={made[1]}"))

    assert whole == sorted(made) and rest == sorted(made)[2:]
    assert _ids(client.get(f"/tasks/sentiment/export.jsonl?after={made[-1]}")) == []


def test_a_bad_after_is_refused_naming_it(client, sentiment_task, owner):
    client.force_login(owner)

    for bad in ("x", "-1", "1.5", "9" * 40):
        response = client.get(f"/tasks/sentiment/rounds/1/export.jsonl?after={bad}")
        assert response.status_code == 400 and b"after must be the id" in response.content


def test_chunks_hold_the_same_lines_as_the_rows(sentiment_task, annotator):
    for _ in range(7):
        make_example(sentiment_task, annotator)
    round = sentiment_task.current_round()
    examples = Example.objects.filter(round=round)

    blocks = list(export_lines([round], chunk=3))
    lines = b"".join(blocks).decode().splitlines()

    assert len(blocks) == 3 and all(block.endswith(b"\n") for block in blocks)
    assert [json.loads(line) for line in lines] == sorted(export_rows(examples), key=lambda row: row["id"])
