"""The datasheet's figures of a collected round come from the platform's records: examples collected
and verified fooled (vMER), counted validations per example, pay per example and the share written
with AI help (assisted or generated)."""

from decimal import Decimal

from annotation.counters import recount_rounds
from annotation.models import Example, Origin, ValidationState
from releases.stats import release_stats
from validation.models import RoundPay, Validation


def test_a_round_s_figures_are_counted_from_its_rows(sentiment_task, annotator, validator, owner):
    round1 = sentiment_task.rounds.get(number=1)
    context = round1.contexts.first()
    rows = [(True, ValidationState.VERIFIED_CORRECT, Origin.WRITTEN), (True, ValidationState.VERIFIED_CORRECT, Origin.ASSISTED),
            (False, ValidationState.PENDING, Origin.GENERATED), (True, ValidationState.VERIFIED_INCORRECT, Origin.WRITTEN)]
    examples = [Example.objects.create(round=round1, context=context, author=annotator, input={"text": f"Sentence {i}."},
                                       target={"label": "negative"}, model_output={"label": "positive"}, model_wrong=wrong,
                                       validation_state=state, origin=origin)
                for i, (wrong, state, origin) in enumerate(rows)]
    for example in examples[:2]:
        Validation.objects.create(example=example, validator=validator, label="correct", mode="user")
    RoundPay.objects.create(round=round1, currency="GBP", per_example=Decimal("0.50"))
    recount_rounds([round1.pk])

    stats = release_stats(sentiment_task, [1], {"dev": 4})

    figures = stats["rounds"][0]
    assert (figures["collected"], figures["fooled"], figures["verified_fooled"]) == (4, 3, 2)
    assert figures["vmer"] == 0.5
    assert figures["validations_per_example"] == 0.5
    assert figures["ai_assisted_share"] == 0.5
    assert figures["pay"]["per_example"] == "0.50" and figures["pay"]["currency"] == "GBP"
    assert stats["consensus"]["validations_needed"] == 3
