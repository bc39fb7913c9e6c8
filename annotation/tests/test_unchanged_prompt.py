"""A field prefilled from the prompt must be rewritten: the prompt sent back unchanged is refused
(with a label the model disagreed with, it used to count as fooling the model)."""

import pytest

from annotation.models import Example
from annotation.services import create_example
from dynabench.errors import RuleError


def test_the_unchanged_prompt_is_refused(annotator, sentiment_context):
    prompt = sentiment_context.data["prompt"]
    with pytest.raises(RuleError) as refused:
        create_example(user=annotator, context=sentiment_context, input={"text": f"  {prompt} "}, target={"label": "negative"})
    assert (refused.value.code, refused.value.field) == ("unchanged_input", "text")
    assert "rewrite it" in refused.value.message
    assert not Example.objects.exists()


def test_a_rewritten_prompt_is_accepted(annotator, sentiment_context):
    prompt = sentiment_context.data["prompt"]
    example = create_example(user=annotator, context=sentiment_context, input={"text": prompt + " Not really."}, target={"label": "negative"})
    assert example.pk


def test_fields_not_prefilled_may_repeat_the_context(annotator, nli_task, nli_model):
    context = nli_task.current_round().contexts.order_by("pk").first()
    example = create_example(user=annotator, context=context, input={"hypothesis": context.data["premise"]}, target={"label": "entailment"})
    assert example.pk
