"""The Dynascore with no ORM: the orchestrator that ranks models from their scores under the reader's weights.

Decides each model's Dynascore and place, which models are pending and why, and which rule each metric
entered under. It reads as the steps of :func:`dynascore`, each rule in its own module: the metrics and
their rules (:mod:`leaderboard.metric_rules`), the exchange rates and the weighted sum
(:mod:`leaderboard.exchange_rates`), ties sharing a place (:mod:`leaderboard.ranks`) and whether the
exchange rates can be trusted (:mod:`leaderboard.stability`). The bootstrap intervals on performance are
:mod:`leaderboard.bootstrap`, the rank ranges :mod:`leaderboard.rank_ranges`.

Sources
-------
- Ma, Ethayarajh, Thrush, Jain, Wu, Jia, Potts, Williams, Kiela: "Dynaboard: An
  Evaluation-As-A-Service Platform for Holistic Next-Generation Benchmarking", NeurIPS 2021,
  section 3 ("Dynascore": marginal rate of substitution, AMRS) and its appendix.
- Dynabench's implementation (``mlcommons/dynabench``, ``api/models/score.py:
  ScoreModel.dynascore``): sort by performance, consecutive pairs whose performance differs
  by more than ``1e-4 * max(perf)``, ``AMRS_m = mean(|Δx'_m| / Δx'_perf)``, weights normalised,
  ``Dynascore = Σ_m w_m x'_m / |AMRS_m|``. Where that code silently yields NaN or 0 (one
  model, a constant metric, a missing score), this module applies a named rule instead
  (see :class:`leaderboard.metric_rules.MetricRule`).

Units
-----
The functions are unit-agnostic, but the Dynascore comes out in the unit of the performance
metric (each other metric is converted into "performance points" by its AMRS). The
leaderboard passes performance, robustness and fairness in percent (0–100), throughput in
examples per second and memory in GiB, so Dynascores read on the paper's scale (≈ 0–100).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from dynabench.errors import RuleError
from leaderboard.error_codes import LeaderboardErrorCode
from leaderboard.exchange_rates import DELTA_CUTOFF, dynascore_scores
from leaderboard.metric_rules import (
    MAX_WEIGHT,
    METRICS,
    MISSING_EXCLUDE_MODEL,
    MISSING_PER_MODEL,
    PERFORMANCE,
    MetricRule,
    Rule,
    missing_metric_choice,
)
from leaderboard.ranks import competition_ranks
from leaderboard.stability import Stability, amrs_stability


@dataclass(frozen=True)
class ModelScores:
    """One model's scores: ``scores[dataset][metric]`` is a float, or None when not measured."""

    model: object
    scores: Mapping[object, Mapping[str, float | None]]


@dataclass(frozen=True)
class RankedModel:
    """A ranked model: ``averages`` are the dataset-weighted means (units of the input),
    ``oriented`` the values after ``x' = d·x + o``, ``contributions`` ``w_m x'_m / |AMRS_m|`` (they
    sum to ``dynascore``), ``weights`` the model's own effective weights (sum 1) and ``missing``
    the weighted metrics it was scored without (per-model rule)."""

    model: object
    rank: int
    dynascore: float
    averages: dict
    oriented: dict
    contributions: dict
    weights: dict = field(default_factory=dict)
    missing: tuple = ()


@dataclass(frozen=True)
class PendingModel:
    """A model left out of the ranking, with the reason (e.g. missing performance on a dataset)."""

    model: object
    reason: str


@dataclass(frozen=True)
class DynascoreResult:
    """``ranked`` best first; ``pending`` not ranked; ``metrics`` the rule applied per metric;
    ``pairs`` the number of consecutive model pairs the performance ordering gives; ``stability``
    whether the exchange rates are trustworthy; ``missing_metric`` the rule for models without a metric."""

    ranked: list[RankedModel]
    pending: list[PendingModel]
    metrics: dict[str, MetricRule]
    pairs: int
    metric_names: tuple[str, ...] = METRICS
    dataset_weights: dict = field(default_factory=dict)
    stability: Stability = field(default_factory=Stability)
    missing_metric: str = MISSING_PER_MODEL
    orient: dict = field(default_factory=dict)

    def by_model(self) -> dict:
        return {row.model: row for row in self.ranked}


def orientation(*, memory_gib: float, error_rate: bool = False) -> dict[str, tuple[float, float]]:
    """Return ``{metric: (d, o)}`` so that ``x' = d·x + o`` is higher-is-better.

    Memory becomes "memory left" on the evaluation machine: ``d = -1``, ``o = memory_gib``
    (Ma et al. 2021, section 3). With ``error_rate`` (the task's performance metric is an error
    rate in percent, lower is better: WER, CER) performance becomes ``100 - x``, the share right,
    as Dynaboard turns every metric higher-is-better before the exchange rates (same section).
    Every other metric is kept as is (``d = 1``, ``o = 0``).
    """
    orient = {m: ((-1.0, float(memory_gib)) if m == "memory" else (1.0, 0.0)) for m in METRICS}
    if error_rate:
        orient[PERFORMANCE] = (-1.0, 100.0)
    return orient


def normalise_weights(weights: Mapping, keys: Sequence, *, what: str, max_weight: float | None = None) -> np.ndarray:
    """Return the weights of ``keys`` as an array summing to 1 (missing keys weigh 0).

    Raises ``RuleError`` when a weight is negative, not a number, above ``max_weight``, or
    when they are all 0.
    """
    values = []
    for key in keys:
        raw = weights.get(key, weights.get(str(key), 0.0))
        try:
            value = float(raw)
        except (TypeError, ValueError):
            raise RuleError(LeaderboardErrorCode.BAD_WEIGHT, f"The {what} weight of '{key}' must be a number, not {raw!r}.")
        if not np.isfinite(value) or value < 0 or (max_weight is not None and value > max_weight):
            upper = f" and at most {max_weight:g}" if max_weight is not None else ""
            raise RuleError(LeaderboardErrorCode.BAD_WEIGHT, f"The {what} weight of '{key}' must be at least 0{upper} (got {raw}).")
        values.append(value)
    array = np.asarray(values, dtype=float)
    if array.sum() <= 0:
        raise RuleError(LeaderboardErrorCode.BAD_WEIGHT, f"At least one {what} weight must be above 0.")
    return array / array.sum()


def score_array(rows: Sequence[ModelScores], datasets: Sequence, metrics: Sequence[str] = METRICS) -> np.ndarray:
    """Return the scores as an array of shape (models, datasets, metrics), NaN where missing."""
    empty: dict = {}
    flat = [
        (row.scores.get(dataset) or empty).get(metric)
        for row in rows for dataset in datasets for metric in metrics
    ]
    return np.array(flat, dtype=float).reshape(len(rows), len(datasets), len(metrics))  # None -> NaN


def dynascore(
    rows: Sequence[ModelScores],
    *,
    metric_weights: Mapping[str, float],
    dataset_weights: Mapping[object, float],
    memory_gib: float,
    missing_metric: str = MISSING_PER_MODEL,
    not_applicable: Mapping[object, Collection[str]] | None = None,
    orient: Mapping[str, tuple[float, float]] | None = None,
    delta_cutoff: float = DELTA_CUTOFF,
) -> DynascoreResult:
    """Return the Dynascore ranking of ``rows`` (Ma et al., "Dynaboard", NeurIPS 2021, section 3).

    Steps (DESIGN.md, "Dynascore"):

    1. Per metric, the mean over the scoring datasets weighted by ``dataset_weights``
       (normalised to sum to 1; datasets of weight 0 are ignored). A metric that is not
       applicable on a dataset (``not_applicable[dataset]``: e.g. fairness where no item has a
       gendered word or a name) is averaged over the datasets where it applies, their weights
       renormalised.
    2. Orientation ``x' = d·x + o`` (``orient``, default :func:`orientation`: memory becomes
       ``memory_gib - memory``).
    3. Sort by ``x'_perf`` ascending; keep consecutive pairs whose performance differs by more
       than ``delta_cutoff * max(x'_perf)``.
    4. ``AMRS_m = mean over those pairs of |Δx'_m| / Δx'_perf`` (1 for performance).
    5. ``metric_weights`` normalised to sum to 1; ``Dynascore = Σ_m w_m x'_m / |AMRS_m|``.

    Edge cases, each named in ``result.metrics[m].rule`` (see :class:`leaderboard.metric_rules.Rule`):

    - a model without performance on a weighted dataset is **pending** (excluded, listed
      with the datasets it lacks);
    - a metric not applicable on any weighted dataset: ``not_applicable``, left out for all
      (never a reason to hold a model back);
    - a weighted metric some models lack (prediction files have no throughput, memory,
      robustness or fairness): ``missing_metric="per_model"`` (default) scores each such model
      on the metrics it has, its weights renormalised, while the others keep the metric and its
      AMRS comes from the models that have it (:data:`leaderboard.metric_rules.PER_MODEL_RULE`); ``"exclude_model"``
      lists those models as pending instead. ``"drop_metric"`` is read as ``"per_model"``;
    - fewer than two models with the metric and distinct performance: ``amrs_undefined``;
    - a metric with zero variation across the pairs: ``zero_variation``, left out.

    Metrics left out have their weight removed and the remaining weights renormalised.
    ``result.stability`` says whether the exchange rates rest on enough, distinct pairs.

    Shapes: ``rows`` M models × D datasets × K metrics (``scores[dataset][metric]``).
    Runs vectorised (numpy); 1,000 × 10 × 5 takes a few milliseconds.
    Raises ``RuleError`` (code ``bad_weight``) for negative, non-numeric or all-zero weights,
    ``ValueError`` for an unknown ``missing_metric``.
    """
    missing_metric = missing_metric_choice(missing_metric)
    datasets = [d for d in dataset_weights if float(dataset_weights[d] or 0) > 0] or list(dataset_weights)
    d_weights = normalise_weights(dataset_weights, datasets, what="dataset")
    metrics = METRICS
    m_weights = normalise_weights(metric_weights, metrics, what="metric", max_weight=MAX_WEIGHT)
    X = score_array(rows, datasets, metrics)
    na = not_applicable or {}
    applicable = np.array([
        [m == PERFORMANCE or m not in (na.get(d) or na.get(str(d)) or ()) for m in metrics] for d in datasets
    ], dtype=bool).reshape(len(datasets), len(metrics))
    result = dynascore_array(
        X, models=[r.model for r in rows], metrics=metrics, metric_weights=m_weights,
        dataset_weights=d_weights, dataset_names=datasets, applicable=applicable,
        orient=orient or orientation(memory_gib=memory_gib), missing_metric=missing_metric,
        delta_cutoff=delta_cutoff,
    )
    raw = {m: float(metric_weights.get(m, 0) or 0) for m in metrics}
    result.metrics.update({m: replace(rule, weight=raw[m]) for m, rule in result.metrics.items()})
    return result


def dynascore_array(
    X: np.ndarray,
    *,
    models: Sequence,
    metrics: Sequence[str],
    metric_weights: np.ndarray,
    dataset_weights: np.ndarray,
    orient: Mapping[str, tuple[float, float]],
    dataset_names: Sequence = (),
    applicable: np.ndarray | None = None,
    missing_metric: str = MISSING_PER_MODEL,
    delta_cutoff: float = DELTA_CUTOFF,
) -> DynascoreResult:
    """Return the Dynascore ranking for ``X`` of shape (models, datasets, metrics), NaN = missing.

    ``metric_weights`` (K,) and ``dataset_weights`` (D,) must already sum to 1; ``applicable``
    (D, K) bool marks where a metric can be measured (default everywhere). The metric named
    ``performance`` is the reference. See :func:`dynascore` for the rules.
    """
    missing_metric = missing_metric_choice(missing_metric)
    metrics = list(metrics)
    p = metrics.index(PERFORMANCE)
    n_datasets = X.shape[1]
    names = [str(n) for n in dataset_names] if len(dataset_names) else [str(j) for j in range(n_datasets)]
    applicable = np.ones((n_datasets, len(metrics)), dtype=bool) if applicable is None else applicable.copy()
    applicable[:, p] = True
    counted = applicable & (dataset_weights[:, None] > 0)  # (D, K): the datasets each metric is averaged over
    totals = np.where(counted, dataset_weights[:, None], 0.0).sum(axis=0)
    metric_applies = totals > 0
    per_metric_weights = np.where(counted, dataset_weights[:, None], 0.0) / np.where(metric_applies, totals, 1.0)
    measured = ~(np.isnan(X) & counted[None, :, :]).any(axis=1) & metric_applies[None, :]  # (M, K)
    weighted = metric_weights > 0
    missing_weighted = ~measured & (weighted & metric_applies)[None, :]
    pending_mask = ~measured[:, p]
    if missing_metric == MISSING_EXCLUDE_MODEL:
        pending_mask |= missing_weighted.any(axis=1)
    pending = []
    for i in np.flatnonzero(pending_mask):
        if not measured[i, p]:
            lacking = [names[j] for j in np.flatnonzero(np.isnan(X[i, :, p]) & counted[:, p])]
            reason = "no performance yet on " + ", ".join(lacking)
        else:
            reason = "no " + ", ".join(metrics[k] for k in np.flatnonzero(missing_weighted[i])) + " measurement"
        pending.append(PendingModel(models[i], reason))
    keep = np.flatnonzero(~pending_mask)
    kept_models = [models[i] for i in keep]
    has = measured[keep]  # (M', K)

    averages = np.einsum("mdk,dk->mk", np.nan_to_num(X[keep]), per_metric_weights)
    averages[~has] = np.nan
    d = np.array([orient[m][0] for m in metrics])
    o = np.array([orient[m][1] for m in metrics])
    oriented = averages * d + o

    rules: dict[str, str] = {}
    for k, metric in enumerate(metrics):
        if k == p:
            rules[metric] = Rule.REFERENCE
        elif not weighted[k]:
            rules[metric] = Rule.ZERO_WEIGHT
        elif not metric_applies[k]:
            rules[metric] = Rule.NOT_APPLICABLE
        elif not has[:, k].any():
            rules[metric] = Rule.NOT_MEASURED
        else:
            rules[metric] = Rule.AMRS
    candidates = np.array([rules[m] in (Rule.REFERENCE, Rule.AMRS) for m in metrics])

    scored = dynascore_scores(oriented, reference=p, candidates=candidates, metric_weights=metric_weights,
                              has=has, delta_cutoff=delta_cutoff)
    amrs, pairs = scored.amrs[0], scored.pairs[0]
    for k, metric in enumerate(metrics):
        if rules[metric] != Rule.AMRS:
            continue
        if pairs[k] == 0:
            rules[metric] = Rule.AMRS_UNDEFINED
        elif amrs[k] == 0:
            rules[metric] = Rule.ZERO_VARIATION
    scores, contributions, effective = scored.scores[0], scored.contributions[0], scored.effective_weights[0]
    model_weights = scored.model_weights[0]
    used = scored.used[0]

    order = np.lexsort((np.arange(len(keep)), -np.nan_to_num(oriented[:, p]), -scores)) if len(keep) else np.array([], int)
    ranks = competition_ranks(scores[None, :])[0][0]
    ranked = []
    for i in order:
        ranked.append(RankedModel(
            model=kept_models[i], rank=int(ranks[i]), dynascore=float(scores[i]),
            averages={m: _num(averages[i, k]) for k, m in enumerate(metrics)},
            oriented={m: _num(oriented[i, k]) for k, m in enumerate(metrics)},
            contributions={m: _num(contributions[i, k]) for k, m in enumerate(metrics)},
            weights={m: float(model_weights[i, k]) for k, m in enumerate(metrics)},
            missing=tuple(m for k, m in enumerate(metrics) if used[k] and not has[i, k]),
        ))
    metric_rules = {
        m: MetricRule(
            metric=m, weight=float(metric_weights[k]), effective_weight=float(effective[k]),
            amrs=(1.0 if k == p else (float(amrs[k]) if rules[m] == Rule.AMRS else None)),
            rule=rules[m],
            missing_for=tuple(kept_models[i] for i in np.flatnonzero(~has[:, k])) if rules[m] == Rule.AMRS else (),
            not_applicable_on=tuple(names[j] for j in np.flatnonzero(~applicable[:, k] & (dataset_weights > 0)))
            if metric_applies[k] else (),
            pairs=int(pairs[k]),
        )
        for k, m in enumerate(metrics)
    }
    stability = amrs_stability(oriented, has=has, used=used, metrics=metrics, models=kept_models, reference=p,
                               delta_cutoff=delta_cutoff, contributions=contributions, amrs=amrs)
    return DynascoreResult(
        ranked=ranked, pending=pending, metrics=metric_rules, pairs=int(pairs[p]), metric_names=tuple(metrics),
        dataset_weights={name: float(w) for name, w in zip(dataset_names, dataset_weights)},
        stability=stability, missing_metric=missing_metric, orient=dict(orient),
    )


def _num(value) -> float | None:
    return None if value is None or np.isnan(value) else float(value)
