"""A worker that dies mid-run leaves a stale heartbeat: the run is re-queued, or failed after the last attempt."""

from datetime import timedelta

from django.core.management import call_command
from django.utils import timezone

from leaderboard.jobs import evaluate_model, evaluate_run, requeue_stale_runs
from leaderboard.models import EvaluationRun


def die_mid_run(run, *, attempt=1, minutes_ago=30):
    """What a killed worker leaves behind: running, a partial progress, an old heartbeat, no results."""
    EvaluationRun.objects.filter(pk=run.pk).update(
        status="running", attempt=attempt, progress=0.4, heartbeat_at=timezone.now() - timedelta(minutes=minutes_ago)
    )


def test_a_stale_run_is_requeued_and_then_completes(submitted_model, sentiment_dataset, django_capture_on_commit_callbacks):
    evaluate_model(submitted_model.pk)
    run = EvaluationRun.objects.get(model=submitted_model)
    die_mid_run(run)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        summary = requeue_stale_runs()
    assert summary.startswith("1 stale runs re-queued")
    assert len(callbacks) == 1
    run.refresh_from_db()
    assert (run.status, run.progress, run.performance) == ("queued", 0.0, None)
    assert "stopped responding" in run.error
    assert evaluate_run(run.pk).endswith("items")
    run.refresh_from_db()
    assert run.status == "done" and run.attempt == 2


def test_a_live_run_is_left_alone(submitted_model, sentiment_dataset):
    evaluate_model(submitted_model.pk)
    run = EvaluationRun.objects.get(model=submitted_model)
    die_mid_run(run, minutes_ago=1)
    assert requeue_stale_runs().startswith("0 stale runs re-queued")
    run.refresh_from_db()
    assert run.status == "running"


def test_a_run_that_keeps_dying_fails_with_a_reason(submitted_model, sentiment_dataset, settings):
    settings.EVALUATION_MAX_ATTEMPTS = 2
    evaluate_model(submitted_model.pk)
    run = EvaluationRun.objects.get(model=submitted_model)
    die_mid_run(run, attempt=2)
    call_command("requeue_stale_runs")
    run.refresh_from_db()
    submitted_model.refresh_from_db()
    assert run.status == "failed" and "Gave up after 2 attempts" in run.error
    assert submitted_model.status == "failed" and "sentiment-r1-dev" in submitted_model.failure_reason
