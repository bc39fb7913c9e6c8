"""The README's client example against a live server: ``leaderboard(task, weights=...)`` sends the
API's ``w_<metric>`` parameters, so the weights reach the Dynascore and re-rank the models (the
client used to send ``weights=performance:5``, which the API ignored); an unknown metric is refused
before anything is sent, and the old parameter is answered 400 instead of being ignored."""

import pytest
import requests

from dynabench_client import BadRequest, DynabenchClient
from leaderboard.evaluation import rebuild_leaderboard
from leaderboard.models import EvaluationRun
from tasks.models import Dataset, MLModel

# performance and robustness in percent; throughput and memory alike, so only those two can matter
SCORES = {"accurate": (70.0, 60.0), "robust": (65.0, 90.0), "weak": (40.0, 70.0)}


@pytest.fixture
def evaluated_three(sentiment_task, researcher):
    """Three published models with finished runs on one scoring set (fairness not applicable there)."""
    dataset = Dataset.objects.create(task=sentiment_task, name="sent-seed-test", access="scoring", weight=1.0)
    for name, (performance, robustness) in SCORES.items():
        model = MLModel.objects.create(task=sentiment_task, owner=researcher, name=name, published=True, status="evaluated")
        EvaluationRun.objects.create(
            model=model, dataset=dataset, status="done", n_examples=40, performance=performance / 100,
            throughput=200.0, memory_gib=0.5, robustness=robustness / 100, fairness=None, dataset_version=dataset.version,
            metrics={"perturbed_items": {"robustness": 40, "fairness": 0}},
        )
    rebuild_leaderboard(sentiment_task.pk)


def names(board):
    return [row["name"] for row in board["rows"]]


def test_the_readme_example_reaches_the_dynascore_and_weights_rerank(live_server, evaluated_three):
    c = DynabenchClient(api_key=None, base_url=live_server.url)

    default = c.leaderboard("sentiment")
    readme = c.leaderboard("sentiment", weights={"performance": 5})  # the README's line
    robust_first = c.leaderboard("sentiment", weights={"performance": 1, "robustness": 5})

    assert readme["metric_weights"]["performance"] == 5  # the weight arrived
    assert names(default) == names(readme) == ["accurate", "robust", "weak"]
    assert names(robust_first) == ["robust", "accurate", "weak"]
    assert robust_first["rows"][0]["contributions"]["robustness"] > default["rows"][1]["contributions"]["robustness"]


def test_an_unknown_metric_is_refused_before_sending_and_the_old_parameter_is_answered_400(live_server, evaluated_three):
    c = DynabenchClient(api_key=None, base_url=live_server.url)

    with pytest.raises(ValueError, match="unknown metric 'accuracy'"):
        c.leaderboard("sentiment", weights={"accuracy": 5})
    with pytest.raises(BadRequest):
        c.leaderboard("sentiment", weights={"performance": 9})
    old = requests.get(f"{live_server.url}/api/v1/tasks/sentiment/leaderboard", params={"weights": "performance:5"}, timeout=30)
    assert old.status_code == 400 and "w_performance" in old.text
