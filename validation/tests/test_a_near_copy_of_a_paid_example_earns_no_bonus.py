"""Under a round's near-duplicate rule, a validated fooling example within the threshold of an earlier
one already paid earns no bonus (its base pay is unchanged), and the summary names the example it copies."""

from decimal import Decimal

import pytest
from django.core.cache import cache

from annotation.diversity import embeddings, index, rules
from annotation.models import CrowdStudy
from annotation.tests.crowd_helpers import enter
from validation import pay
from validation.services import record_validation
from validation.tests.conftest import make_example


@pytest.fixture
def copied_round(sentiment_task, owner, tiny_classifier_dir, settings):
    """A wrote e1 and e3, B wrote e2, a copy of e1 (the same tokens for the tiny lower-casing tokenizer);
    all three fooled the model and were accepted; each worker earns 0.20 per example and 0.50 per fooling one."""
    cache.clear()
    index.forget_indexes()
    settings.DYNABENCH_EMBEDDING_ENCODER = {"path": str(tiny_classifier_dir), "name": "tiny-bert"}
    round = sentiment_task.current_round()
    study = CrowdStudy.objects.create(round=round, platform="prolific", required=2, completion_code="C0DE", platform_study_id="ST1")
    a, b = (enter(study, pid, f"S{pid}", address=f"198.51.100.{i}").worker.user for i, pid in enumerate(["PIDA", "PIDB"]))
    examples = {}
    for name, author, text in [("e1", a, "The soup was cold."), ("e2", b, "THE SOUP WAS COLD."), ("e3", a, "Nobody plays music outside.")]:
        examples[name] = make_example(sentiment_task, author, model_wrong=True, text=text)
        record_validation(example=examples[name], validator=owner, label="correct", mode="owner")
    embeddings.embed_task(sentiment_task.pk)
    pay.set_round_pay(round=round, acting_user=owner, currency="GBP", per_example="0.20", per_validation="0", bonus_per_fooling="0.50")
    yield round, examples
    cache.clear()


def test_the_copy_earns_its_base_pay_but_no_bonus(copied_round, owner):
    # given
    round, examples = copied_round
    rules.set_round_rule(round=round, acting_user=owner, threshold=0.999, mode="warn")
    # when
    rows = {r.worker_id: r for r in pay.pay_rows(round, platform="prolific")}
    # then
    assert (rows["PIDA"].base, rows["PIDA"].bonus) == (Decimal("0.40"), Decimal("1.00"))
    assert (rows["PIDB"].base, rows["PIDB"].bonus) == (Decimal("0.20"), Decimal("0.00"))
    assert rows["PIDB"].near_copies == ((examples["e2"].pk, examples["e1"].pk),)
    summary = pay.summary_csv(list(rows.values()), currency="GBP").splitlines()
    assert summary[0].endswith(",total_GBP,near_copies_without_bonus")
    assert f"{examples['e2'].pk} (near-copy of {examples['e1'].pk})" in summary[2] + summary[1]
    assert summary[-1].endswith(",1.60,1")


def test_without_a_rule_every_fooling_example_earns_the_bonus(copied_round):
    round, _ = copied_round
    rows = {r.worker_id: r for r in pay.pay_rows(round, platform="prolific")}
    assert rows["PIDB"].bonus == Decimal("0.50") and rows["PIDB"].near_copies == ()
    assert "near_copies" not in pay.summary_csv(list(rows.values()), currency="GBP")
