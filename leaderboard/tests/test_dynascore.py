"""The Dynascore: published numbers, a hand-computed example, and every edge-case rule."""

import pytest

from dynabench.errors import RuleError
from leaderboard.dynascore import ModelScores, dynascore, orientation
from leaderboard.metric_rules import DEFAULT_METRIC_WEIGHTS, MISSING_EXCLUDE_MODEL, Rule

# Ma et al. 2021 ("Dynaboard"), Table 1 (NLI), as rounded in Potts' CS224u dynascoring.ipynb.
PAPER = {
    "DeBERTa": (69.54, 7.41, 5.71, 91.97, 75.70),
    "RoBERTa": (69.07, 9.23, 4.82, 90.94, 74.82),
    "ALBERT": (67.29, 9.60, 2.18, 89.94, 74.12),
    "T5": (67.16, 7.10, 10.62, 91.89, 73.47),
    "BERT": (64.82, 9.39, 4.13, 92.11, 66.38),
    "Majority Baseline": (32.41, 77.33, 1.15, 100.00, 100.00),
    "FastText": (31.29, 73.94, 2.20, 83.23, 69.14),
}
# The notebook's output (it offsets memory by +16 GiB without flipping its direction).
NOTEBOOK_DYNASCORES = {
    "DeBERTa": 38.730978, "RoBERTa": 38.492792, "ALBERT": 37.548582, "T5": 37.539321,
    "BERT": 36.228453, "Majority Baseline": 22.552271, "FastText": 20.941156,
}


def paper_rows():
    keys = ("performance", "throughput", "memory", "fairness", "robustness")
    return [ModelScores(name, {"nli": dict(zip(keys, values))}) for name, values in PAPER.items()]


def scores(perf, thr, mem, rob, fair):
    return {"performance": perf, "throughput": thr, "memory": mem, "robustness": rob, "fairness": fair}


def hand_rows():
    """Three models on two datasets A (weight 1) and B (weight 3); worked out in the test below."""
    return [
        ModelScores("X", {"A": scores(60, 10, 2, 50, 90), "B": scores(80, 10, 2, 50, 90)}),
        ModelScores("Y", {"A": scores(40, 30, 4, 70, 90), "B": scores(60, 30, 4, 70, 90)}),
        ModelScores("Z", {"A": scores(20, 20, 1, 60, 90), "B": scores(40, 20, 1, 60, 90)}),
    ]


def test_it_reproduces_the_published_implementation_on_the_papers_nli_table():
    # given the notebook's orientation (memory + 16, same direction)
    orient = orientation(memory_gib=16) | {"memory": (1.0, 16.0)}
    # when
    result = dynascore(paper_rows(), metric_weights=DEFAULT_METRIC_WEIGHTS, dataset_weights={"nli": 1},
                       memory_gib=16, orient=orient)
    # then
    assert [row.model for row in result.ranked] == list(NOTEBOOK_DYNASCORES)
    for row in result.ranked:
        assert row.dynascore == pytest.approx(NOTEBOOK_DYNASCORES[row.model], abs=1e-6)
    assert result.pairs == 6
    assert result.metrics["throughput"].amrs == pytest.approx(4.902109933690778)


def test_it_turns_memory_into_memory_left_on_the_machine():
    result = dynascore(paper_rows(), metric_weights=DEFAULT_METRIC_WEIGHTS, dataset_weights={"nli": 1}, memory_gib=16)
    deberta = result.by_model()["DeBERTa"]
    assert deberta.oriented["memory"] == pytest.approx(16 - 5.71)
    # AMRS uses absolute differences, so it is the same as with the notebook's orientation
    assert result.metrics["memory"].amrs == pytest.approx(12.017131869204755)
    assert deberta.contributions["memory"] == pytest.approx((16 - 5.71) / 12.017131869204755 / 8)
    assert [row.model for row in result.ranked][:2] == ["DeBERTa", "RoBERTa"]


def test_it_matches_a_hand_computed_example():
    # Dataset weights 1:3 → .25/.75: perf X 75, Y 55, Z 35; memory left (16 GiB) X 14, Y 12, Z 15.
    # Pairs (Z,Y) and (Y,X), Δperf 20 each:
    #   AMRS throughput = (10/20 + 20/20)/2 = .75; memory = (3/20 + 2/20)/2 = .125;
    #   robustness = (10/20 + 20/20)/2 = .75; fairness constant → left out; weights 4,1,1,1 → /7.
    #   X = (4·75 + 10/.75 + 14/.125 + 50/.75)/7 = 492/7
    #   Y = (4·55 + 30/.75 + 12/.125 + 70/.75)/7 = 449.333…/7
    #   Z = (4·35 + 20/.75 + 15/.125 + 60/.75)/7 = 366.666…/7
    result = dynascore(hand_rows(), metric_weights=DEFAULT_METRIC_WEIGHTS, dataset_weights={"A": 1, "B": 3}, memory_gib=16)
    got = {row.model: row.dynascore for row in result.ranked}
    assert got == pytest.approx({"X": 492 / 7, "Y": (220 + 40 + 96 + 70 / 0.75) / 7, "Z": (140 + 20 / 0.75 + 120 + 80) / 7})
    assert [row.rank for row in result.ranked] == [1, 2, 3]
    assert result.by_model()["X"].averages["performance"] == pytest.approx(75)
    assert result.metrics["memory"].amrs == pytest.approx(0.125)
    assert result.metrics["fairness"].rule == Rule.ZERO_VARIATION
    assert result.metrics["fairness"].effective_weight == 0
    assert result.metrics["performance"].effective_weight == pytest.approx(4 / 7)


def test_weights_change_the_order():
    only_throughput_matters = {"performance": 0, "throughput": 5}
    result = dynascore(hand_rows(), metric_weights=only_throughput_matters, dataset_weights={"A": 1, "B": 1}, memory_gib=16)
    assert [row.model for row in result.ranked] == ["Y", "Z", "X"]
    assert result.metrics["memory"].rule == Rule.ZERO_WEIGHT


def test_one_model_leaves_amrs_undefined_and_scores_performance():
    result = dynascore(hand_rows()[:1], metric_weights=DEFAULT_METRIC_WEIGHTS, dataset_weights={"A": 1, "B": 3}, memory_gib=16)
    assert result.pairs == 0
    assert result.ranked[0].dynascore == pytest.approx(75)
    for metric in ("throughput", "memory", "robustness"):
        assert result.metrics[metric].rule == Rule.AMRS_UNDEFINED
        assert result.metrics[metric].amrs is None


def test_models_with_equal_performance_leave_amrs_undefined():
    rows = [ModelScores("a", {"d": scores(50, 10, 1, 10, 10)}), ModelScores("b", {"d": scores(50, 20, 2, 20, 20)})]
    result = dynascore(rows, metric_weights=DEFAULT_METRIC_WEIGHTS, dataset_weights={"d": 1}, memory_gib=16)
    assert result.metrics["throughput"].rule == Rule.AMRS_UNDEFINED
    assert [row.dynascore for row in result.ranked] == [50, 50]
    assert [row.rank for row in result.ranked] == [1, 1]


def test_a_model_missing_a_dataset_is_pending_and_changes_nothing():
    incomplete = ModelScores("W", {"A": scores(99, 99, 1, 99, 99)})
    baseline = dynascore(hand_rows(), metric_weights=DEFAULT_METRIC_WEIGHTS, dataset_weights={"A": 1, "B": 3}, memory_gib=16)
    result = dynascore([*hand_rows(), incomplete], metric_weights=DEFAULT_METRIC_WEIGHTS, dataset_weights={"A": 1, "B": 3}, memory_gib=16)
    assert [(p.model, p.reason) for p in result.pending] == [("W", "no performance yet on B")]
    assert [(r.model, r.dynascore) for r in result.ranked] == [(r.model, r.dynascore) for r in baseline.ranked]


def test_a_dataset_of_weight_zero_is_ignored():
    incomplete = ModelScores("W", {"A": scores(99, 10, 1, 99, 99)})
    result = dynascore([*hand_rows(), incomplete], metric_weights=DEFAULT_METRIC_WEIGHTS, dataset_weights={"A": 1, "B": 0}, memory_gib=16)
    assert result.pending == []
    assert result.ranked[0].model == "W"


def prediction_file(name, perf):
    return ModelScores(name, {d: {"performance": perf, "throughput": None, "memory": None, "robustness": None, "fairness": None} for d in "AB"})


def test_models_lacking_a_weighted_metric_can_be_excluded_instead():
    rows = [*hand_rows(), prediction_file("P", 65)]
    result = dynascore(rows, metric_weights=DEFAULT_METRIC_WEIGHTS, dataset_weights={"A": 1, "B": 3}, memory_gib=16,
                       missing_metric=MISSING_EXCLUDE_MODEL)
    assert [p.model for p in result.pending] == ["P"]
    assert "throughput" in result.pending[0].reason
    assert result.by_model()["X"].dynascore == pytest.approx(492 / 7)


def test_a_prediction_file_is_ranked_when_only_performance_is_weighted():
    rows = [*hand_rows(), prediction_file("P", 65)]
    result = dynascore(rows, metric_weights={"performance": 1}, dataset_weights={"A": 1, "B": 3}, memory_gib=16,
                       missing_metric=MISSING_EXCLUDE_MODEL)
    assert result.pending == []
    assert [r.model for r in result.ranked] == ["X", "P", "Y", "Z"]


@pytest.mark.parametrize("weights", [{"performance": -1}, {"performance": 6}, {"performance": "lots"}, {"performance": 0}])
def test_it_refuses_bad_weights(weights):
    with pytest.raises(RuleError) as info:
        dynascore(hand_rows(), metric_weights=weights, dataset_weights={"A": 1}, memory_gib=16)
    assert info.value.code == "bad_weight"
