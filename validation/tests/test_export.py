"""Exporting a round or a task as JSONL: streamed, anonymised, validations included, UTF-8."""

import hashlib
import json

from validation.services import record_validation
from validation.tests.conftest import make_example, leased


def _lines(response):
    assert response.streaming
    return [json.loads(line) for line in b"".join(response.streaming_content).decode("utf-8").splitlines()]


def test_an_owner_downloads_the_round_with_anonymised_ids(client, sentiment_task, annotator, validator, owner):
    example = make_example(sentiment_task, annotator, text="Ça déchire, vraiment 😀")
    record_validation(example=leased(example, validator), validator=validator, label="correct", metadata={"explanation": "très bien"})
    client.force_login(owner)

    response = client.get("/tasks/sentiment/rounds/1/export.jsonl")

    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="sentiment-r1.jsonl"'
    raw = b"".join(response.streaming_content)
    assert "Ça déchire, vraiment 😀".encode() in raw  # ensure_ascii=False: readable UTF-8
    [row] = [json.loads(line) for line in raw.decode("utf-8").splitlines()]
    secret = sentiment_task.current_round().secret
    assert row["annotator"] == hashlib.sha256(f"{secret}{annotator.pk}".encode()).hexdigest()[:16]
    assert row["validations"][0]["validator"] == hashlib.sha256(f"{secret}{validator.pk}".encode()).hexdigest()[:16]
    assert row["validations"][0]["label"] == "correct"
    assert "annie" not in raw.decode("utf-8") and "val" not in row["validations"][0]["validator"]


def test_the_task_export_holds_every_round(client, sentiment_task, annotator, owner):
    make_example(sentiment_task, annotator)
    round2 = sentiment_task.rounds.create(number=2)
    round2.contexts.create(uid="r2-c", data={"prompt": "p"})
    make_example(sentiment_task, annotator, round=round2)
    client.force_login(owner)

    rows = _lines(client.get("/tasks/sentiment/export.jsonl"))

    assert [r["round"] for r in rows] == [1, 2]
    assert rows[0]["annotator"] != rows[1]["annotator"]  # a per-round secret


def test_others_may_not_export(client, sentiment_task, validator):
    client.force_login(validator)

    assert client.get("/tasks/sentiment/rounds/1/export.jsonl").status_code == 403
    assert client.get("/tasks/sentiment/export.jsonl").status_code == 403
