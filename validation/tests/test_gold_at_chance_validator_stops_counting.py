"""A validator who answers gold items at chance falls below the task's threshold: their votes
stop counting, the examples they helped settle are recomputed and go back to the queue, and
the owner sees who and why."""

import random

from annotation.models import Example, ValidationState
from validation.gold import gold_report
from validation.models import Validation, ValidatorStanding
from validation.queue import next_example_for, review_queue
from validation.services import record_validation
from validation.tests.conftest import make_example, make_user, leased
from validation.tests.gold_helpers import configure, gold_items


def test_chance_answers_on_gold_exclude_the_votes_and_recompute_consensus(sentiment_task, annotator, owner, validators):
    round = sentiment_task.current_round()
    configure(sentiment_task, gold_rate=0.0, gold_accuracy_threshold=0.7, gold_min_answers=10)
    gold = {e.pk: v for e, v in gold_items(sentiment_task, annotator, owner, 24)}
    careful, steady = validators[0], validators[1]
    sloppy = make_user("sloppy", "validator")

    # Three examples settled by the careful, the steady and the sloppy validator together.
    settled = [make_example(sentiment_task, annotator, model_wrong=True, text=f"Regular {i}") for i in range(3)]
    for example in settled:
        for person in (careful, steady, sloppy):
            record_validation(example=leased(example, person), validator=person, label="correct")
    assert {e.validation_state for e in Example.objects.filter(pk__in=[e.pk for e in settled])} == {ValidationState.VERIFIED_CORRECT}

    # Now every item the queue hands out is gold; the sloppy validator answers at chance.
    configure(sentiment_task, gold_rate=1.0)
    rng = random.Random(7)
    served = []
    for _ in range(12):
        example = next_example_for(validator=sloppy, round=round)
        assert example.pk in gold, "with gold_rate 1 the queue serves gold items"
        assert example.validation_state == ValidationState.PENDING  # looks like any pending example
        served.append(example.pk)
        record_validation(example=leased(example, sloppy), validator=sloppy, label=rng.choice(["correct", "incorrect"]),
                          expected_state="pending")
    right = sum(Validation.objects.get(example_id=pk, validator=sloppy).label == gold[pk] for pk in served)
    assert len(set(served)) == 12 and right / 12 < 0.7

    standing = ValidatorStanding.objects.get(task=sentiment_task, validator=sloppy)
    assert standing.excluded and (standing.answered, standing.correct) == (12, right)
    # Excluded at the 10th check at the latest; the later checks kept it.
    assert "below the task's threshold of 70%" in standing.reason

    # Their votes no longer count, and the three examples are pending again with two votes each.
    assert not Validation.objects.filter(validator=sloppy, gold_check=False, counts=True).exists()
    for example in Example.objects.filter(pk__in=[e.pk for e in settled]):
        assert (example.validation_state, example.validation_count, example.correct_count) == (ValidationState.PENDING, 2, 2)
    # ... so they are back in the review queue for someone else.
    fresh = make_user("fresh", "validator")
    assert set(review_queue(validator=fresh, round=round, model_wrong=True).values_list("pk", flat=True)) >= {e.pk for e in settled}
    record_validation(example=leased(settled[0], fresh), validator=fresh, label="correct")
    assert Example.objects.get(pk=settled[0].pk).validation_state == ValidationState.VERIFIED_CORRECT

    # A new vote of the sloppy validator is stored but does not count.
    late = make_example(sentiment_task, annotator, model_wrong=True, text="Late example")
    record_validation(example=leased(late, sloppy), validator=sloppy, label="correct")
    assert Validation.objects.get(example=late, validator=sloppy).counts is False
    assert Example.objects.get(pk=late.pk).validation_count == 0

    # Gold items stay settled by the owner; gold checks never moved them.
    assert Example.objects.filter(pk__in=gold).exclude(validation_state=ValidationState.PENDING).count() == 24

    # The owner sees who and why.
    report = gold_report(sentiment_task)
    assert report["excluded"] == 1
    row = next(s for s in report["standings"] if s.validator == sloppy)
    assert row.excluded and row.recomputed_examples == 3 and row.reason == standing.reason


def test_a_careful_validator_keeps_counting(sentiment_task, annotator, owner, validators):
    round = sentiment_task.current_round()
    configure(sentiment_task, gold_rate=1.0, gold_accuracy_threshold=0.7, gold_min_answers=5)
    gold = {e.pk: v for e, v in gold_items(sentiment_task, annotator, owner, 6)}
    careful = validators[0]
    for _ in range(6):
        example = next_example_for(validator=careful, round=round)
        record_validation(example=leased(example, careful), validator=careful, label=gold[example.pk])

    standing = ValidatorStanding.objects.get(task=sentiment_task, validator=careful)
    assert (standing.excluded, standing.answered, standing.correct) == (False, 6, 6)
    # Served gold items run out: the queue falls back to ordinary examples.
    regular = make_example(sentiment_task, annotator, model_wrong=True, text="An ordinary one")
    assert next_example_for(validator=careful, round=round).pk == regular.pk
