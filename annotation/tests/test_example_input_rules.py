"""create_example refuses missing fields, over-long text, unknown fields and labels, and saves nothing."""

import pytest

from annotation.models import Example
from annotation.services import create_example
from dynabench.errors import RuleError


def refused(**kwargs):
    with pytest.raises(RuleError) as error:
        create_example(**kwargs)
    assert not Example.objects.exists()
    return error.value


def test_it_refuses_a_missing_text(annotator, sentiment_context):
    error = refused(user=annotator, context=sentiment_context, input={"text": "   "}, target={"label": "positive"})
    assert (error.code, error.field) == ("required", "text")
    assert "required" in error.message


def test_it_refuses_a_text_over_the_fields_cap(annotator, sentiment_context):
    error = refused(user=annotator, context=sentiment_context, input={"text": "a" * 501}, target={"label": "positive"})
    assert (error.code, error.field) == ("too_long", "text")
    assert "501" in error.message and "500" in error.message


def test_it_refuses_a_label_outside_the_tasks_label_set(annotator, sentiment_context):
    error = refused(user=annotator, context=sentiment_context, input={"text": "ok"}, target={"label": "mixed"})
    assert (error.code, error.field) == ("invalid_label", "label")
    assert "positive, negative, neutral" in error.message


def test_it_refuses_a_missing_label(annotator, sentiment_context):
    error = refused(user=annotator, context=sentiment_context, input={"text": "ok"}, target={})
    assert (error.code, error.field) == ("required", "label")


def test_it_refuses_an_unknown_field(annotator, sentiment_context):
    error = refused(user=annotator, context=sentiment_context, input={"text": "ok", "hypothesis": "x"}, target={"label": "neutral"})
    assert (error.code, error.field) == ("unknown_field", "hypothesis")


def test_it_accepts_a_label_alias_and_stores_the_label(annotator, nli_task, nli_model):
    context = nli_task.current_round().contexts.first()
    example = create_example(user=annotator, context=context, input={"hypothesis": "It is old."}, target={"label": "e"})
    assert example.target == {"label": "entailment"}
    assert example.input["premise"] == context.data["premise"]


def test_it_refuses_a_context_of_a_closed_round(annotator, sentiment_context):
    sentiment_context.round.status = "closed"
    sentiment_context.round.save()
    error = refused(user=annotator, context=sentiment_context, input={"text": "ok"}, target={"label": "neutral"})
    assert error.code == "round_closed"
