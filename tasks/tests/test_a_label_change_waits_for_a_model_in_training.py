"""A label change is refused while a model in an open round's loop is still being trained (it has no
config.json yet): it was trained on the label set it started with, so it could not output the new
one. Once it has left the loop, the change goes through."""

import pytest

from dynabench.errors import FieldErrors
from tasks.models import MLModel
from tasks.services import update_task_settings


@pytest.fixture
def training_in_loop(sentiment_task, owner):
    model = MLModel.objects.create(task=sentiment_task, owner=owner, name="still-training", path="/models/not-there",
                                   status=MLModel.Status.TRAINING)
    sentiment_task.current_round().target_models.set([model])
    return model


def test_adding_a_label_is_refused_while_the_model_in_the_loop_trains(owner, sentiment_task, training_in_loop):
    with pytest.raises(FieldErrors) as refused:
        update_task_settings(task=sentiment_task, acting_user=owner, version=sentiment_task.version,
                             labels=[*sentiment_task.labels, "mixed"])

    [message] = refused.value.errors["labels"]
    assert "still-training, in the loop of round 1, is still being trained" in message
    sentiment_task.refresh_from_db()
    assert "mixed" not in sentiment_task.labels


def test_the_change_goes_through_once_the_training_model_left_the_loop(owner, sentiment_task, training_in_loop):
    sentiment_task.current_round().target_models.set([])

    task = update_task_settings(task=sentiment_task, acting_user=owner, version=sentiment_task.version,
                                labels=[*sentiment_task.labels, "mixed"])

    assert task.labels[-1] == "mixed"
