"""Submitting a predictions file: it must cover every scoring item; each problem is listed with its line."""

import json
from pathlib import Path

import pytest

from dynabench.errors import RuleError
from leaderboard.predictions import read_predictions_file
from leaderboard.services import submit_predictions
from leaderboard.tests.conftest import SENTIMENT_ITEMS, make_dataset, predictions_jsonl
from tasks.models import MLModel

GOOD = [{"uid": uid, "label": label} for uid, _, label, _ in SENTIMENT_ITEMS]


def test_it_stores_a_normalised_file_and_queues_the_model(researcher, sentiment_task, sentiment_dataset, media_root):
    model = submit_predictions(user=researcher, task=sentiment_task, upload=predictions_jsonl(GOOD), name="oracle")
    model.refresh_from_db()
    assert (model.kind, model.status) == ("predictions", "queued")
    assert Path(model.path) == media_root / "models" / str(model.pk) / "predictions.jsonl"
    assert read_predictions_file(model)[("sentiment-r1-dev", "s1")] == "positive"
    assert len(model.checksum) == 64


def test_it_accepts_label_aliases(researcher, nli_task):
    make_dataset(nli_task, "anli-mini", [("a", {"premise": "p", "hypothesis": "h"}, {"label": "entailment"}, "")])
    model = submit_predictions(user=researcher, task=nli_task, upload=predictions_jsonl([{"uid": "a", "label": "e"}]), name="alias")
    assert read_predictions_file(model) == {("anli-mini", "a"): "entailment"}


def test_it_lists_every_problem_with_its_line_number(researcher, sentiment_task, sentiment_dataset, media_root):
    lines = [json.dumps(GOOD[0]), "{not json", json.dumps({"uid": "s2"}), json.dumps({"uid": "s3", "label": "joyful"}),
             json.dumps({"uid": "nope", "label": "positive"}), json.dumps(GOOD[0])]
    with pytest.raises(RuleError) as info:
        submit_predictions(user=researcher, task=sentiment_task, upload=("\n".join(lines) + "\n").encode(), name="bad")
    message = info.value.message
    assert info.value.code == "bad_predictions"
    assert "not valid JSON: line 2" in message
    assert 'not an object with "uid" and "label": line 3' in message
    assert "invalid label (expected one of positive, negative, neutral): line 4: 'joyful'" in message
    assert "unknown uid: line 5: nope" in message
    assert "duplicate uid: line 6: s1 (first on line 1)" in message
    assert "no prediction for 5 of 6 items of sentiment-r1-dev" in message
    assert MLModel.objects.count() == 0 and list((media_root / "models").iterdir()) == []


def test_it_names_the_missing_items(researcher, sentiment_task, sentiment_dataset):
    with pytest.raises(RuleError) as info:
        submit_predictions(user=researcher, task=sentiment_task, upload=predictions_jsonl(GOOD[:4]), name="partial")
    assert info.value.code == "incomplete_predictions"
    assert "no prediction for 2 of 6 items of sentiment-r1-dev: s5; s6" in info.value.message


def test_a_uid_in_two_datasets_needs_the_dataset_name(researcher, sentiment_task, sentiment_dataset):
    make_dataset(sentiment_task, "other", [("s1", {"text": "x"}, {"label": "positive"}, "")], round_number=2)
    with pytest.raises(RuleError) as info:
        submit_predictions(user=researcher, task=sentiment_task, upload=predictions_jsonl(GOOD), name="ambiguous")
    assert "uid in several datasets" in info.value.message
    rows = [{**row, "dataset": "sentiment-r1-dev"} for row in GOOD] + [{"uid": "s1", "label": "neutral", "dataset": "other"}]
    model = submit_predictions(user=researcher, task=sentiment_task, upload=predictions_jsonl(rows), name="explicit")
    assert read_predictions_file(model)[("other", "s1")] == "neutral"


def test_it_refuses_a_task_without_scoring_datasets(researcher, sentiment_task):
    with pytest.raises(RuleError) as info:
        submit_predictions(user=researcher, task=sentiment_task, upload=predictions_jsonl(GOOD), name="early")
    assert info.value.code == "no_scoring_datasets"


def test_qa_predictions_give_answers(researcher, qa_task):
    make_dataset(qa_task, "qa-mini", [("q1", {"question": "When?", "passage": "In 1843."}, {"answers": [{"text": "1843", "answer_start": 3}]}, "")])
    model = submit_predictions(user=researcher, task=qa_task, upload=predictions_jsonl([{"uid": "q1", "answer": "1843"}]), name="qa")
    assert read_predictions_file(model) == {("qa-mini", "q1"): "1843"}
