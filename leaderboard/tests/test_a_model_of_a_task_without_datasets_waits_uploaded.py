"""A model directory of a task that has no dataset yet (a task an admin just approved or created) is
not failed: it waits ``uploaded``, with no reason, so it can go into round 1's loop at once; the
task's first scoring dataset schedules its evaluation."""

from leaderboard.models import EvaluationRun
from leaderboard.scheduling import schedule_evaluations
from leaderboard.services import register_model_directory
from leaderboard.tests.conftest import SENTIMENT_ITEMS, make_dataset
from tasks.models import MLModel
from tasks.services import round_gaps


def test_a_model_of_a_task_without_datasets_waits_uploaded(django_capture_on_commit_callbacks, admin_user, sentiment_task, tiny_classifier_dir):
    assert not sentiment_task.datasets.exists()
    with django_capture_on_commit_callbacks(execute=True):
        model = register_model_directory(actor=admin_user, task=sentiment_task, path=tiny_classifier_dir, name="early")
    model.refresh_from_db()
    assert (model.status, model.failure_reason) == (MLModel.Status.UPLOADED, "")
    assert not EvaluationRun.objects.filter(model=model).exists()
    round1 = sentiment_task.rounds.get(number=1)
    round1.target_models.set([model])
    assert round_gaps(round1) == []  # a model that can answer, and the round's contexts

    dataset = make_dataset(sentiment_task, "sentiment-r1-dev", [(u, {"text": t}, {"label": label}, g) for u, t, label, g in SENTIMENT_ITEMS])
    schedule_evaluations(sentiment_task, datasets=[dataset])  # what a new dataset's signal does
    assert EvaluationRun.objects.filter(model=model, dataset=dataset).exists()
