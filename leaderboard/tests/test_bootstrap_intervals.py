"""Bootstrap confidence intervals on performance and the range of ranks each model could take."""

import numpy as np
import pytest
from sklearn.metrics import f1_score

from leaderboard.bootstrap import (
    ItemResults,
    _resampled_metric,
    bootstrap_performance,
    performance_intervals,
)
from leaderboard.dynascore import ModelScores, dynascore
from leaderboard.rank_ranges import rank_ranges, replicate_dynascores

rng = np.random.default_rng(7)
GOLD = rng.integers(0, 3, size=400)


def predictions(accuracy, seed=None):
    """Predictions right on ``accuracy`` of the items (the first ones, or random ones given a seed)."""
    pred = GOLD.copy()
    position = np.arange(len(GOLD)) if seed is None else np.random.default_rng(seed).permutation(len(GOLD))
    wrong = position >= int(accuracy * len(GOLD))
    pred[wrong] = (GOLD[wrong] + 1) % 3
    return ItemResults(gold=GOLD, predicted=pred)


def test_the_interval_contains_the_point_estimate_and_narrows_at_the_extremes():
    items = {"d": {"perfect": predictions(1.0), "half": predictions(0.5)}}
    reps = bootstrap_performance(items, models=["perfect", "half"], datasets=["d"], perf_metric="accuracy", n_resamples=500)
    intervals = performance_intervals(reps, np.array([1.0]))
    assert intervals[0].tolist() == [100.0, 100.0]
    low, high = intervals[1]
    assert low < 50 < high
    assert 5 < high - low < 15  # ±1.96·sqrt(.25/400) ≈ ±4.9 points


def test_the_resample_is_paired_across_models():
    items = {"d": {"a": predictions(0.6), "b": predictions(0.6)}}
    reps = bootstrap_performance(items, models=["a", "b"], datasets=["d"], perf_metric="accuracy", n_resamples=50)
    assert np.array_equal(reps[:, 0, 0], reps[:, 1, 0])


def test_macro_f1_on_the_original_sample_equals_scikit_learn():
    pred = predictions(0.7)
    pred.predicted[:20] = 2
    ones = np.ones((1, len(GOLD)))
    assert _resampled_metric(pred, ones, "macro_f1")[0] == pytest.approx(f1_score(GOLD, pred.predicted, average="macro"))


def test_squad_f1_uses_the_per_item_values():
    values = np.array([1.0, 0.5, 0.0, 0.5])
    reps = bootstrap_performance({"d": {"m": ItemResults(values=values)}}, models=["m"], datasets=["d"],
                                 perf_metric="squad_f1", n_resamples=200)
    assert reps.mean() == pytest.approx(50, abs=5)


def test_a_clear_winner_has_one_possible_rank_and_close_models_share_theirs():
    accuracies = {"best": 0.9, "close1": 0.6, "close2": 0.6025}
    items = {"d": {m: predictions(a, seed=i) for i, (m, a) in enumerate(accuracies.items())}}
    rows = [ModelScores(m, {"d": {"performance": 100 * a}}) for m, a in accuracies.items()]
    result = dynascore(rows, metric_weights={"performance": 1}, dataset_weights={"d": 1}, memory_gib=16)
    reps = bootstrap_performance(items, models=list(accuracies), datasets=["d"], perf_metric="accuracy", n_resamples=300)
    ranges = rank_ranges(result, reps, replicate_models=list(accuracies))
    assert ranges["best"] == (1, 1)
    assert ranges["close1"] == (2, 3)
    assert ranges["close2"] == (2, 3)


def test_each_replicate_is_scored_by_the_dynascore_itself():
    # given four models with every metric, on two datasets, and bootstrap replicates of their performance
    metrics = {"a": (10, 3, 80, 90), "b": (30, 5, 70, 80), "c": (20, 1, 90, 70), "d": (25, 2, 60, 95)}
    accuracies = {"a": 0.8, "b": 0.7, "c": 0.72, "d": 0.65}
    datasets = {"d1": 1.0, "d2": 3.0}

    def row(model, perf):
        thr, mem, rob, fair = metrics[model]
        return ModelScores(model, {d: {"performance": perf[d], "throughput": thr, "memory": mem, "robustness": rob,
                                       "fairness": fair} for d in datasets})

    items = {d: {m: predictions(a, seed=10 * j + i) for i, (m, a) in enumerate(accuracies.items())} for j, d in enumerate(datasets)}
    result = dynascore([row(m, {d: 100 * a for d in datasets}) for m, a in accuracies.items()],
                       metric_weights={"performance": 4, "throughput": 1, "memory": 1, "robustness": 1, "fairness": 1},
                       dataset_weights=datasets, memory_gib=16)
    reps = bootstrap_performance(items, models=list(accuracies), datasets=list(datasets), perf_metric="accuracy", n_resamples=20)

    # when
    scores = replicate_dynascores(result, reps, replicate_models=list(accuracies))

    # then every replicate's scores are those of dynascore() on that replicate's performance
    order = [r.model for r in result.ranked]
    for b in range(reps.shape[0]):
        perf = {m: {d: reps[b, i, j] for j, d in enumerate(datasets)} for i, m in enumerate(accuracies)}
        again = dynascore([row(m, perf[m]) for m in accuracies], metric_weights=dict(
            (m, r.weight) for m, r in result.metrics.items()), dataset_weights=datasets, memory_gib=16).by_model()
        assert scores[b].tolist() == pytest.approx([again[m].dynascore for m in order], rel=1e-9)
