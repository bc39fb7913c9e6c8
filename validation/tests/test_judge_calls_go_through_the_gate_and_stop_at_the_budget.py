"""A round's AI validator asks its endpoint through the gate (purpose ``judge``): every request is one
``ModelCall`` of the round, reserved from the round's endpoint budget; when the budget is spent the job
stops, keeps the votes it stored and records the refusal. Another user's endpoint needs its submitter's
consent to ``judge``."""

import json

import pytest

from dynabench.errors import RuleError
from tasks.loop.gate_models import ModelCall
from validation.judge import judge_examples, set_judge
from validation.judge_models import AIVote, RoundJudge
from validation.tests.conftest import make_example, make_user


@pytest.fixture
def round_with_examples(sentiment_task, annotator):
    round = sentiment_task.current_round()
    examples = [make_example(sentiment_task, annotator) for _ in range(5)]
    return round, examples


def test_the_job_stops_at_the_round_budget_and_keeps_its_votes(round_with_examples, make_endpoint_model, endpoint_server,
                                                                owner):
    # given
    round, examples = round_with_examples
    round.endpoint_call_budget = 3
    round.save(update_fields=["endpoint_call_budget"])
    endpoint_server.scripted = [json.dumps({"verdict": "correct", "reason": "fits", "confidence": 0.9})] * 5
    judge = make_endpoint_model(round.task, name="judge", max_concurrency=1)
    set_judge(round=round, model=judge, acting_user=owner)

    # when
    summary = judge_examples(round.pk)

    # then
    assert "3 votes" in summary and "stopped" in summary, summary
    assert AIVote.objects.filter(round=round, label="correct").count() == 3
    calls = ModelCall.objects.filter(model=judge, round=round)
    assert calls.filter(purpose="judge", status=ModelCall.Status.OK).count() == 3
    assert calls.filter(purpose="judge", status=ModelCall.Status.REFUSED_BUDGET).exists()
    assert not calls.exclude(purpose="judge").exists()
    assert len(endpoint_server.requests) == 3
    assert RoundJudge.objects.get(round=round).last_summary == summary


def test_a_rerun_adds_no_second_vote(round_with_examples, make_endpoint_model, endpoint_server, owner):
    round, examples = round_with_examples
    endpoint_server.scripted = [json.dumps({"verdict": "incorrect", "reason": "wrong label"})] * 5
    judge = make_endpoint_model(round.task, name="judge")
    set_judge(round=round, model=judge, acting_user=owner)

    judge_examples(round.pk)
    summary = judge_examples(round.pk)

    assert AIVote.objects.filter(round=round).count() == 5
    assert "0 votes" in summary
    assert len(endpoint_server.requests) == 5


def test_another_users_endpoint_needs_consent_to_judge(round_with_examples, make_endpoint_model, owner):
    round, _ = round_with_examples
    submitter = make_user("sub")
    judge = make_endpoint_model(round.task, name="someone-elses", owner=submitter, consents=["loop"])

    with pytest.raises(RuleError) as refused:
        set_judge(round=round, model=judge, acting_user=owner)

    assert refused.value.code == "model_consent_missing"
