"""Two validators working at once never get the same example."""

from datetime import timedelta

from django.utils import timezone

from annotation.models import Example
from validation.queue import LEASE_DURATION, current_example_for, next_example_for, release_lease
from validation.tests.conftest import make_example


def test_two_validators_get_different_examples(sentiment_task, annotator, validators):
    round = sentiment_task.current_round()
    examples = [make_example(sentiment_task, annotator) for _ in range(2)]

    a = next_example_for(validator=validators[0], round=round)
    b = next_example_for(validator=validators[1], round=round)
    c = next_example_for(validator=validators[2], round=round)

    assert {a.pk, b.pk} == {e.pk for e in examples}
    assert c is None
    a.refresh_from_db()
    assert a.leased_to == validators[0]
    assert a.leased_until > timezone.now() + LEASE_DURATION - timedelta(minutes=1)


def test_reloading_returns_the_example_already_leased(sentiment_task, annotator, validator):
    round = sentiment_task.current_round()
    make_example(sentiment_task, annotator), make_example(sentiment_task, annotator)

    first = next_example_for(validator=validator, round=round)

    assert current_example_for(validator=validator, round=round) == first
    assert Example.objects.filter(leased_to=validator).count() == 1


def test_a_validator_never_holds_two_leases(sentiment_task, annotator, validator):
    round = sentiment_task.current_round()
    make_example(sentiment_task, annotator), make_example(sentiment_task, annotator)

    first = next_example_for(validator=validator, round=round)
    second = next_example_for(validator=validator, round=round, exclude_ids=[first.pk])

    assert second != first
    assert list(Example.objects.filter(leased_to=validator)) == [second]


def test_an_expired_lease_frees_the_example(sentiment_task, annotator, validators):
    round = sentiment_task.current_round()
    example = make_example(sentiment_task, annotator)
    next_example_for(validator=validators[0], round=round)
    Example.objects.filter(pk=example.pk).update(leased_until=timezone.now() - timedelta(seconds=1))

    assert next_example_for(validator=validators[1], round=round) == example


def test_releasing_a_lease_gives_the_example_back(sentiment_task, annotator, validators):
    round = sentiment_task.current_round()
    example = make_example(sentiment_task, annotator)
    next_example_for(validator=validators[0], round=round)

    assert release_lease(example=example, validator=validators[1]) is False
    assert release_lease(example=example, validator=validators[0]) is True
    assert next_example_for(validator=validators[1], round=round) == example
