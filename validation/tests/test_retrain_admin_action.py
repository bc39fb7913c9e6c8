"""The task admin's "retrain" action: a maintainer turns validated examples into a model being trained."""

from django.urls import reverse

from annotation.models import Example, ValidationState
from tasks.models import MLModel


def _retrain(client, task):
    return client.post(
        reverse("admin:tasks_task_changelist"), {"action": "retrain_target_models", "_selected_action": [task.pk]}, follow=True
    )


def test_it_creates_a_training_model_and_enqueues_its_job(
    client, admin_user, sentiment_task, annotator, training_queue, django_capture_on_commit_callbacks
):
    round1 = sentiment_task.rounds.get(number=1)
    Example.objects.create(
        round=round1, context=round1.contexts.first(), author=annotator, input={"prompt": "p", "text": "Not bad at all."},
        target={"label": "positive"}, model_output={"label": "negative"}, model_wrong=True,
        validation_state=ValidationState.VERIFIED_CORRECT,
    )
    client.force_login(admin_user)

    with django_capture_on_commit_callbacks(execute=True):
        response = _retrain(client, sentiment_task)

    assert response.status_code == 200
    model = MLModel.objects.get(task=sentiment_task)
    assert model.status == MLModel.Status.TRAINING
    assert f"training model {model.name} on the training queue" in response.content.decode()
    assert training_queue.fetch_job(model.training_info["job_id"]) is not None


def test_it_says_why_when_there_is_nothing_validated(client, admin_user, sentiment_task, training_queue):
    client.force_login(admin_user)

    response = _retrain(client, sentiment_task)

    assert "has no example validated as correct yet" in response.content.decode()
    assert not MLModel.objects.exists()
    assert training_queue.count == 0
