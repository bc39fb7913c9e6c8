"""The round's transfer bonus rule: an accepted example that fools at least ``k`` other models earns the
amount; the pay rows, the summary and the per-example file show which ones; the other pay rules are unchanged."""

from decimal import Decimal

import pytest

from annotation.models import CrowdStudy, TransferRate
from annotation.tests.crowd_helpers import enter
from dynabench.errors import RuleError
from validation import pay
from validation.services import record_validation
from validation.tests.conftest import make_example


@pytest.fixture
def rated_round(sentiment_task, owner):
    """Two Prolific workers: A wrote e1 (fools 2 of 3 other models) and e2 (1 of 3); B wrote e3 (3 of 3,
    rejected) and e4 (2 of 2). Every example but e3 is accepted."""
    round = sentiment_task.current_round()
    study = CrowdStudy.objects.create(round=round, platform="prolific", required=2, completion_code="C0DE", platform_study_id="ST1")
    a, b = (enter(study, pid, f"S{pid}", address=f"198.51.100.{i}").worker.user for i, pid in enumerate(["PIDA", "PIDB"]))
    examples = {}
    for name, author, fooled, tried, verdict in [("e1", a, 2, 3, "correct"), ("e2", a, 1, 3, "correct"),
                                                 ("e3", b, 3, 3, "incorrect"), ("e4", b, 2, 2, "correct")]:
        example = make_example(sentiment_task, author, model_wrong=True, text=name)
        record_validation(example=example, validator=owner, label=verdict, mode="owner")
        TransferRate.objects.create(example=example, fooled=fooled, tried=tried)
        examples[name] = example
    pay.set_round_pay(round=round, acting_user=owner, currency="GBP", per_example="0.20", per_validation="0", bonus_per_fooling="0.50")
    return round, examples


def test_examples_fooling_at_least_k_other_models_earn_the_bonus_on_top_of_the_existing_pay(rated_round, owner):
    round, examples = rated_round
    before = {r.username: (r.base, r.bonus) for r in pay.pay_rows(round, platform="prolific")}

    pay.set_round_pay(round=round, acting_user=owner, currency="GBP", per_example="0.20", per_validation="0", bonus_per_fooling="0.50",
                      transfer_min_models="2", transfer_bonus="0.30")
    rows = pay.pay_rows(round, platform="prolific")

    assert {r.username: (r.base, r.bonus) for r in rows} == before  # the existing rules are unchanged
    earned = {r.worker_id: [e.example_id for e in r.transfer] for r in rows}
    assert earned == {"PIDA": [examples["e1"].pk], "PIDB": [examples["e4"].pk]}  # e2 fools too few, e3 was rejected
    assert [r.transfer_bonus for r in rows] == [Decimal("0.30"), Decimal("0.30")]
    # 3 accepted × 0.20 + 3 validated fooling × 0.50 + 2 transferring × 0.30 = 0.60 + 1.50 + 0.60;
    # by worker, A: 2 × 0.20 + 2 × 0.50 + 0.30 = 1.70; B: 1 × 0.20 + 1 × 0.50 + 0.30 = 1.00
    assert pay.totals(rows)["total"] == Decimal("2.70")
    assert {r.worker_id: r.total for r in rows} == {"PIDA": Decimal("1.70"), "PIDB": Decimal("1.00")}
    assert "PIDA,1.70" in pay.prolific_bonus_csv(rows).splitlines()

    summary = pay.summary_csv(rows, currency="GBP", transfer=True).splitlines()
    assert summary[0].endswith("bonus_GBP,transfer_bonus_examples,transfer_bonus_GBP,total_GBP")
    assert any(line.endswith(",1,0.30,1.70") for line in summary)  # a count of examples, as in the TOTAL line
    assert summary[-1].startswith("TOTAL,") and summary[-1].endswith(",2,0.60,2.70")
    per_example = pay.transfer_bonus_csv(rows, currency="GBP", amount=Decimal("0.30")).splitlines()
    assert per_example[0] == "worker,example,models_fooled,models_tried,amount_GBP"
    name = {r.worker_id: r.username for r in rows}  # pseudonymous usernames are random, so either worker may come first
    assert sorted(per_example[1:]) == sorted([f"{name['PIDA']},{examples['e1'].pk},2,3,0.30", f"{name['PIDB']},{examples['e4'].pk},2,2,0.30"])


def test_without_a_rule_nobody_earns_it_and_the_summary_keeps_its_columns(rated_round):
    round, _ = rated_round
    rows = pay.pay_rows(round, platform="prolific")

    assert all(r.transfer == () and r.transfer_bonus == 0 for r in rows)
    assert pay.summary_csv(rows, currency="GBP").splitlines()[0] == (
        "worker,examples_accepted,validations_accepted,fooling_validated,base_GBP,bonus_GBP,total_GBP")


@pytest.mark.parametrize("k", ["0", "two", "101", "-1"])
def test_a_rule_that_is_not_a_number_of_models_is_refused_naming_the_field(rated_round, owner, k):
    round, _ = rated_round

    with pytest.raises(RuleError) as refused:
        pay.set_round_pay(round=round, acting_user=owner, currency="GBP", per_example="0", per_validation="0", bonus_per_fooling="0",
                          transfer_min_models=k, transfer_bonus="0.30")

    assert refused.value.field == "transfer_min_models" and "from 1 to 100" in refused.value.message
    assert pay.round_pay(round).transfer_min_models is None


def test_the_owner_sets_the_rule_on_the_pay_page_and_downloads_the_examples_that_earned_it(rated_round, owner, client):
    round, examples = rated_round
    client.force_login(owner)
    url = f"/tasks/{round.task.code}/rounds/{round.number}/pay/"

    bad = client.post(url, {"currency": "GBP", "per_example": "0.20", "per_validation": "0", "bonus_per_fooling": "0.50",
                            "transfer_min_models": "0", "transfer_bonus": "0.30"})
    saved = client.post(url, {"currency": "GBP", "per_example": "0.20", "per_validation": "0", "bonus_per_fooling": "0.50",
                              "transfer_min_models": "2", "transfer_bonus": "0.30"})
    page = client.get(url).content.decode()
    download = client.get(f"{url}transfer.csv")

    assert bad.status_code == 400 and "from 1 to 100" in bad.content.decode()
    assert saved.status_code == 302 and pay.round_pay(round).transfer_min_models == 2
    assert f'data-transfer="{examples["e1"].pk}"' in page
    assert download.status_code == 200 and f",{examples['e4'].pk},2,2,0.30" in download.content.decode()
