"""Consensus: matching validations settle an example; an owner's decision overrides at once."""

from annotation.models import ValidationState
from validation.services import record_validation
from validation.tests.conftest import make_example, leased


def test_three_matching_correct_validations_verify_it(fooling_example, validators):
    for v in validators[:2]:
        record_validation(example=leased(fooling_example, v), validator=v, label="correct")
    fooling_example.refresh_from_db()
    assert fooling_example.validation_state == ValidationState.PENDING

    record_validation(example=leased(fooling_example, validators[2]), validator=validators[2], label="correct")

    fooling_example.refresh_from_db()
    assert fooling_example.validation_state == ValidationState.VERIFIED_CORRECT
    assert (fooling_example.validation_count, fooling_example.correct_count) == (3, 3)


def test_three_incorrect_reject_it_even_after_some_correct(fooling_example, validators, validator, researcher):
    record_validation(example=leased(fooling_example, validator), validator=validator, label="correct")
    for v in validators:
        record_validation(example=leased(fooling_example, v), validator=v, label="incorrect")

    fooling_example.refresh_from_db()
    assert fooling_example.validation_state == ValidationState.VERIFIED_INCORRECT
    assert (fooling_example.correct_count, fooling_example.incorrect_count) == (1, 3)


def test_three_flags_flag_it(fooling_example, validators):
    for v in validators:
        record_validation(example=leased(fooling_example, v), validator=v, label="flagged", metadata={"flag_reason": "offensive"})

    fooling_example.refresh_from_db()
    assert fooling_example.validation_state == ValidationState.FLAGGED
    assert fooling_example.flagged_count == 3


def test_an_owner_decision_overrides_the_crowd_at_once(fooling_example, validators, owner):
    for v in validators:
        record_validation(example=leased(fooling_example, v), validator=v, label="correct")

    record_validation(example=fooling_example, validator=owner, label="incorrect", mode="owner")

    fooling_example.refresh_from_db()
    assert fooling_example.validation_state == ValidationState.VERIFIED_INCORRECT


def test_an_owner_may_revise_their_decision(fooling_example, owner):
    record_validation(example=fooling_example, validator=owner, label="incorrect", mode="owner")
    record_validation(example=fooling_example, validator=owner, label="correct", mode="owner")

    fooling_example.refresh_from_db()
    assert fooling_example.validation_state == ValidationState.VERIFIED_CORRECT
    assert fooling_example.validations.count() == 1


def test_the_number_needed_comes_from_the_task_config(sentiment_task, annotator, validator):
    sentiment_task.config = {**sentiment_task.config, "validations_needed": 1}
    sentiment_task.save()
    example = make_example(sentiment_task, annotator)

    record_validation(example=leased(example, validator), validator=validator, label="correct")

    example.refresh_from_db()
    assert example.validation_state == ValidationState.VERIFIED_CORRECT


def test_settling_releases_the_lease(fooling_example, validators):
    from django.utils import timezone

    fooling_example.leased_to = validators[2]
    fooling_example.leased_until = timezone.now() + timezone.timedelta(minutes=5)
    fooling_example.save()
    for v in validators:
        record_validation(example=leased(fooling_example, v), validator=v, label="correct")

    fooling_example.refresh_from_db()
    assert fooling_example.leased_to is None and fooling_example.leased_until is None
