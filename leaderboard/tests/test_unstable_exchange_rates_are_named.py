"""The Dynascore says when its exchange rates (AMRS) are unstable: a rate from a single pair of models
(fewer than three models with distinct performance), or from two models whose performance is nearly
identical; with three well-separated models they are stable."""

from leaderboard.dynascore import ModelScores, dynascore
from leaderboard.metric_rules import DEFAULT_METRIC_WEIGHTS
from leaderboard.tests.test_dynascore import hand_rows, scores


def test_three_well_separated_models_give_stable_rates():
    result = dynascore(hand_rows(), metric_weights=DEFAULT_METRIC_WEIGHTS, dataset_weights={"A": 1, "B": 3}, memory_gib=16)
    assert result.stability.stable
    assert result.stability.reasons() == []


def test_two_models_give_rates_from_a_single_pair():
    # the first-run leaderboards: two models of the same size, memory nearly identical
    rows = [ModelScores("seed", {"d": scores(70.4, 300, 0.512, 90, 95)}), ModelScores("few", {"d": scores(28.6, 310, 0.511, 80, 97)})]
    result = dynascore(rows, metric_weights=DEFAULT_METRIC_WEIGHTS, dataset_weights={"d": 1}, memory_gib=16)

    assert not result.stability.stable
    assert set(result.stability.single_pair) == {"throughput", "memory", "robustness", "fairness"}
    assert "Only 2 models with distinct performance" in result.stability.reasons()[0]
    assert result.ranked[0].dynascore > 1000  # memory left / a tiny AMRS: why the page shows gaps instead


def test_nearly_identical_performance_is_named_with_the_models():
    rows = [*hand_rows(), ModelScores("W", {d: scores(p, 12, 3, 55, 90) for d, p in (("A", 60.2), ("B", 80.2))})]
    result = dynascore(rows, metric_weights=DEFAULT_METRIC_WEIGHTS, dataset_weights={"A": 1, "B": 3}, memory_gib=16)

    assert not result.stability.stable
    (a, b, gap, metrics), = result.stability.close_pairs
    assert {a, b} == {"X", "W"} and round(gap, 2) == 0.2 and "memory" in metrics
    assert "differ by only 0.20 points" in result.stability.reasons()[0]


def test_a_tiny_exchange_rate_that_dwarfs_performance_is_named_even_with_many_models():
    # four well-separated models whose memory differs by thousandths of a GiB (same-sized encoders)
    rows = [ModelScores(name, {"d": scores(perf, 200, mem, 80, 90)})
            for name, perf, mem in (("a", 70.4, 0.512), ("b", 55.0, 0.511), ("c", 40.0, 0.513), ("d", 28.6, 0.510))]
    result = dynascore(rows, metric_weights=DEFAULT_METRIC_WEIGHTS, dataset_weights={"d": 1}, memory_gib=16)

    assert not result.stability.single_pair and not result.stability.close_pairs
    (metric, amrs, least, best), = result.stability.dominant
    assert metric == "memory" and least > 10 * best == 10 * 70.4
    assert "The exchange rate of memory" in result.stability.reasons()[0]
