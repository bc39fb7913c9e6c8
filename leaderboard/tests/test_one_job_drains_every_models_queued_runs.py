"""An evaluation job that has finished its model's runs goes on with other models' queued runs
(for up to ``EVALUATION_BATCH_SECONDS``), so re-scoring twenty models on a closed round costs the
worker one fork, not twenty; it takes its own model's runs first, while that model is loaded."""

from leaderboard import jobs
from leaderboard.models import EvaluationRun
from tasks.loop import registry
from tasks.loop.model_checks import directory_checksum
from tasks.models import MLModel


def _model(task, path, name):
    return MLModel.objects.create(task=task, name=name, path=str(path), checksum=directory_checksum(path), published=True,
                                  status=MLModel.Status.QUEUED)


def test_the_first_job_scores_both_models_its_own_first(sentiment_task, sentiment_datasets, tiny_classifier_dir, monkeypatch):
    first_model, other_model = _model(sentiment_task, tiny_classifier_dir, "first"), _model(sentiment_task, tiny_classifier_dir, "other")
    for model in (other_model, first_model):  # the other model's runs are older
        jobs.evaluate_model(model.pk, enqueue=False)
    loads = []
    monkeypatch.setattr(registry, "load_predictor", lambda *a, _real=registry.load_predictor, **k: loads.append(a) or _real(*a, **k))
    start = EvaluationRun.objects.filter(model=first_model).order_by("pk").first()

    summary = jobs.evaluate_run(start.pk)

    runs = EvaluationRun.objects.order_by("finished_at")
    assert [r.status for r in runs] == ["done"] * 4
    assert [r.model_id for r in runs] == [first_model.pk, first_model.pk, other_model.pk, other_model.pk]
    assert summary.count("sentiment-r1-dev") == 2 and summary.count("sentiment-r2-dev") == 2
    assert len(loads) == 2  # each model loaded once
