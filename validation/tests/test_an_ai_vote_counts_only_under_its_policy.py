"""An AI vote counts toward consensus only under the round's policy and only while the judge's κ against
people, on enough settled examples, is above the owner's threshold: ``one_vote`` makes it one more vote,
``triage`` lets a confident example settle with one human vote fewer. When κ falls below, or the owner
switches the policy, votes on pending examples stop counting and the owner is told why; settled examples
keep what counted when they settled. With the A/B split on, only the policy arm's examples are under it."""

import pytest

from annotation.models import Example, ValidationState
from tests.endpoint_fixtures import allow_local_server
from tests.judge_server import start_judge_server
from validation.judge import judge_examples, set_judge
from validation.judge_models import AIVote, RoundJudge
from validation.judge_policy import check_counting
from validation.models import Validation
from validation.tests.conftest import make_example, make_user

SETTLED = {"correct": ValidationState.VERIFIED_CORRECT, "incorrect": ValidationState.VERIFIED_INCORRECT}


@pytest.fixture
def judge_server(settings):
    server = start_judge_server()
    allow_local_server(settings, server.url)
    yield server
    server.stop()


@pytest.fixture
def trusted(sentiment_task, annotator, make_endpoint_model, judge_server):
    """Round 1 with 4 settled examples the judge got right (κ = 1) and its endpoint."""
    round = sentiment_task.current_round()
    judge = make_endpoint_model(sentiment_task, name="judge", url=judge_server.url)
    for i, truth in enumerate(["correct", "incorrect", "correct", "incorrect"]):
        example = make_example(sentiment_task, annotator)
        Example.objects.filter(pk=example.pk).update(validation_state=SETTLED[truth])
        AIVote.objects.create(example=example, round=round, model=judge, label=truth)
    return round, judge


def _pending_with_votes(task, annotator, server, key, *labels, confidence=0.9):
    example = make_example(task, annotator, text=f"[{key}] a sentence")
    for n, label in enumerate(labels):
        Validation.objects.create(example=example, validator=make_user(f"v-{key}-{n}", "validator"), label=label)
    server.answers[key] = "correct"
    return example


def test_one_vote_completes_a_consensus_and_switching_off_keeps_settled_examples(trusted, sentiment_task, annotator, owner,
                                                                                judge_server):
    round, judge = trusted
    settled_by_ai = _pending_with_votes(sentiment_task, annotator, judge_server, "k1-0", "correct", "correct")
    set_judge(round=round, model=judge, acting_user=owner, policy="one_vote", kappa_threshold=0.5, min_settled=4)

    judge_examples(round.pk)

    settled_by_ai.refresh_from_db()
    assert settled_by_ai.validation_state == ValidationState.VERIFIED_CORRECT
    assert settled_by_ai.correct_count == 2  # people's votes only
    assert AIVote.objects.get(example=settled_by_ai).counted_as == "vote"
    waiting = _pending_with_votes(sentiment_task, annotator, judge_server, "k1-1", "correct")
    judge_examples(round.pk)
    assert AIVote.objects.get(example=waiting).counted_as == "vote"

    set_judge(round=round, model=judge, acting_user=owner, policy="off")

    assert AIVote.objects.get(example=waiting).counted_as == ""
    settled_by_ai.refresh_from_db()
    assert settled_by_ai.validation_state == ValidationState.VERIFIED_CORRECT
    assert AIVote.objects.get(example=settled_by_ai).counted_as == "vote"


def test_it_stops_counting_when_kappa_falls_and_says_why(trusted, sentiment_task, annotator, owner):
    round, judge = trusted
    set_judge(round=round, model=judge, acting_user=owner, policy="one_vote", kappa_threshold=0.5, min_settled=4)
    assert RoundJudge.objects.get(round=round).counting
    for truth in ["correct", "incorrect", "correct", "incorrect"]:  # four more it got wrong
        example = make_example(sentiment_task, annotator)
        Example.objects.filter(pk=example.pk).update(validation_state=SETTLED[truth])
        AIVote.objects.create(example=example, round=round, model=judge,
                              label="incorrect" if truth == "correct" else "correct")

    assert not check_counting(RoundJudge.objects.get(round=round))
    assert "not above the threshold 0.50" in RoundJudge.objects.get(round=round).counting_reason


def test_triage_saves_one_human_vote_on_a_confident_example(trusted, sentiment_task, annotator, owner, judge_server):
    round, judge = trusted
    confident = _pending_with_votes(sentiment_task, annotator, judge_server, "k2-0", "correct", "correct")
    set_judge(round=round, model=judge, acting_user=owner, policy="triage", kappa_threshold=0.5, min_settled=4,
              triage_confidence=0.8)

    judge_examples(round.pk)

    confident.refresh_from_db()
    assert AIVote.objects.get(example=confident).counted_as == "triage"
    assert confident.validation_state == ValidationState.VERIFIED_CORRECT  # 2 of the 3 needed, with triage


def test_not_enough_settled_examples_means_it_does_not_count(trusted, sentiment_task, annotator, owner, judge_server):
    round, judge = trusted
    example = _pending_with_votes(sentiment_task, annotator, judge_server, "k3-0", "correct", "correct")
    set_judge(round=round, model=judge, acting_user=owner, policy="one_vote", kappa_threshold=0.5, min_settled=50)

    judge_examples(round.pk)

    assert AIVote.objects.get(example=example).counted_as == ""
    assert "4 of the 50" in RoundJudge.objects.get(round=round).counting_reason


def test_an_ai_vote_never_settles_an_example_before_a_person_votes(trusted, sentiment_task, annotator, owner, judge_server):
    sentiment_task.config = {**sentiment_task.config, "validations_needed": 1}
    sentiment_task.save()
    round, judge = trusted
    alone = _pending_with_votes(sentiment_task, annotator, judge_server, "k4-0")
    set_judge(round=round, model=judge, acting_user=owner, policy="one_vote", kappa_threshold=0.5, min_settled=4)

    judge_examples(round.pk)

    alone.refresh_from_db()
    assert AIVote.objects.get(example=alone).counted_as == "vote"
    assert alone.validation_state == ValidationState.PENDING
