"""The adaptive validation budget: agreeing first votes settle an example early, an example
stops collecting votes at the task's budget, and the round page shows the validator work saved."""

import pytest
from django.urls import reverse

from annotation.models import Example, ValidationState
from validation.calculations import ConsensusPolicy, derive_state, saved_votes
from validation.round_statistics import vote_budget
from validation.queue import review_queue
from validation.services import record_validation
from validation.tests.conftest import make_example, make_user, leased
from validation.tests.gold_helpers import configure

POLICY = ConsensusPolicy(needed=3, early_agreement=2, max_votes=5)


def test_two_agreeing_first_votes_settle_early_and_disagreement_waits_for_three_of_five():
    assert derive_state([("correct", "user"), ("correct", "user")], POLICY) == ValidationState.VERIFIED_CORRECT
    split = [("correct", "user"), ("incorrect", "user")]
    assert derive_state(split, POLICY) == ValidationState.PENDING
    assert derive_state(split + [("correct", "user")], POLICY) == ValidationState.PENDING
    assert derive_state(split + [("correct", "user"), ("correct", "user")], POLICY) == ValidationState.VERIFIED_CORRECT
    # Without early agreement (the default), three matching votes are needed as before.
    assert derive_state([("correct", "user")] * 2, 3) == ValidationState.PENDING


def test_the_policy_comes_from_the_task_config_with_3_of_5_by_default(sentiment_task):
    assert ConsensusPolicy.from_config(sentiment_task.config) == ConsensusPolicy(needed=3, early_agreement=None, max_votes=5)
    configure(sentiment_task, validation_early_agreement=2, validation_max_votes=4)
    assert ConsensusPolicy.from_config(sentiment_task.config) == ConsensusPolicy(needed=3, early_agreement=2, max_votes=4)


def test_a_budget_smaller_than_the_votes_needed_is_refused(sentiment_task):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError, match="validation_max_votes: must be at least validations_needed"):
        configure(sentiment_task, validation_max_votes=2)


def test_an_example_that_used_its_budget_leaves_the_queue_and_the_saving_is_counted(client, sentiment_task, annotator, owner):
    configure(sentiment_task, validation_early_agreement=2, validation_max_votes=4)
    round = sentiment_task.current_round()
    people = [make_user(f"v{i}", "validator") for i in range(5)]
    quick = make_example(sentiment_task, annotator, text="Agreed at once")
    for person in people[:2]:
        record_validation(example=leased(quick, person), validator=person, label="correct")
    contested = make_example(sentiment_task, annotator, text="Contested")
    for person, label in zip(people, ["correct", "incorrect", "flagged", "incorrect"]):
        record_validation(example=leased(contested, person), validator=person, label=label, metadata={"flag_reason": "unclear"} if label == "flagged" else None)

    assert Example.objects.get(pk=quick.pk).validation_state == ValidationState.VERIFIED_CORRECT
    contested.refresh_from_db()
    assert (contested.validation_state, contested.validation_count) == (ValidationState.PENDING, 4)
    assert contested.pk not in set(review_queue(validator=people[4], round=round, model_wrong=True).values_list("pk", flat=True))

    budget = vote_budget(round)
    assert {k: budget[k] for k in ("settled", "votes_used", "votes_fixed", "votes_saved", "exhausted")} == {
        "settled": 1, "votes_used": 2, "votes_fixed": 4, "votes_saved": 2, "exhausted": 1,
    }
    assert budget["share_saved"] == 0.5 == saved_votes(settled=1, votes_used=2, max_votes=4)["share_saved"]

    page = client.get(reverse("validation:round", args=["sentiment", 1]))
    assert page.status_code == 200 and b'id="votes-saved"><strong>2</strong> (50.0%)' in page.content
