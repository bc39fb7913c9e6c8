"""Each metric's contribution to a model's Dynascore (``w_m x'_m / |AMRS_m|``, with the model's own
weights) is reported, and the contributions add up to the Dynascore: under the default rule, with a
predictions file in the field, and with weights moved."""

import pytest

from leaderboard.dynascore import dynascore
from leaderboard.metric_rules import DEFAULT_METRIC_WEIGHTS
from leaderboard.tests.test_dynascore import hand_rows, paper_rows, prediction_file


@pytest.mark.parametrize("rows, weights, dataset_weights", [
    (hand_rows, DEFAULT_METRIC_WEIGHTS, {"A": 1, "B": 3}),
    (lambda: [*hand_rows(), prediction_file("P", 65)], DEFAULT_METRIC_WEIGHTS, {"A": 1, "B": 3}),
    (hand_rows, {"performance": 1, "throughput": 5, "memory": 0.5, "robustness": 2, "fairness": 3}, {"A": 2, "B": 1}),
    (paper_rows, DEFAULT_METRIC_WEIGHTS, {"nli": 1}),
])
def test_the_contributions_add_up_to_the_dynascore(rows, weights, dataset_weights):
    result = dynascore(rows(), metric_weights=weights, dataset_weights=dataset_weights, memory_gib=16)
    assert result.ranked
    for row in result.ranked:
        assert sum(v for v in row.contributions.values() if v is not None) == pytest.approx(row.dynascore, rel=1e-12)
        assert sum(row.weights.values()) == pytest.approx(1)


def test_a_contribution_is_the_weight_times_the_converted_value():
    result = dynascore(hand_rows(), metric_weights=DEFAULT_METRIC_WEIGHTS, dataset_weights={"A": 1, "B": 3}, memory_gib=16)
    x = result.by_model()["X"]
    # hand-computed in test_dynascore: memory left 14 GiB, AMRS .125, weight 1 of 7
    assert x.contributions["memory"] == pytest.approx(14 / 0.125 / 7)
    assert x.contributions["performance"] == pytest.approx(4 * 75 / 7)
    assert x.contributions["fairness"] == 0  # zero variation: not counted
