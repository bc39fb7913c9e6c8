"""``GET /api/v1/tasks/{code}/leaderboard``: the Dynascore ranking, re-ranked by metric and dataset weights."""

import json

import pytest
from rest_framework.test import APIClient

from leaderboard.jobs import evaluate_model, evaluate_run, recompute_leaderboard
from leaderboard.models import EvaluationRun
from leaderboard.services import submit_predictions
from tasks.models import Dataset, DatasetItem, Round

LABELS = ["positive", "negative", "neutral"]
WRONG = {"positive": "negative", "negative": "neutral", "neutral": "positive"}


@pytest.fixture
def ranked(sentiment_task, researcher, settings):
    """Two models on two scoring datasets: alpha is right on round 1 only, beta on round 2 only (6 items each)."""
    settings.MODEL_SUBMISSIONS_PER_DAY = 100
    rounds = {1: sentiment_task.rounds.get(number=1), 2: Round.objects.create(task=sentiment_task, number=2, status="closed")}
    gold = {}
    for number, round_ in rounds.items():
        dataset = Dataset.objects.create(task=sentiment_task, round=round_, name=f"sent-r{number}", access="scoring")
        for i in range(6):
            DatasetItem.objects.create(dataset=dataset, uid=f"{number}-{i}", input={"text": f"r{number} s{i}"}, target={"label": LABELS[i % 3]})
            gold[(dataset.name, f"{number}-{i}")] = LABELS[i % 3]
    for name, good_round in (("alpha", 1), ("beta", 2)):
        rows = [
            {"dataset": ds, "uid": uid, "label": label if ds == f"sent-r{good_round}" else WRONG[label]}
            for (ds, uid), label in gold.items()
        ]
        upload = "".join(json.dumps(r) + "\n" for r in rows).encode()
        model = submit_predictions(user=researcher, task=sentiment_task, upload=upload, name=name)
        evaluate_model(model.pk, enqueue=False)
        for run in EvaluationRun.objects.filter(model=model):
            evaluate_run(run.pk)
    recompute_leaderboard(sentiment_task.pk)


def test_it_ranks_published_models_by_dynascore(ranked):
    response = APIClient().get("/api/v1/tasks/sentiment/leaderboard")

    assert response.status_code == 200
    body = response.json()
    assert [d["name"] for d in body["datasets"]] == ["sent-r1", "sent-r2"]
    assert sorted(row["name"] for row in body["rows"]) == ["alpha", "beta"]
    assert [row["rank"] for row in body["rows"]] == [1, 1]  # equal performance (50%), no other metric: a tie
    alpha = next(row for row in body["rows"] if row["name"] == "alpha")
    assert alpha["datasets"] == {"sent-r1": 100.0, "sent-r2": 0.0}
    assert alpha["rounds"] == {"1": 100.0, "2": 0.0}


def test_dataset_weights_re_rank_the_models(ranked):
    only_round_2 = APIClient().get("/api/v1/tasks/sentiment/leaderboard", {"dataset_weights": "sent-r1:0,sent-r2:1"}).json()
    only_round_1 = APIClient().get("/api/v1/tasks/sentiment/leaderboard", {"dataset_weights": "sent-r1:1,sent-r2:0"}).json()

    assert [row["name"] for row in only_round_2["rows"]] == ["beta", "alpha"]
    assert [row["name"] for row in only_round_1["rows"]] == ["alpha", "beta"]
    assert only_round_1["dataset_weights"] == {"sent-r1": 1.0, "sent-r2": 0.0}


def test_metric_weights_are_query_parameters(ranked):
    body = APIClient().get("/api/v1/tasks/sentiment/leaderboard", {"w_performance": 5, "w_throughput": 0}).json()

    assert body["metric_weights"]["performance"] == 5.0
    assert body["metric_weights"]["throughput"] == 0.0


def test_it_refuses_a_weight_out_of_range(ranked):
    response = APIClient().get("/api/v1/tasks/sentiment/leaderboard", {"w_performance": 9})

    assert response.status_code == 400
    assert response.json()["code"] == "bad_weight"


def test_it_refuses_an_unknown_dataset_in_the_weights(ranked):
    response = APIClient().get("/api/v1/tasks/sentiment/leaderboard", {"dataset_weights": "sent-r9:1"})

    assert response.status_code == 400
    assert response.json()["field"] == "dataset_weights"
