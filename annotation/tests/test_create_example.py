"""create_example stores the example with the model's full answer, decided on the server."""

import pytest

from annotation.models import Example
from annotation.services import create_example
from annotation.tests.conftest import model_label, other_label

TEXT = "The waiter was friendly but the soup was cold."


def test_it_stores_the_model_answer_model_round_and_time_spent(annotator, sentiment_task, sentiment_context, sentiment_model):
    # given
    label = model_label(sentiment_task, TEXT)
    # when
    example = create_example(
        user=annotator, context=sentiment_context, input={"text": TEXT}, target={"label": label}, time_spent=12.5
    )
    # then
    example.refresh_from_db()
    assert example.author == annotator
    assert example.round == sentiment_context.round
    assert example.model == sentiment_model
    assert example.input == {"prompt": sentiment_context.data["prompt"], "text": TEXT}
    assert example.target == {"label": label}
    assert example.model_output["label"] == label
    assert set(example.model_output["probs"]) == set(sentiment_task.labels)
    assert example.model_wrong is False
    assert example.time_spent == 12.5


def test_it_says_the_model_was_fooled_when_the_labels_differ(annotator, sentiment_task, sentiment_context):
    label = other_label(sentiment_task, model_label(sentiment_task, TEXT))
    example = create_example(user=annotator, context=sentiment_context, input={"text": TEXT}, target={"label": label})
    example.refresh_from_db()
    assert example.model_wrong is True


def test_it_bumps_the_context_times_used(annotator, sentiment_context):
    before = sentiment_context.times_used
    create_example(user=annotator, context=sentiment_context, input={"text": TEXT}, target={"label": "positive"})
    create_example(user=annotator, context=sentiment_context, input={"text": TEXT + "!"}, target={"label": "negative"})
    sentiment_context.refresh_from_db()
    assert sentiment_context.times_used == before + 2


def test_it_ignores_model_wrong_and_model_output_from_client(annotator, sentiment_task, sentiment_context):
    # given: the client claims the model was fooled and says what the model answered
    label = model_label(sentiment_task, TEXT)
    forged = {"label": label, "model_wrong": True, "model_output": {"label": other_label(sentiment_task, label)}}
    # when
    example = create_example(user=annotator, context=sentiment_context, input={"text": TEXT}, target=forged)
    # then: the server asked the model and decided itself
    example.refresh_from_db()
    assert example.model_wrong is False
    assert example.model_output["label"] == label
    assert example.target == {"label": label}


def test_it_uses_the_context_fields_of_the_context_not_the_client(annotator, sentiment_context):
    example = create_example(
        user=annotator, context=sentiment_context,
        input={"text": TEXT, "prompt": "something the client made up"}, target={"label": "neutral"},
    )
    assert example.input["prompt"] == sentiment_context.data["prompt"]


def test_it_keeps_explanations_sent_with_the_example(annotator, sentiment_task, sentiment_context):
    label = other_label(sentiment_task, model_label(sentiment_task, TEXT))
    example = create_example(
        user=annotator, context=sentiment_context, input={"text": TEXT}, target={"label": label},
        metadata={"example_explanation": "the cold soup dominates", "model_explanation": "it saw 'friendly'"},
    )
    example.refresh_from_db()
    assert example.metadata == {"example_explanation": "the cold soup dominates", "model_explanation": "it saw 'friendly'"}


@pytest.mark.parametrize("tag, expected", [("", "ctx-tag"), ("mine", "mine")])
def test_it_tags_the_example_with_the_given_tag_or_the_contexts(annotator, sentiment_context, tag, expected):
    sentiment_context.tag = "ctx-tag"
    sentiment_context.save()
    example = create_example(user=annotator, context=sentiment_context, input={"text": TEXT}, target={"label": "neutral"}, tag=tag)
    assert example.tag == expected


def test_it_refuses_a_user_without_the_annotator_role(outsider, sentiment_context):
    from dynabench.errors import NotAllowed

    with pytest.raises(NotAllowed) as refused:
        create_example(user=outsider, context=sentiment_context, input={"text": TEXT}, target={"label": "neutral"})
    assert refused.value.code == "not_annotator"
    assert not Example.objects.exists()
