"""A validator may record the category they voted (``metadata["voted_label"]``), and agreement reads it."""

import pytest

from dynabench.errors import RuleError
from validation.round_statistics import round_agreement
from validation.services import record_validation
from validation.tests.conftest import make_example, make_user, leased


def test_it_keeps_the_voted_category_and_agreement_reads_it(sentiment_task, annotator):
    validators = [make_user(f"voter{i}", "validator") for i in range(3)]
    first = make_example(sentiment_task, annotator, label="positive")
    second = make_example(sentiment_task, annotator, label="negative")
    for example, votes in ((first, ["positive", "positive", "mixed"]), (second, ["negative", "neutral", "neutral"])):
        for validator, voted in zip(validators, votes):
            label = "correct" if voted == example.target["label"] else "incorrect"
            record_validation(example=leased(example, validator), validator=validator, label=label, metadata={"voted_label": voted})

    agreement = round_agreement(first.round, field="voted_label")

    assert first.validations.order_by("id").first().metadata == {"voted_label": "positive"}
    assert agreement.categories == ("mixed", "negative", "neutral", "positive")
    assert agreement.fleiss_items == 2 and agreement.raters_per_item == 3


def test_it_refuses_a_voted_label_that_is_not_a_short_text(sentiment_task, annotator, validator):
    example = make_example(sentiment_task, annotator)

    with pytest.raises(RuleError) as error:
        record_validation(example=leased(example, validator), validator=validator, label="correct", metadata={"voted_label": ["positive"]})

    assert error.value.field == "voted_label"
    assert not example.validations.exists()
