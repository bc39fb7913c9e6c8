"""A predictions file for a hidden test set with missing, extra or duplicated uids is refused
whole: a 400 naming the first offending uid and how many there are; no model, no run, no file."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from leaderboard.models import EvaluationRun
from tests.api.conftest import client_for, sentiment_datasets  # noqa: F401  (public dev + hidden test, 3 items each)
from tasks.models import MLModel


def _rows(datasets):
    return [{"dataset": d.name, "uid": item.uid, "label": "positive"} for d in datasets.values() for item in d.items.order_by("uid")]


def _post(user, rows):
    body = "".join(json.dumps(row) + "\n" for row in rows).encode()
    upload = SimpleUploadedFile("predictions.jsonl", body)
    return client_for(user).post("/api/v1/models/predictions", {"task": "sentiment", "name": "p", "predictions": upload})


def _hidden(uid):
    return {"dataset": "sent-r1-test", "uid": uid, "label": "negative"}


@pytest.mark.parametrize("change, expected", [
    (lambda rows: rows[:4], "no prediction for 2 of 3 items of sent-r1-test: sent-r1-test-1; sent-r1-test-2"),
    (lambda rows: rows + [_hidden("forged-1"), _hidden("forged-2")],
     "unknown uid: line 7: forged-1 (not in sent-r1-test); line 8: forged-2 (not in sent-r1-test) (2 in all)"),
    (lambda rows: rows + [_hidden("sent-r1-test-2")], "duplicate uid: line 7: sent-r1-test-2 (first on line 6) (1 in all)"),
], ids=["missing", "extra", "duplicated"])
def test_it_is_refused_whole_naming_the_first_offender_and_the_count(
    change, expected, researcher, sentiment_task, sentiment_datasets, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path
    # given
    rows = change(_rows(sentiment_datasets))
    # when
    response = _post(researcher, rows)
    # then
    assert response.status_code == 400
    assert response.json()["code"] in ("bad_predictions", "incomplete_predictions")
    assert expected in response.json()["detail"]
    assert not MLModel.objects.exists() and not EvaluationRun.objects.exists()
    assert not (tmp_path / "models").exists() or not any(p.is_file() for p in (tmp_path / "models").rglob("*"))


def test_many_offenders_are_counted_past_the_listed_ten(researcher, sentiment_task, sentiment_datasets, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    rows = _rows(sentiment_datasets) + [_hidden(f"forged-{i}") for i in range(12)]

    detail = _post(researcher, rows).json()["detail"]

    assert detail.endswith("(and 2 more; 12 in all)")


def test_the_complete_file_is_accepted(researcher, sentiment_task, sentiment_datasets, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path

    response = _post(researcher, _rows(sentiment_datasets))

    assert response.status_code == 201, response.content
