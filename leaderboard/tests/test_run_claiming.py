"""A run is claimed by one worker only, and a superseded attempt never writes its results."""

from unittest import mock

from leaderboard import evaluation
from leaderboard.jobs import evaluate_model, evaluate_run
from leaderboard.models import EvaluationRun


def test_a_run_already_claimed_is_skipped(submitted_model, sentiment_dataset):
    evaluate_model(submitted_model.pk)
    run = EvaluationRun.objects.get(model=submitted_model)
    EvaluationRun.objects.filter(pk=run.pk).update(status="running", attempt=1)
    assert evaluate_run(run.pk) == f"run {run.pk}: not queued (running), skipped"
    run.refresh_from_db()
    assert (run.status, run.attempt, run.performance) == ("running", 1, None)


def test_results_of_a_superseded_attempt_are_discarded(submitted_model, sentiment_dataset, media_root, settings):
    settings.EVALUATION_BATCH_SECONDS = 0  # one run a job: else the job takes each rerun it causes, for 300 s
    evaluate_model(submitted_model.pk)
    run = EvaluationRun.objects.get(model=submitted_model)
    real = evaluation._evaluate

    def rerun_while_working(run_, beat):
        outcome = real(run_, beat)
        evaluate_model(submitted_model.pk)  # the owner asks for a rerun while this worker is busy
        return outcome

    with mock.patch.object(evaluation, "_evaluate", rerun_while_working):
        summary = evaluate_run(run.pk)
    assert summary.endswith("superseded by a newer attempt, results discarded")
    run.refresh_from_db()
    assert (run.status, run.performance, run.predictions_file) == ("queued", None, "")
    assert not list((media_root / "evaluations" / str(submitted_model.pk)).glob("*.jsonl"))
