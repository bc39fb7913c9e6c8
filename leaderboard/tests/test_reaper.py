"""One pass of the reaper ends what dead workers left: stale shards retried alone then failing their run
with the reason, runs whose job was lost enqueued again, dead trainings failed and their folders removed."""

from datetime import timedelta

import django_rq
from django.utils import timezone
from rq.job import Job

from leaderboard.jobs import evaluate_model
from leaderboard.models import EvaluationRun, EvaluationShard
from leaderboard.reaper import reap
from tasks.models import MLModel


def test_a_run_whose_job_was_lost_is_enqueued_again(submitted_model, sentiment_dataset, django_capture_on_commit_callbacks):
    evaluate_model(submitted_model.pk, enqueue=False)
    run = EvaluationRun.objects.get(model=submitted_model)
    EvaluationRun.objects.filter(pk=run.pk).update(job_id="evaluate-run-emptied-queue")
    with django_capture_on_commit_callbacks(execute=True):  # django-rq enqueues once the transaction commits
        reap()
    run.refresh_from_db()
    assert run.status == "queued" and run.job_id.startswith(f"evaluate-run-{run.pk}-")
    connection = django_rq.get_connection("evaluation")
    job = Job.fetch(run.job_id, connection=connection)
    assert job.get_status() == "queued" and list(job.args) == [run.pk]
    job.cancel()
    job.delete()


def test_a_stale_shard_is_retried_alone_then_fails_its_run_with_the_reason(submitted_model, sentiment_dataset, settings,
                                                                           django_capture_on_commit_callbacks):
    settings.EVALUATION_SHARD_ITEMS = 2
    evaluate_model(submitted_model.pk, enqueue=False)
    run = EvaluationRun.objects.get(model=submitted_model)
    old = timezone.now() - timedelta(hours=1)
    EvaluationRun.objects.filter(pk=run.pk).update(status="running", attempt=1, heartbeat_at=old)
    items = list(sentiment_dataset.items.order_by("pk").values_list("pk", flat=True))
    shards = [EvaluationShard.objects.create(run=run, run_attempt=1, index=n, first_item=items[2 * n], last_item=items[2 * n + 1],
                                             n_items=2, status="done" if n != 1 else "running", attempt=1, heartbeat_at=old)
              for n in range(3)]
    stale = shards[1]
    connection = django_rq.get_connection("evaluation")

    with django_capture_on_commit_callbacks(execute=True):
        reap()
    stale.refresh_from_db()
    run.refresh_from_db()
    assert (stale.status, stale.attempt) == ("queued", 1) and "Try 1 failed: The worker stopped responding" in stale.error
    assert run.status == "running"  # a sharded run is never re-queued whole
    Job.fetch(stale.job_id, connection=connection).delete()

    EvaluationShard.objects.filter(pk=stale.pk).update(status="running", attempt=2, heartbeat_at=old)
    reap()
    stale.refresh_from_db()
    run.refresh_from_db()
    submitted_model.refresh_from_db()
    assert stale.status == "failed"
    assert run.status == "failed" and run.error.startswith(f"Shard 1 (items {items[2]}–{items[3]}) failed 2 times: The worker stopped")
    assert submitted_model.status == "failed" and "Shard 1" in submitted_model.failure_reason


def test_a_dead_training_fails_with_a_reason_and_its_staging_folder_goes(sentiment_task, models_dir, settings):
    final = models_dir / "sentiment" / "retrained"
    model = MLModel.objects.create(task=sentiment_task, name="retrained", status="training", path=str(final), progress=0.4)
    MLModel.objects.filter(pk=model.pk).update(updated_at=timezone.now() - timedelta(hours=1))
    staging = final.with_name("retrained.training-4242")
    staging.mkdir(parents=True)
    (staging / "config.json").write_text("{}")
    alive = MLModel.objects.create(task=sentiment_task, name="alive", status="training", path=str(final.with_name("alive")))
    alive_staging = final.with_name("alive.training-77")
    alive_staging.mkdir()

    summary = reap()
    model.refresh_from_db()
    assert model.status == "failed" and "stopped responding" in model.failure_reason and "40%" in model.failure_reason
    assert not staging.exists() and alive_staging.exists()
    assert MLModel.objects.get(pk=alive.pk).status == "training"
    assert "1 dead trainings failed, 1 stray training folders removed" in summary
