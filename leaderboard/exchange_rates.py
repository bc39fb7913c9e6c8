"""Steps 3–5 of the Dynascore, vectorised over replicates: each metric's exchange rate into performance points.

Decides, per replicate: the consecutive model pairs (sorted by performance) each exchange rate is
averaged over, each metric's average marginal rate of substitution ``AMRS_m = mean |Δx'_m| / Δx'_perf``,
which metrics enter the score (at least one pair and a non-zero AMRS), each model's own weights, and
``Dynascore = Σ_m w_m x'_m / |AMRS_m|`` (Ma et al., "Dynaboard", NeurIPS 2021, section 3; the
``1e-4 * max(perf)`` cutoff of ``mlcommons/dynabench`` ``api/models/score.py``). The one copy of this
arithmetic: :func:`leaderboard.dynascore.dynascore` (one replicate) and
:func:`leaderboard.rank_ranges.rank_ranges` (bootstrap replicates) both call :func:`dynascore_scores`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DELTA_CUTOFF = 1e-4


@dataclass(frozen=True)
class ScoreArrays:
    """Steps 3–5 of the Dynascore for B replicates of M models and K metrics (:func:`dynascore_scores`).

    ``scores`` (B, M); ``contributions`` (B, M, K), ``w_{i,m} x'_m / |AMRS_m|`` (summing to ``scores``);
    ``effective_weights`` (B, K), the weights of a model with every metric, summing to 1 per
    replicate; ``model_weights`` (B, M, K), each model's own weights (its missing metrics' weight
    spread over its others), summing to 1 per model; ``amrs`` (B, K), 1 for performance, 0 where
    undefined or not computed; ``pairs`` (B, K), the consecutive pairs each AMRS was averaged over
    (for performance: over every model); ``used`` (B, K), the metrics that entered the score.
    """

    scores: np.ndarray
    contributions: np.ndarray
    effective_weights: np.ndarray
    amrs: np.ndarray
    pairs: np.ndarray
    used: np.ndarray
    model_weights: np.ndarray


def dynascore_scores(
    oriented: np.ndarray,
    *,
    reference: int,
    candidates: np.ndarray,
    metric_weights: np.ndarray,
    has: np.ndarray | None = None,
    delta_cutoff: float = DELTA_CUTOFF,
) -> ScoreArrays:
    """The one copy of the Dynascore arithmetic (steps 3–5), vectorised over replicates.

    ``oriented``: dataset-weighted means after orientation, shape (M, K) or (B, M, K) (B
    replicates, e.g. bootstrap resamples; NaN counts as 0 and belongs only to metrics a model does
    not have). ``reference``: the index of performance. ``candidates`` (K,) bool: the metrics that
    may enter (weighted and measured for some model; performance always does). ``has`` (M, K)
    bool: which model has which metric (default: where ``oriented`` is not NaN in the first
    replicate). ``metric_weights`` (K,), summing to 1.

    Per replicate and metric: sort the models that have the metric by ``x'_perf``; keep
    consecutive pairs whose performance differs by more than ``delta_cutoff * max(x'_perf)``;
    ``AMRS_m = mean |Δx'_m| / Δx'_perf``. A candidate metric is used when it has at least one
    pair and its AMRS is not 0 (otherwise rules ``amrs_undefined`` / ``zero_variation`` leave it
    out). Each model's weights are those of the used metrics it has, renormalised (performance
    alone when none is left), and ``Dynascore = Σ_m w_m x'_m / |AMRS_m|`` (Ma et al. 2021,
    section 3). :func:`leaderboard.dynascore.dynascore` (one replicate) and :func:`leaderboard.rank_ranges.rank_ranges` (B resamples) both call
    it, so the two cannot drift apart.
    """
    A = oriented if oriented.ndim == 3 else oriented[None, :, :]
    p = reference
    if has is None:
        has = ~np.isnan(A[0])
    has = has.copy()
    has[:, p] = True
    amrs, pairs = _amrs(A, p, candidates, has, delta_cutoff)
    used = candidates[None, :] & (pairs > 0) & (amrs != 0)
    used[:, p] = True
    effective = _normalised_rows(np.where(used, metric_weights[None, :], 0.0), p)
    own = np.where(used[:, None, :] & has[None, :, :], metric_weights[None, None, :], 0.0)
    own = _normalised_rows(own, p)
    safe = np.where(used, np.abs(amrs), 1.0)
    converted = np.where(own > 0, np.nan_to_num(A) / safe[:, None, :], 0.0)
    contributions = converted * own
    return ScoreArrays(contributions.sum(axis=-1), contributions, effective, amrs, pairs, used, own)


def _normalised_rows(weights: np.ndarray, p: int) -> np.ndarray:
    """Weights along the last axis normalised to 1; where none is left, performance alone (1 at ``p``)."""
    weights = weights.copy()
    nothing = weights.sum(axis=-1) <= 0
    weights[nothing] = 0.0
    weights[nothing, p] = 1.0
    return weights / weights.sum(axis=-1, keepdims=True)


def _amrs(A: np.ndarray, p: int, active: np.ndarray, has: np.ndarray, delta_cutoff: float) -> tuple[np.ndarray, np.ndarray]:
    """AMRS per replicate: ``A`` (B, M, K) oriented averages → (B, K) AMRS and (B, K) pair counts.

    For each active metric, over the models that have it (``has`` (M, K)): consecutive pairs in
    ascending performance, kept when ``Δperf > delta_cutoff * max(perf)``. Inactive metrics get
    AMRS 0 (never used); performance gets 1 and the pair count over every model.
    """
    n_rep, n_models, n_metrics = A.shape
    amrs = np.zeros((n_rep, n_metrics))
    pairs = np.zeros((n_rep, n_metrics), dtype=int)
    amrs[:, p] = 1.0
    for k in range(n_metrics):
        mask = has[:, k] & has[:, p]
        if (k != p and not active[k]) or mask.sum() < 2:
            continue
        perf = A[:, mask, p]
        values = np.nan_to_num(A[:, mask, k])
        order = np.argsort(perf, axis=1, kind="stable")
        sorted_perf = np.take_along_axis(perf, order, axis=1)
        dperf = np.diff(sorted_perf, axis=1)
        dvalue = np.diff(np.take_along_axis(values, order, axis=1), axis=1)
        kept = dperf > (delta_cutoff * sorted_perf[:, -1])[:, None]
        pairs[:, k] = kept.sum(axis=1)
        if k != p:
            ratio = np.where(kept, np.abs(dvalue) / np.where(kept, dperf, 1.0), 0.0)
            amrs[:, k] = ratio.sum(axis=1) / np.maximum(pairs[:, k], 1)
    return amrs, pairs
