"""Bootstrap confidence intervals on performance, from each model's per-item results.

Decides: the paired bootstrap replicates of each model's performance per dataset (items resampled
with replacement within a dataset, the same resample for every model: Efron & Tibshirani, "An
Introduction to the Bootstrap", 1993, ch. 6), and their percentile intervals. The rank ranges these
replicates give are :mod:`leaderboard.rank_ranges`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ItemResults:
    """Per-item results of one model on one dataset, in the dataset's item order.

    Classification: ``gold`` and ``predicted`` label codes (ints, -1 = no/unknown label).
    Extractive QA: ``values`` the per-item SQuAD F1 (0..1).
    """

    gold: np.ndarray | None = None
    predicted: np.ndarray | None = None
    values: np.ndarray | None = None

    def __len__(self):
        return len(self.values if self.values is not None else self.gold)


def bootstrap_performance(
    items: Mapping[object, Mapping[object, ItemResults]],
    *,
    models: Sequence,
    datasets: Sequence,
    perf_metric: str,
    n_resamples: int = 1000,
    seed: int = 0,
) -> np.ndarray:
    """Return bootstrap replicates of performance, shape (n_resamples, models, datasets), in percent.

    ``items[dataset][model]`` holds the model's per-item results. Items are resampled with
    replacement within each dataset, the **same** resample for every model (a paired
    bootstrap: Efron & Tibshirani, "An Introduction to the Bootstrap", 1993, ch. 6), so
    rank ranges reflect how the models compare on the same draws. Resampling is done with
    multinomial counts and matrix products, so 1,000 resamples of 200 models × 5 datasets ×
    1,000 items take well under a second. ``perf_metric``: ``accuracy`` or ``squad_f1``
    (mean of per-item values) or ``macro_f1`` (F1 per label from weighted confusion counts,
    averaged over labels present in the resample's gold or predictions, as scikit-learn does).
    Models without item results on a dataset get NaN there.
    """
    rng = np.random.default_rng(seed)
    out = np.full((n_resamples, len(models), len(datasets)), np.nan)
    for j, dataset in enumerate(datasets):
        per_model = items.get(dataset, {})
        lengths = {len(r) for r in per_model.values()}
        if not per_model or len(lengths) != 1:
            continue
        n = lengths.pop()
        if n == 0:
            continue
        counts = rng.multinomial(n, np.full(n, 1.0 / n), size=n_resamples).astype(float)  # (B, n)
        present = [(i, per_model[model]) for i, model in enumerate(models) if model in per_model]
        if perf_metric == "macro_f1":
            for i, result in present:
                out[:, i, j] = 100.0 * _resampled_metric(result, counts, perf_metric)
        else:  # a mean of per-item values: one matrix product for every model at once
            values = np.stack([item_values(result) for _, result in present], axis=1)  # (n, M')
            out[:, [i for i, _ in present], j] = 100.0 * (counts @ values) / n
    return out


def item_values(result: ItemResults) -> np.ndarray:
    """Return each item's score as floats, in the dataset's item order: 1.0 where the predicted label is
    the gold one and 0.0 elsewhere (classification), else the stored per-item value (SQuAD F1, chrF++,
    WER, ...)."""
    if result.values is not None:
        return result.values.astype(float)
    return (result.gold == result.predicted).astype(float)


def _resampled_metric(result: ItemResults, counts: np.ndarray, perf_metric: str) -> np.ndarray:
    n = counts.shape[1]
    if perf_metric == "macro_f1":
        gold, pred = result.gold, result.predicted
        labels = np.unique(np.concatenate([gold, pred[pred >= 0]]))
        f1_sum = np.zeros(counts.shape[0])
        present = np.zeros(counts.shape[0])
        for label in labels:
            g = (gold == label).astype(float)
            q = (pred == label).astype(float)
            tp = counts @ (g * q)
            support = counts @ g + counts @ q
            f1_sum += np.where(support > 0, 2 * tp / np.where(support > 0, support, 1), 0.0)
            present += support > 0
        return f1_sum / np.maximum(present, 1)
    return counts @ item_values(result) / n


def percentile_interval(replicates: np.ndarray, *, level: float = 0.95, axis: int = 0) -> np.ndarray:
    """Return the percentile interval of ``replicates`` along ``axis``: shape (..., 2)."""
    tail = 100 * (1 - level) / 2
    lo, hi = np.nanpercentile(replicates, [tail, 100 - tail], axis=axis)
    return np.stack([lo, hi], axis=-1)


def performance_intervals(replicates: np.ndarray, dataset_weights: np.ndarray, *, level: float = 0.95) -> np.ndarray:
    """Return the (models, 2) interval of the dataset-weighted performance from (B, M, D) replicates."""
    weighted = np.einsum("bmd,d->bm", replicates, dataset_weights)
    return percentile_interval(weighted, level=level)
