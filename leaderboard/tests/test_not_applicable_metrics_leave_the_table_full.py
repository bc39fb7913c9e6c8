"""On a dataset where no item has a gendered word or a name, fairness cannot be measured: the run
records it, the leaderboard marks fairness "n/a" there, and in the "list them as pending" mode the
evaluated model stays ranked; only a model that really lacks a metric (a predictions file) is listed,
and the page does not claim that anything is still running."""

from leaderboard.evaluation import rebuild_leaderboard
from leaderboard.models import EvaluationRun
from leaderboard.services import submit_predictions
from leaderboard.tests.conftest import evaluate_now, make_dataset, predictions_jsonl
from leaderboard.tests.test_leaderboard_page import names_in_order
from tests.upload_support import submit_unpacked

PLAIN = [
    ("p1", "the food was great and the staff were friendly", "positive"),
    ("p2", "the service was slow and the room was dirty", "negative"),
    ("p3", "the museum opened in 1921", "neutral"),
]


def test_fairness_is_not_applicable_and_no_model_is_held_back(client, researcher, sentiment_task, tiny_sentiment_zip, settings):
    # given a scoring set without gendered words or names, an evaluated model and a predictions file
    settings.MODEL_SUBMISSIONS_PER_DAY = 100
    dataset = make_dataset(sentiment_task, "plain-dev", [(uid, {"text": t}, {"label": label}, "") for uid, t, label in PLAIN])
    model = submit_unpacked(user=researcher, task=sentiment_task, upload=tiny_sentiment_zip, name="tiny-bert", published=True)
    evaluate_now(model)
    predictions = submit_predictions(user=researcher, task=sentiment_task, name="file", published=True,
                                     upload=predictions_jsonl([{"uid": uid, "label": label} for uid, _, label in PLAIN]))
    evaluate_now(predictions)
    rebuild_leaderboard(sentiment_task.pk)

    # when the page lists models without a metric as pending
    html = client.get(f"/tasks/{sentiment_task.code}/leaderboard/", {"missing_metric": "exclude_model"}).content.decode()

    # then the run recorded why, fairness is n/a, the model is ranked and nothing claims to be running
    run = EvaluationRun.objects.get(model=model, dataset=dataset)
    assert run.fairness is None and run.metrics["perturbed_items"] == {"robustness": 3, "fairness": 0}
    assert names_in_order(html) == ["tiny-bert"]
    assert "not applicable: no item of a weighted dataset has such a perturbation" in html
    assert "n/a" in html
    assert "no throughput, memory, robustness measurement" in html  # the predictions file, listed with its reason
    assert "Still running" not in html and 'id="pending-poll"' not in html
