"""A round with no model in the loop refuses examples with a clear error."""

import pytest

from annotation.loop_choice import model_in_loop
from annotation.models import Example
from annotation.services import create_example
from dynabench.errors import RuleError


def test_it_refuses_an_example_when_the_round_has_no_model_in_the_loop(annotator, sentiment_task):
    context = sentiment_task.current_round().contexts.first()
    with pytest.raises(RuleError) as refused:
        create_example(user=annotator, context=context, input={"text": "fine"}, target={"label": "neutral"})
    assert refused.value.code == "no_model_in_loop"
    assert "no model in the loop" in refused.value.message
    assert not Example.objects.exists()
    context.refresh_from_db()
    assert context.times_used == 0


def test_it_picks_the_first_target_model_deterministically(sentiment_task, sentiment_model, tiny_classifier_dir):
    from tasks.models import MLModel

    later = MLModel.objects.create(task=sentiment_task, name="later", path=str(tiny_classifier_dir))
    sentiment_task.current_round().target_models.add(later)
    assert model_in_loop(sentiment_task.current_round()) == sentiment_model
