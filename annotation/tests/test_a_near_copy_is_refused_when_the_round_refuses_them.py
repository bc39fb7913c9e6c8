"""Under a round's ``refuse`` rule, ``create_example`` refuses an example within the threshold of one
already in the round, on every surface (the service, the REST API's 400); ``warn`` and ``off`` store it."""

import pytest

from annotation.diversity import rules
from annotation.diversity_models import ExampleEmbedding
from annotation.models import Example
from annotation.services import create_example
from dynabench.errors import RuleError

TEXT = "The waiter was friendly but the soup was cold."


@pytest.fixture
def refusing_round(sentiment_context, owner, tiny_sentence_encoder):
    rules.set_round_rule(round=sentiment_context.round, acting_user=owner, threshold=0.999, mode="refuse")
    return sentiment_context.round


def test_a_second_copy_differing_only_in_case_is_refused(annotator, sentiment_context, refusing_round):
    # given
    first = create_example(user=annotator, context=sentiment_context, input={"text": TEXT}, target={"label": "positive"})
    # when
    with pytest.raises(RuleError) as refused:
        create_example(user=annotator, context=sentiment_context, input={"text": TEXT.upper()}, target={"label": "negative"})
    # then
    assert refused.value.code == "near_duplicate"
    assert refused.value.field == "text"
    assert "near-copy of 1 example(s) already in this round (1 of yours)" in refused.value.message
    assert list(Example.objects.filter(round=refusing_round).values_list("pk", flat=True)) == [first.pk]


def test_the_checked_example_keeps_the_embedding_it_was_checked_with(annotator, sentiment_context, refusing_round):
    example = create_example(user=annotator, context=sentiment_context, input={"text": TEXT}, target={"label": "positive"})
    stored = ExampleEmbedding.objects.get(example=example)
    assert stored.encoder == "tiny-bert"
    assert stored.dim == 32
    assert abs(float((stored.as_array() ** 2).sum()) - 1.0) < 1e-5


def test_the_api_answers_400_with_the_code(client, annotator, sentiment_task, sentiment_context, refusing_round):
    create_example(user=annotator, context=sentiment_context, input={"text": TEXT}, target={"label": "positive"})
    client.force_login(annotator)
    response = client.post(
        "/api/v1/examples",
        {"task": sentiment_task.code, "context": sentiment_context.pk, "input": {"text": TEXT}, "target": {"label": "negative"}},
        content_type="application/json",
    )
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "near_duplicate"


@pytest.mark.parametrize("mode", ["warn", "off"])
def test_warn_and_off_store_the_copy(annotator, owner, sentiment_context, tiny_sentence_encoder, mode):
    rules.set_round_rule(round=sentiment_context.round, acting_user=owner, threshold=0.999, mode=mode)
    create_example(user=annotator, context=sentiment_context, input={"text": TEXT}, target={"label": "positive"})
    create_example(user=annotator, context=sentiment_context, input={"text": TEXT}, target={"label": "negative"})
    assert Example.objects.filter(round=sentiment_context.round).count() == 2
