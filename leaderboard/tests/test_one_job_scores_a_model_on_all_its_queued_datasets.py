"""One evaluation job, once it has loaded a model, takes that model's other queued runs too, so
re-scoring every model on a closed round's new datasets loads each model once; the other runs'
own jobs are taken off the queue (and would skip if they ran). ``EVALUATION_BATCH_SECONDS = 0``
keeps one run a job."""

from leaderboard import jobs, queueing
from leaderboard.models import EvaluationRun
from tasks.loop import registry


def _queued_runs(model):
    jobs.evaluate_model(model.pk, enqueue=False)
    return list(EvaluationRun.objects.filter(model=model).order_by("pk"))


def test_the_first_job_scores_the_model_on_every_dataset_and_the_others_skip(
    submitted_model, sentiment_datasets, monkeypatch, django_capture_on_commit_callbacks,
):
    first, second = _queued_runs(submitted_model)
    with django_capture_on_commit_callbacks(execute=True):  # django-rq enqueues when the transaction commits
        for run in (first, second):
            queueing.enqueue_run(run.pk)
    queue = queueing.queue("evaluation")
    second.refresh_from_db()
    assert second.job_id in queue.job_ids
    loads = []
    monkeypatch.setattr(registry, "load_predictor", lambda *a, _real=registry.load_predictor, **k: loads.append(a) or _real(*a, **k))

    summary = jobs.evaluate_run(first.pk)
    skipped = jobs.evaluate_run(second.pk)

    assert [r.status for r in EvaluationRun.objects.filter(model=submitted_model)] == ["done", "done"]
    assert "sentiment-r1-dev" in summary and "sentiment-r2-dev" in summary
    assert skipped == f"run {second.pk}: not queued (done), skipped"
    assert len(loads) == 1  # the model was loaded once for both datasets
    assert second.job_id not in queue.job_ids  # no worker forks for it


def test_a_zero_batch_keeps_one_run_a_job(submitted_model, sentiment_datasets, settings):
    settings.EVALUATION_BATCH_SECONDS = 0
    first, second = _queued_runs(submitted_model)

    jobs.evaluate_run(first.pk)

    assert list(EvaluationRun.objects.filter(model=submitted_model).order_by("pk").values_list("status", flat=True)) == ["done", "queued"]
