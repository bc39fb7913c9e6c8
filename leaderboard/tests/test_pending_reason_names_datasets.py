"""A model listed as pending says which datasets it still lacks, by name, with its run's status."""

from leaderboard.jobs import evaluate_run, recompute_leaderboard
from leaderboard.models import EvaluationRun
from leaderboard.scheduling import schedule_evaluations
from leaderboard.selectors import leaderboard_table
from tasks.models import MLModel


def test_the_reason_names_the_missing_dataset_and_its_queued_run(sentiment_task, sentiment_datasets, researcher, tiny_classifier_dir, settings):
    settings.EVALUATION_BATCH_SECONDS = 0  # one run a job: the second dataset stays queued
    model = MLModel.objects.create(task=sentiment_task, owner=researcher, name="tiny", path=str(tiny_classifier_dir),
                                   published=True, status=MLModel.Status.EVALUATED)
    schedule_evaluations(sentiment_task)
    first, second = sentiment_datasets
    evaluate_run(EvaluationRun.objects.get(model=model, dataset=first).pk)
    recompute_leaderboard(sentiment_task.pk)

    table = leaderboard_table(sentiment_task)

    assert table.rows == []
    assert [p["reason"] for p in table.pending] == [f"no performance yet on {second.name} (queued)"]
