"""The author explains why the example is correct and, if it fooled the model, why the model was wrong."""

import pytest

from annotation.models import Example
from annotation.services import add_explanations, create_example
from annotation.tests.conftest import model_label, other_label
from dynabench.errors import NotAllowed, RuleError

TEXT = "Honestly the wait was worth it."


@pytest.fixture
def fooling(annotator, sentiment_task, sentiment_context):
    label = other_label(sentiment_task, model_label(sentiment_task, TEXT))
    return create_example(user=annotator, context=sentiment_context, input={"text": TEXT}, target={"label": label})


@pytest.fixture
def not_fooling(annotator, sentiment_task, sentiment_context):
    label = model_label(sentiment_task, TEXT)
    return create_example(user=annotator, context=sentiment_context, input={"text": TEXT}, target={"label": label})


def test_it_stores_both_explanations_of_a_fooling_example(annotator, fooling):
    add_explanations(example=fooling, user=annotator, explanations={"example_explanation": "worth it is praise"})
    add_explanations(example=fooling, user=annotator, explanations={"model_explanation": "'wait' sounds negative"})
    fooling.refresh_from_db()
    assert fooling.metadata == {"example_explanation": "worth it is praise", "model_explanation": "'wait' sounds negative"}


def test_it_refuses_a_model_explanation_when_the_model_was_right(annotator, not_fooling):
    with pytest.raises(RuleError) as refused:
        add_explanations(example=not_fooling, user=annotator, explanations={"model_explanation": "?"})
    assert refused.value.code == "explanation_not_applicable"
    not_fooling.refresh_from_db()
    assert not_fooling.metadata == {}


def test_it_refuses_an_unknown_explanation(annotator, fooling):
    with pytest.raises(RuleError) as refused:
        add_explanations(example=fooling, user=annotator, explanations={"model_wrong": "true"})
    assert refused.value.code == "unknown_explanation"


def test_it_refuses_an_empty_explanation(annotator, fooling):
    with pytest.raises(RuleError) as refused:
        add_explanations(example=fooling, user=annotator, explanations={"example_explanation": "  "})
    assert refused.value.code == "required"


def test_it_refuses_anyone_but_the_author(owner, fooling):
    with pytest.raises(NotAllowed):
        add_explanations(example=fooling, user=owner, explanations={"example_explanation": "mine now"})
    assert Example.objects.get(pk=fooling.pk).metadata == {}


def test_it_refuses_a_retracted_example(annotator, fooling):
    Example.objects.filter(pk=fooling.pk).update(retracted=True)
    fooling.refresh_from_db()
    with pytest.raises(RuleError) as refused:
        add_explanations(example=fooling, user=annotator, explanations={"example_explanation": "late"})
    assert refused.value.code == "retracted"
