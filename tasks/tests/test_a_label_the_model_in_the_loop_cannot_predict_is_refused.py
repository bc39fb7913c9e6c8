"""Adding a label that the model in the loop cannot predict (its config.json has no output for it)
is refused while that model is in the loop: every example with it would "fool" the model. The same
holds for putting such a model in the loop, and the fooled rule never rewards such a label."""

import pytest

from dynabench.errors import FieldErrors, RuleError
from tasks.models import MLModel, Round
from tasks.services import add_loop_model, labels_out_of_reach, update_task_settings


@pytest.fixture
def in_loop(sentiment_task, tiny_classifier_dir, owner):
    """The tiny positive/negative/neutral classifier, alone in the loop of round 1."""
    model = MLModel.objects.create(task=sentiment_task, owner=owner, name="tiny-sentiment", path=str(tiny_classifier_dir))
    round1 = sentiment_task.current_round()
    round1.target_models.set([model])
    return model


def test_adding_unsure_is_refused_with_the_model_named(owner, sentiment_task, in_loop):
    with pytest.raises(FieldErrors) as refused:
        update_task_settings(task=sentiment_task, acting_user=owner, version=sentiment_task.version,
                             labels=[*sentiment_task.labels, "unsure"])

    [message] = refused.value.errors["labels"]
    assert "tiny-sentiment, in the loop of round 1, cannot predict 'unsure'" in message
    sentiment_task.refresh_from_db()
    assert "unsure" not in sentiment_task.labels


def test_the_console_shows_the_refusal_next_to_the_labels(client, owner, sentiment_task, in_loop):
    client.force_login(owner)
    response = client.post("/tasks/sentiment/console/", {
        "name": sentiment_task.name, "instructions": "", "labels": "positive\nnegative\nneutral\nunsure",
        "validations_needed": 3, "daily_example_cap": 0, "content_warning": "", "version": sentiment_task.version,
    })

    assert response.status_code == 400
    assert "cannot predict &#x27;unsure&#x27;" in response.content.decode()


def test_once_the_model_left_the_loop_the_label_can_be_added_but_the_model_cannot_come_back(owner, sentiment_task, in_loop):
    round1 = sentiment_task.current_round()
    round1.target_models.set([])  # the model left the loop

    task = update_task_settings(task=sentiment_task, acting_user=owner, version=sentiment_task.version,
                                labels=[*sentiment_task.labels, "unsure"])

    assert labels_out_of_reach(MLModel.objects.get(pk=in_loop.pk)) == ["unsure"] and task.labels[-1] == "unsure"
    with pytest.raises(RuleError) as refused:
        add_loop_model(round=Round.objects.get(pk=round1.pk), model_id=in_loop.pk, acting_user=owner)
    assert refused.value.code == "label_out_of_reach" and "cannot predict the label 'unsure'" in refused.value.message


def test_the_fooled_rule_never_rewards_a_label_the_model_cannot_output(sentiment_task):
    config = {**sentiment_task.config, "labels": [*sentiment_task.labels, "unsure"]}
    output = {"label": "positive", "probs": {"positive": 0.7, "negative": 0.2, "neutral": 0.1}}

    assert sentiment_task.spec.model_wrong(config, {"label": "unsure"}, output) is False
    assert sentiment_task.spec.model_wrong(config, {"label": "negative"}, output) is True
