"""With several models in the loop, the round's rule picks the one that answers each example,
and the example records which model answered."""

import pytest

from annotation.loop_choice import model_in_loop
from annotation.models import Example
from annotation.services import create_example
from tasks.models import MLModel, Round
from tests.tiny_models import build_tiny_classifier


@pytest.fixture(scope="module")
def second_dir(tmp_path_factory):
    return build_tiny_classifier(tmp_path_factory.mktemp("tiny-sentiment-2"), ["negative", "neutral", "positive"], seed=7)


@pytest.fixture
def two_models(sentiment_task, sentiment_model, second_dir):
    other = MLModel.objects.create(task=sentiment_task, name="tiny-2", kind=MLModel.Kind.HF_DIRECTORY, path=str(second_dir))
    sentiment_task.current_round().target_models.add(other)
    return sentiment_model, other


def _write(annotator, context, text="A sentence about the room.", label="positive"):
    return create_example(user=annotator, context=context, input={"text": text}, target={"label": label})


def test_round_robin_takes_turns_and_records_the_model(annotator, sentiment_context, two_models):
    first, second = two_models
    answered = [_write(annotator, sentiment_context, text=f"Sentence number {i}.").model_id for i in range(4)]

    assert answered == [first.pk, second.pk, first.pk, second.pk]
    assert list(Example.objects.order_by("pk").values_list("model_id", flat=True)) == answered


def test_least_fooled_gives_the_next_example_to_the_model_fooled_least(annotator, sentiment_task, sentiment_context, two_models):
    first, second = two_models
    round = sentiment_task.current_round()
    Round.objects.filter(pk=round.pk).update(loop_rule=Round.LoopRule.LEAST_FOOLED)
    round.refresh_from_db()
    common = {"round": round, "context": sentiment_context, "author": annotator, "input": {"text": "x"}, "target": {"label": "positive"}}
    Example.objects.create(model=first, model_wrong=True, **common)
    Example.objects.create(model=first, model_wrong=False, **common)  # first: fooled 1 of 2
    Example.objects.create(model=second, model_wrong=False, **common)
    Example.objects.create(model=second, model_wrong=False, **common)
    Example.objects.create(model=second, model_wrong=True, **common)  # second: fooled 1 of 3

    assert model_in_loop(round) == second
    Example.objects.create(model=second, model_wrong=True, retracted=False, **common)  # second: 2 of 4
    assert model_in_loop(round) == first


def test_a_retracted_example_still_counts_as_a_turn_but_not_as_fooling(annotator, sentiment_task, sentiment_context, two_models):
    first, second = two_models
    round = sentiment_task.current_round()
    common = {"round": round, "context": sentiment_context, "author": annotator, "input": {"text": "x"}, "target": {"label": "positive"}}
    Example.objects.create(model=first, model_wrong=True, retracted=True, **common)

    assert model_in_loop(round) == second
    Round.objects.filter(pk=round.pk).update(loop_rule=Round.LoopRule.LEAST_FOOLED)
    round.refresh_from_db()
    assert model_in_loop(round) == second  # first has 0 kept examples: rate 0, but more answered
