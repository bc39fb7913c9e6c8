"""Which example a validator gets next."""

from datetime import timedelta

from django.utils import timezone

from annotation.models import Example
from validation.queue import next_example_for
from validation.services import record_validation
from validation.tests.conftest import make_example, leased


def _age(example, minutes):
    Example.objects.filter(pk=example.pk).update(created_at=timezone.now() - timedelta(minutes=minutes))


def test_it_hands_out_fooling_examples_first_then_fewest_validations_then_oldest(sentiment_task, annotator, validator, validators):
    round = sentiment_task.current_round()
    not_fooling = make_example(sentiment_task, annotator, model_wrong=False)
    older_validated = make_example(sentiment_task, annotator)
    newer = make_example(sentiment_task, annotator)
    oldest = make_example(sentiment_task, annotator)
    _age(not_fooling, 100), _age(older_validated, 50), _age(newer, 10), _age(oldest, 40)
    record_validation(example=leased(older_validated, validators[0]), validator=validators[0], label="correct")

    handed = []
    for _ in range(4):
        example = next_example_for(validator=validator, round=round)
        if example is None:
            break
        handed.append(example.pk)
        record_validation(example=leased(example, validator), validator=validator, label="correct")

    assert handed == [oldest.pk, newer.pk, older_validated.pk]


def test_it_includes_non_fooling_examples_when_the_task_says_so(sentiment_task, annotator, validator):
    sentiment_task.config = {**sentiment_task.config, "validate_non_fooling": True}
    sentiment_task.save()
    not_fooling = make_example(sentiment_task, annotator, model_wrong=False)

    assert next_example_for(validator=validator, round=sentiment_task.current_round()) == not_fooling


def test_it_never_hands_out_own_judged_retracted_or_settled_examples(sentiment_task, annotator, validator, validators):
    round = sentiment_task.current_round()
    make_example(sentiment_task, validator)
    judged = make_example(sentiment_task, annotator)
    record_validation(example=leased(judged, validator), validator=validator, label="correct")
    make_example(sentiment_task, annotator, retracted=True)
    settled = make_example(sentiment_task, annotator)
    record_validation(example=leased(settled, validators[0]), validator=validators[0], label="correct", mode="user")
    settled.validation_state = "verified_correct"
    settled.save()

    assert next_example_for(validator=validator, round=round) is None


def test_skipped_examples_are_left_out(sentiment_task, annotator, validator):
    first = make_example(sentiment_task, annotator)
    _age(first, 5)
    second = make_example(sentiment_task, annotator)

    assert next_example_for(validator=validator, round=sentiment_task.current_round(), exclude_ids=[first.pk]) == second
