"""A run that fails stores a readable reason on the run and on the model."""

from leaderboard.jobs import evaluate_run
from leaderboard.models import EvaluationRun
from leaderboard.tests.conftest import evaluate_now, make_dataset
from tasks.models import DatasetItem


def test_a_bad_item_fails_the_run_with_its_uid(submitted_model, sentiment_dataset):
    DatasetItem.objects.filter(dataset=sentiment_dataset, uid="s3").update(target={"label": "ecstatic"})
    summaries = evaluate_now(submitted_model)
    run = EvaluationRun.objects.get(model=submitted_model)
    submitted_model.refresh_from_db()
    assert run.status == "failed" and "Item s3" in run.error and run.performance is None
    assert submitted_model.status == "failed"
    assert "sentiment-r1-dev: Item s3" in submitted_model.failure_reason
    assert "failed" in summaries[-1]


def test_an_empty_dataset_fails_its_run_only(submitted_model, sentiment_dataset, sentiment_task):
    make_dataset(sentiment_task, "empty", [], round_number=2)
    evaluate_now(submitted_model)
    statuses = dict(EvaluationRun.objects.filter(model=submitted_model).values_list("dataset__name", "status"))
    assert statuses == {"sentiment-r1-dev": "done", "empty": "failed"}
    assert "has no items" in EvaluationRun.objects.get(dataset__name="empty").error
    assert evaluate_run(EvaluationRun.objects.get(dataset__name="empty").pk).endswith("skipped")
