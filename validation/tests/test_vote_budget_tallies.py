"""The vote budget reads running tallies (``RoundVoteTally``): after creates, validations,
owner decisions, retractions and gold items it equals a scan of the round's examples, and it
follows a change of the task's ``max_votes`` without a recount (issue 13/16: it scanned the round)."""

import random

from django.db.models import Count, F, Q, Sum, Value
from django.db.models.functions import Least

from annotation import counters
from annotation.models import Example, RoundVoteTally, ValidationState
from annotation.services import retract_example
from validation.models import GoldItem
from validation.round_statistics import vote_budget
from validation.services import record_validation
from validation.tests.conftest import leased, make_example, make_user
from validation.tests.gold_helpers import configure


def _scanned(round, max_votes):
    alive = Example.objects.filter(round=round, retracted=False, gold__isnull=True)
    settled = ~Q(validation_state=ValidationState.PENDING)
    found = alive.aggregate(
        settled=Count("id", filter=settled),
        votes_used=Sum(Least(F("validation_count"), Value(max_votes)), filter=settled),
        exhausted=Count("id", filter=Q(validation_state=ValidationState.PENDING, validation_count__gte=max_votes)),
    )
    return {**found, "votes_used": found["votes_used"] or 0}


def _budget(round):
    budget = vote_budget(round)
    return {k: budget[k] for k in ("settled", "votes_used", "exhausted")}


def test_the_budget_from_tallies_equals_a_scan_of_the_round(sentiment_task, annotator, owner, django_assert_max_num_queries):
    configure(sentiment_task, validation_early_agreement=2, validation_max_votes=4)
    rng = random.Random(3)
    round = sentiment_task.current_round()
    people = [make_user(f"v{i}", "validator") for i in range(5)]
    examples = [make_example(sentiment_task, annotator, model_wrong=rng.random() < 0.8) for _ in range(30)]
    for e in examples:
        for person in rng.sample(people, rng.randint(0, 5)):
            e.refresh_from_db()
            if e.validation_state != "pending" or e.validation_count >= 4:
                break
            record_validation(example=leased(e, person), validator=person, label=rng.choice(["correct", "incorrect", "correct"]))
        if rng.random() < 0.15:
            record_validation(example=e, validator=owner, label="correct", mode="owner")
        if rng.random() < 0.1:
            retract_example(example=e, user=annotator)
    contested = make_example(sentiment_task, annotator, text="Contested")  # uses up its four votes unsettled
    for person, label in zip(people, ["correct", "incorrect", "flagged", "incorrect"]):
        record_validation(example=leased(contested, person), validator=person, label=label, metadata={"flag_reason": "unclear"} if label == "flagged" else None)
    settled = Example.objects.filter(round=round, retracted=False).exclude(validation_state="pending")
    for example in settled[:2]:
        GoldItem.objects.create(round=round, example=example, verdict="correct", created_by=owner)

    expected = _scanned(round, 4)
    with django_assert_max_num_queries(3):
        found = _budget(round)
    assert found == expected and expected["settled"] > 2 and expected["exhausted"] > 0
    assert counters.recount_rounds([round.pk], fix=False) == 0
    assert RoundVoteTally.objects.filter(round=round).count() <= 12  # a few buckets, not a row per example

    configure(sentiment_task, validation_early_agreement=2, validation_max_votes=3, validations_needed=3)
    round.task.refresh_from_db()
    assert _budget(round) == _scanned(round, 3)


def test_reconcile_repairs_drifted_vote_tallies(sentiment_task, annotator):
    round = sentiment_task.current_round()
    make_example(sentiment_task, annotator)
    RoundVoteTally.objects.filter(round=round).update(examples=7)

    assert counters.recount_rounds([round.pk], fix=False) == 1
    counters.recount_rounds([round.pk])
    assert list(RoundVoteTally.objects.filter(round=round).values_list("settled", "votes", "examples")) == [(False, 0, 1)]
