"""The round diversity job embeds what is missing, computes the round's figures and clusters, and
stores them on the round's report and each example's cluster and near-duplicate group beside it; only the task's owners may ask for it."""

import pytest

from annotation.diversity import report
from annotation.diversity_models import ExampleDiversity, RoundDiversity
from annotation.models import Example
from annotation.services import create_example
from dynabench.errors import NotAllowed

TEXTS = [
    "The soup was cold.", "The soup was cold!", "The staff were friendly.", "The room was dirty.",
    "Nobody is playing music outside.", "The museum opened in 1921.", "The queue was long.",
]


def test_it_computes_the_figures_of_the_rounds_examples(annotator, owner, sentiment_context, tiny_sentence_encoder):
    # given: seven examples, three of them validated fooling examples
    examples = [create_example(user=annotator, context=sentiment_context, input={"text": t}, target={"label": "positive"})
                for t in TEXTS]
    Example.objects.filter(pk__in=[e.pk for e in examples[:3]]).update(validation_state="verified_correct", model_wrong=True)
    report.request_round_diversity(round=sentiment_context.round, acting_user=owner)
    # when
    summary = report.compute_round_diversity(sentiment_context.round.pk)
    # then
    stored = RoundDiversity.objects.get(round=sentiment_context.round)
    figures = stored.figures
    assert stored.status == "done" and stored.computed_at is not None
    assert summary.startswith(f"round {sentiment_context.round.pk}: 7 examples, Vendi ")
    assert figures["examples"] == 7 and figures["fooling_examples"] == 3
    assert 1 <= figures["vendi_low"] <= figures["vendi_high"] and 1 <= figures["vendi"] <= 7
    assert figures["per_author"][0]["author_id"] == annotator.pk and figures["per_author"][0]["examples"] == 7
    assert 1 <= figures["per_author"][0]["low"] <= figures["per_author"][0]["high"] <= 7  # the annotator's own interval
    # "the soup was cold" twice: identical tokens for the lower-casing tokenizer, so one pair at cosine 1
    assert [examples[0].pk, examples[1].pk] in [pair[:2] for pair in figures["pairs"]]
    places = {d.example_id: d for d in ExampleDiversity.objects.filter(round=sentiment_context.round)}
    assert set(places) == {e.pk for e in examples} and "assigned" not in figures
    # the second "soup was cold" is in the first one's near-duplicate group, which the first leads
    assert places[examples[1].pk].representative_id == places[examples[0].pk].representative_id == examples[0].pk
    for place in places.values():
        members = [p for p in places.values() if p.representative_id == place.representative_id]
        assert place.group_size == len(members) and places[place.representative_id].representative_id == place.representative_id


def test_an_outsider_cannot_ask_for_it(outsider, sentiment_context):
    with pytest.raises(NotAllowed):
        report.request_round_diversity(round=sentiment_context.round, acting_user=outsider)
