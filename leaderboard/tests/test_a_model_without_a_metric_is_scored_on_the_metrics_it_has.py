"""Models without a metric are ranked per model (``leaderboard.metric_rules.PER_MODEL_RULE``): a predictions file
(no throughput, memory, robustness or fairness) is scored on what it has, and everybody else keeps
every metric, so one such file changes no other model's Dynascore."""

import pytest

from leaderboard.dynascore import ModelScores, dynascore
from leaderboard.metric_rules import DEFAULT_METRIC_WEIGHTS, MISSING_EXCLUDE_MODEL, Rule
from leaderboard.tests.test_dynascore import hand_rows, prediction_file, scores

WEIGHTS = {"A": 1, "B": 3}


def test_one_prediction_file_changes_no_other_models_dynascore():
    baseline = dynascore(hand_rows(), metric_weights=DEFAULT_METRIC_WEIGHTS, dataset_weights=WEIGHTS, memory_gib=16)
    result = dynascore([*hand_rows(), prediction_file("P", 65)], metric_weights=DEFAULT_METRIC_WEIGHTS,
                       dataset_weights=WEIGHTS, memory_gib=16)

    before = {r.model: r.dynascore for r in baseline.ranked}
    after = {r.model: r.dynascore for r in result.ranked if r.model != "P"}
    assert after == pytest.approx(before)
    for metric in ("throughput", "memory", "robustness"):
        assert result.metrics[metric].rule == Rule.AMRS
        assert result.metrics[metric].amrs == pytest.approx(baseline.metrics[metric].amrs)
        assert result.metrics[metric].missing_for == ("P",)


def test_the_prediction_file_is_scored_on_the_metrics_it_has():
    result = dynascore([*hand_rows(), prediction_file("P", 65)], metric_weights=DEFAULT_METRIC_WEIGHTS,
                       dataset_weights=WEIGHTS, memory_gib=16)
    p = result.by_model()["P"]

    assert p.dynascore == pytest.approx(65)  # performance is all it has: its weight becomes 1
    assert p.weights["performance"] == pytest.approx(1)
    assert set(p.missing) == {"throughput", "memory", "robustness"}
    assert p.rank == [r.model for r in result.ranked].index("P") + 1


def test_a_model_missing_one_metric_spreads_its_weight_over_the_others():
    partial = ModelScores("Q", {d: {**scores(70, 25, None, 65, 90)} for d in "AB"})
    result = dynascore([*hand_rows(), partial], metric_weights=DEFAULT_METRIC_WEIGHTS, dataset_weights=WEIGHTS, memory_gib=16)
    q = result.by_model()["Q"]
    amrs = {m: result.metrics[m].amrs for m in ("throughput", "robustness")}

    # fairness is constant (left out for everyone); Q lacks memory: its weights are 4, 1, 1 over 6
    assert q.weights == pytest.approx({"performance": 4 / 6, "throughput": 1 / 6, "memory": 0, "robustness": 1 / 6, "fairness": 0})
    expected = (4 * 70 + 25 / amrs["throughput"] + 65 / amrs["robustness"]) / 6
    assert q.dynascore == pytest.approx(expected)
    assert q.missing == ("memory",)


def test_listing_them_as_pending_is_still_a_choice():
    result = dynascore([*hand_rows(), prediction_file("P", 65)], metric_weights=DEFAULT_METRIC_WEIGHTS,
                       dataset_weights=WEIGHTS, memory_gib=16, missing_metric=MISSING_EXCLUDE_MODEL)
    assert [p.model for p in result.pending] == ["P"]


def test_the_old_name_drop_metric_reads_as_the_per_model_rule():
    rows = [*hand_rows(), prediction_file("P", 65)]
    old = dynascore(rows, metric_weights=DEFAULT_METRIC_WEIGHTS, dataset_weights=WEIGHTS, memory_gib=16, missing_metric="drop_metric")
    new = dynascore(rows, metric_weights=DEFAULT_METRIC_WEIGHTS, dataset_weights=WEIGHTS, memory_gib=16)
    assert old.missing_metric == "per_model"
    assert [(r.model, r.dynascore) for r in old.ranked] == [(r.model, r.dynascore) for r in new.ranked]


def test_a_metric_no_ranked_model_has_is_not_measured():
    result = dynascore([prediction_file("P", 65), prediction_file("R", 40)], metric_weights=DEFAULT_METRIC_WEIGHTS,
                       dataset_weights=WEIGHTS, memory_gib=16)
    assert result.metrics["throughput"].rule == Rule.NOT_MEASURED
    assert {r.model: r.dynascore for r in result.ranked} == pytest.approx({"P": 65, "R": 40})
