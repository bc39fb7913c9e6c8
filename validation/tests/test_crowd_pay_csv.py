"""Pay from outcomes for a simulated paid round of 20 Prolific workers, checked against totals
worked out by hand, in Prolific's bulk bonus format and MTurk's SendBonus format."""

from decimal import Decimal

import pytest
from django.contrib.auth.models import Group

from annotation.models import CrowdStudy
from annotation.tests.crowd_helpers import enter
from dynabench.errors import NotAllowed, RuleError
from validation import pay
from validation.models import Validation, ValidatorStanding
from validation.services import record_validation
from validation.tests.conftest import make_example, leased


@pytest.fixture
def paid_round(sentiment_task, owner, annotator):
    """20 workers. Worker i writes a fooling example (validated correct for i < 10) and a
    non-fooling one (validated correct for even i), and validates 3 examples of the annotator;
    worker 19's votes were discounted (below the gold threshold)."""
    round = sentiment_task.current_round()
    sentiment_task.config = {**sentiment_task.config, "validations_needed": 1}  # each vote settles its example
    sentiment_task.save()
    study = CrowdStudy.objects.create(round=round, platform="prolific", required=2, completion_code="C0DE", platform_study_id="ST1")
    validator_group = Group.objects.get(name="validator")
    workers = []
    for i in range(20):
        session = enter(study, f"PID{i:02d}", f"S{i:02d}", address=f"198.51.100.{i}")
        user = session.worker.user
        user.groups.add(validator_group)
        ValidatorStanding.objects.create(task=sentiment_task, validator=user, answered=5, correct=5)  # passed gold
        fooling = make_example(sentiment_task, user, model_wrong=True, text=f"Fooling {i}")
        plain = make_example(sentiment_task, user, model_wrong=False, text=f"Plain {i}")
        if i < 10:
            record_validation(example=fooling, validator=owner, label="correct", mode="owner")
        else:
            record_validation(example=fooling, validator=owner, label="incorrect", mode="owner")
        if i % 2 == 0:
            record_validation(example=plain, validator=owner, label="correct", mode="owner")
        for k in range(3):
            record_validation(example=leased(make_example(sentiment_task, annotator, text=f"To validate {i}-{k}"), user), validator=user, label="correct")
        workers.append(user)
    Validation.objects.filter(validator=workers[19]).update(counts=False)
    pay.set_round_pay(round=round, acting_user=owner, currency="gbp", per_example="0.20", per_validation="0.05", bonus_per_fooling="0.50")
    return round


def test_the_bonus_csv_of_20_workers_matches_the_hand_computed_total(paid_round):
    rows = pay.pay_rows(paid_round, platform="prolific")
    t = pay.totals(rows)

    # By hand: 10 fooling + 10 plain examples accepted = 20 × £0.20 = £4.00; 19 × 3 = 57
    # counted validations × £0.05 = £2.85; 10 validated fooling examples × £0.50 = £5.00.
    assert (t["workers"], t["examples"], t["validations"], t["fooling"]) == (20, 20, 57, 10)
    assert (t["base"], t["bonus"], t["total"]) == (Decimal("6.85"), Decimal("5.00"), Decimal("11.85"))

    lines = pay.prolific_bonus_csv(rows).splitlines()
    # Worker 19 earned nothing (no accepted example, discounted votes): no line.
    assert len(lines) == 19 and "PID00,1.05" in lines and "PID01,0.85" in lines and not any(l.startswith("PID19,") for l in lines)
    assert sum(Decimal(line.split(",")[1]) for line in lines) == Decimal("11.85")
    # worker 0: 2 examples (0.40) + 3 validations (0.15) + 1 fooling bonus (0.50) = 1.05
    # worker 1: its fooling example is validated (1 < 10), its plain one is not: 0.20 + 0.15 + 0.50
    assert next(r for r in rows if r.worker_id == "PID01").total == Decimal("0.85")

    summary = pay.summary_csv(rows, currency="GBP").splitlines()
    assert summary[0] == "worker,examples_accepted,validations_accepted,fooling_validated,base_GBP,bonus_GBP,total_GBP"
    assert summary[-1] == "TOTAL,20,57,10,6.85,5.00,11.85"
    assert all("PID" not in line for line in summary)  # the summary names pseudonymous accounts only


def test_the_mturk_file_has_sendbonus_columns_and_the_assignment(sentiment_task, owner, annotator):
    round = sentiment_task.current_round()
    study = CrowdStudy.objects.create(round=round, platform="mturk", required=1, platform_study_id="HIT9")
    session = enter(study, "A1WORKER", "3ASSIGN")
    example = make_example(sentiment_task, session.worker.user, model_wrong=True)
    record_validation(example=example, validator=owner, label="correct", mode="owner")
    pay.set_round_pay(round=round, acting_user=owner, currency="USD", per_example="1.00", per_validation="0",
                      bonus_per_fooling="0.25", reason="Thanks for fooling the model")

    name, text = pay.bonus_file(round, platform="mturk")

    assert name == "sentiment-r1-mturk-bonus.csv"
    assert text.splitlines() == ["WorkerId,AssignmentId,BonusAmount,Reason", "A1WORKER,3ASSIGN,1.25,Thanks for fooling the model"]


def test_pay_settings_are_the_owners_and_checked(sentiment_task, owner, validator):
    round = sentiment_task.current_round()
    with pytest.raises(NotAllowed):
        pay.set_round_pay(round=round, acting_user=validator, currency="GBP", per_example="1", per_validation="1", bonus_per_fooling="1")
    with pytest.raises(RuleError) as bad:
        pay.set_round_pay(round=round, acting_user=owner, currency="GBP", per_example="0.123", per_validation="1", bonus_per_fooling="1")
    assert bad.value.field == "per_example"
    with pytest.raises(RuleError) as bad:
        pay.set_round_pay(round=round, acting_user=owner, currency="GBP", per_example="1", per_validation="-1", bonus_per_fooling="1")
    assert bad.value.field == "per_validation"
    with pytest.raises(RuleError) as bad:
        pay.set_round_pay(round=round, acting_user=owner, currency="pounds", per_example="1", per_validation="1", bonus_per_fooling="x")
    assert bad.value.field == "currency"
    assert not pay.round_pay(round).pk
