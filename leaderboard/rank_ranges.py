"""Rank ranges from the bootstrap: how far each ranked model's place could move.

Decides: each ranked model's Dynascore in every bootstrap replicate of performance
(:func:`replicate_dynascores`, through the one copy of the arithmetic,
:func:`leaderboard.exchange_rates.dynascore_scores`), and the central range of its places over
the replicates, ties sharing their places (:func:`leaderboard.ranks.competition_ranks`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from leaderboard.dynascore import DynascoreResult
from leaderboard.exchange_rates import DELTA_CUTOFF, dynascore_scores
from leaderboard.metric_rules import PERFORMANCE, Rule
from leaderboard.ranks import competition_ranks


def replicate_dynascores(
    result: DynascoreResult,
    replicates: np.ndarray,
    *,
    replicate_models: Sequence,
    delta_cutoff: float = DELTA_CUTOFF,
) -> np.ndarray:
    """Return the Dynascore of every ranked model in every bootstrap replicate: shape (B, M).

    Columns follow ``result.ranked``. Each replicate is the Dynascore (:func:`leaderboard.exchange_rates.dynascore_scores`)
    of the ranked models with performance replaced by its replicate: ``replicates`` (B, M', D)
    in percent for ``replicate_models``, datasets in the order of ``result.dataset_weights``.
    The other metrics keep their measured values; metrics left out for structural reasons
    (weight 0, not applicable, measured for no model) stay out, each model keeps the metrics it has,
    while AMRS, and so the ``amrs_undefined``
    and ``zero_variation`` rules, are decided per replicate exactly as :func:`leaderboard.dynascore.dynascore` decides
    them. Ranked models without replicates keep their measured performance.
    """
    models = [row.model for row in result.ranked]
    metrics = list(result.metric_names)
    p = metrics.index(PERFORMANCE)
    n_rep = replicates.shape[0]
    base = np.array([[row.oriented[m] if row.oriented[m] is not None else np.nan for m in metrics] for row in result.ranked],
                    dtype=float).reshape(len(models), len(metrics))
    A = np.repeat(base[None, :, :], n_rep, axis=0)
    index = {m: i for i, m in enumerate(replicate_models)}
    has = np.array([m in index for m in models], dtype=bool)
    if has.any():
        weights = np.array(list(result.dataset_weights.values()), dtype=float)
        rows = [index[m] for m in models if m in index]
        d, o = result.orient.get(PERFORMANCE, (1.0, 0.0))  # replicates are raw performance: orient them as the result's
        A[:, has, p] = d * np.einsum("bmd,d->bm", replicates[:, rows, :], weights) + o
    structural = (Rule.ZERO_WEIGHT, Rule.NOT_MEASURED, Rule.NOT_APPLICABLE)
    candidates = np.array([result.metrics[m].rule not in structural for m in metrics])
    measured = ~np.isnan(base)  # per model: the metrics it has (per-model rule)
    raw = np.array([result.metrics[m].weight for m in metrics], dtype=float)
    weights = np.where(candidates, raw, 0.0)
    weights = weights / weights.sum() if weights.sum() > 0 else np.eye(len(metrics))[p]
    return dynascore_scores(A, reference=p, candidates=candidates, metric_weights=weights, has=measured,
                            delta_cutoff=delta_cutoff).scores


def rank_ranges(
    result: DynascoreResult,
    replicates: np.ndarray,
    *,
    replicate_models: Sequence,
    level: float = 0.95,
    delta_cutoff: float = DELTA_CUTOFF,
) -> dict:
    """Return ``{model: (best_rank, worst_rank)}``: the central ``level`` range of each ranked
    model's Dynascore rank over the bootstrap replicates.

    Each replicate is ranked by :func:`replicate_dynascores` with ties sharing their places
    (:func:`leaderboard.ranks.competition_ranks`): two models with identical scores both occupy places 1–2, so
    their ranges overlap (1–2 and 1–2, never 1–1 and 2–2). ``best_rank`` is the lower
    ``(1 - level) / 2`` percentile of the best places, ``worst_rank`` the upper one of the worst
    places. Shapes as in :func:`replicate_dynascores`; without replicates each model's range is
    its place group in ``result`` (its rank to the last place it shares).
    """
    models = [row.model for row in result.ranked]
    if not models:
        return {}
    if replicates.size == 0 or replicates.shape[0] == 0:
        scores = np.array([[row.dynascore for row in result.ranked]])
    else:
        scores = replicate_dynascores(result, replicates, replicate_models=replicate_models, delta_cutoff=delta_cutoff)
    best, worst = competition_ranks(scores)
    tail = 100 * (1 - level) / 2
    lo = np.percentile(best, tail, axis=0, method="lower")
    hi = np.percentile(worst, 100 - tail, axis=0, method="higher")
    return {m: (int(lo[i]), int(hi[i])) for i, m in enumerate(models)}
