"""Leaderboard maths with no ORM: the Dynascore, bootstrap confidence intervals and rank ranges.

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
  (see :class:`MetricRule`).

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

PERFORMANCE = "performance"
METRICS = ("performance", "throughput", "memory", "robustness", "fairness")
DEFAULT_METRIC_WEIGHTS = {"performance": 4.0, "throughput": 1.0, "memory": 1.0, "robustness": 1.0, "fairness": 1.0}
DELTA_CUTOFF = 1e-4
MAX_WEIGHT = 5.0

MISSING_PER_MODEL = "per_model"
MISSING_EXCLUDE_MODEL = "exclude_model"
MISSING_METRIC_CHOICES = (MISSING_PER_MODEL, MISSING_EXCLUDE_MODEL)
MISSING_LEGACY = {"drop_metric": MISSING_PER_MODEL}
"""Earlier names of a missing-metric choice, still read from old links and saved forks: ``drop_metric``
left a metric out for *every* model as soon as one ranked model lacked it; the per-model rule replaced it."""

NEAR_IDENTICAL_POINTS = 1.0
"""Two models whose performance differs by less than this (in the performance metric's points, 0–100)
give an exchange rate |Δx'_m| / Δperf that is mostly noise: the seed sets hold 16–43 items, where one
item is already 2–6 points. Such a pair makes the exchange rates unstable (:class:`Stability`)."""


DOMINANT_SHARE = 10.0
"""A counted delta metric whose part of the Dynascore is, for every ranked model, more than this many times
the best performance (in points) dominates the score with a level shared by all: its exchange rate is tiny
(e.g. the memory of same-sized models differs by a thousandth of a GiB, noise of the measurement), and the
absolute Dynascores (10,887.97 against 10,858.12 for accuracies of 70.4 and 28.6) say nothing a reader
can check. Such rates count as unstable (:class:`Stability`)."""


def missing_metric_choice(value: str | None) -> str:
    """The missing-metric rule named by ``value`` (None or "": the default, ``per_model``; legacy names
    mapped by ``MISSING_LEGACY``). Raises ``ValueError`` for an unknown name."""
    value = MISSING_LEGACY.get(value or MISSING_PER_MODEL, value or MISSING_PER_MODEL)
    if value not in MISSING_METRIC_CHOICES:
        raise ValueError(f"missing_metric must be '{MISSING_PER_MODEL}' or '{MISSING_EXCLUDE_MODEL}'")
    return value


class Rule:
    """The rule applied to one metric (``MetricRule.rule``)."""

    REFERENCE = "reference"  # performance itself: AMRS = 1 by definition
    AMRS = "amrs"  # converted into performance points by its AMRS
    ZERO_WEIGHT = "zero_weight"  # weight 0: not part of the Dynascore
    NOT_APPLICABLE = "not_applicable"  # cannot be measured on any weighted dataset: left out for everyone
    NOT_MEASURED = "not_measured"  # no ranked model has a value (e.g. only prediction files): left out
    ZERO_VARIATION = "zero_variation"  # no change between models whose performance differs: left out
    AMRS_UNDEFINED = "amrs_undefined"  # < 2 models with the metric and distinct performance: left out


RULE_TEXT = {
    Rule.REFERENCE: "the reference metric (AMRS = 1)",
    Rule.AMRS: "converted into performance points by its AMRS",
    Rule.ZERO_WEIGHT: "weight 0: not counted",
    Rule.NOT_APPLICABLE: "not applicable: no item of a weighted dataset has such a perturbation, so it cannot be measured for any model; left out, other weights renormalised",
    Rule.NOT_MEASURED: "measured for no ranked model (prediction files have no throughput, memory, robustness or fairness): left out, other weights renormalised",
    Rule.ZERO_VARIATION: "identical for every pair of models whose performance differs: left out (it cannot change the order), other weights renormalised",
    Rule.AMRS_UNDEFINED: "fewer than two models with this metric and distinct performance, so its AMRS is undefined: left out, other weights renormalised",
}

PER_MODEL_RULE = (
    "A model without a metric (a predictions file has no throughput, memory, robustness or fairness) is scored "
    "on the metrics it has: that metric's weight is spread over its other metrics in proportion, so its Dynascore "
    "is the weighted mean of the metrics measured for it. Every other model keeps the metric, and the metric's "
    "AMRS is averaged over the consecutive pairs of the models that have it, so adding such a model changes no "
    "other model's Dynascore. Source: Dynaboard (Ma et al., NeurIPS 2021) measures every metric itself and has no "
    "rule for a model without one; Dynabench's code averages the AMRS over the pairs where the metric exists "
    "(pandas skipna, kept here) and leaves such a model without a score (NaN). The per-model weights are ours."
)
"""The per-model rule (``missing_metric="per_model"``), as the page and the API state it."""


@dataclass(frozen=True)
class ModelScores:
    """One model's scores: ``scores[dataset][metric]`` is a float, or None when not measured."""

    model: object
    scores: Mapping[object, Mapping[str, float | None]]


@dataclass(frozen=True)
class MetricRule:
    """How one metric entered the Dynascore.

    ``weight``: the user's weight; ``effective_weight``: after normalisation and after metrics left
    out by a rule (for a model that has every metric); ``amrs``: the average marginal rate of
    substitution (None when undefined); ``pairs``: the model pairs it was averaged over;
    ``missing_for``: ranked models scored without it (per-model rule); ``not_applicable_on``:
    weighted datasets where it cannot be measured (it is averaged over the others).
    """

    metric: str
    weight: float
    effective_weight: float
    amrs: float | None
    rule: str
    missing_for: tuple = ()
    not_applicable_on: tuple = ()
    pairs: int = 0

    @property
    def explanation(self) -> str:
        return RULE_TEXT[self.rule]


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
class Stability:
    """Whether the exchange rates (AMRS) the Dynascore used can be trusted, and if not why.

    Unstable when a used delta metric's AMRS comes from fewer than two model pairs (fewer than three
    models with distinct performance: ``single_pair`` names those metrics), from a pair whose
    performance differs by less than ``NEAR_IDENTICAL_POINTS`` (``close_pairs``: ``(model, model,
    Δperf, metrics)``), or is so small that the metric's part exceeds ``DOMINANT_SHARE`` times the best
    performance for every model (``dominant``): |Δx'_m| / Δperf then rests on one or two noisy differences, and a metric
    that barely varies (the memory of same-sized models) is converted at an extreme rate that adds
    the same thousands of points to every model. ``distinct``: models with distinct performance.
    """

    single_pair: tuple = ()
    close_pairs: tuple = ()
    distinct: int = 0
    dominant: tuple = ()  # ((metric, AMRS, smallest part over the models, best performance), ...)

    @property
    def stable(self) -> bool:
        return not self.single_pair and not self.close_pairs and not self.dominant

    def reasons(self, name=str) -> list[str]:
        """One sentence per cause; ``name(model)`` spells a model."""
        out = []
        if self.single_pair:
            metrics = ", ".join(self.single_pair)
            out.append(f"Only {self.distinct} model{'s' if self.distinct != 1 else ''} with distinct performance "
                       f"measure{'s' if self.distinct == 1 else ''} {metrics}, so "
                       f"{'its exchange rate comes' if len(self.single_pair) == 1 else 'their exchange rates come'} "
                       f"from a single pair of models")
        for a, b, gap, metrics in self.close_pairs:
            out.append(f"{name(a)} and {name(b)} differ by only {gap:.2f} points of performance, so the exchange rate "
                       f"of {', '.join(metrics)} computed from them is extreme")
        for metric, amrs, least, best in self.dominant:
            out.append(f"The exchange rate of {metric} (AMRS {amrs:.3g}) turns it into at least {least:,.0f} points for every "
                       f"model, against a best performance of {best:,.1f}")
        return out


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

    def by_model(self) -> dict:
        return {row.model: row for row in self.ranked}


def orientation(*, memory_gib: float) -> dict[str, tuple[float, float]]:
    """Return ``{metric: (d, o)}`` so that ``x' = d·x + o`` is higher-is-better.

    Memory becomes "memory left" on the evaluation machine: ``d = -1``, ``o = memory_gib``
    (Ma et al. 2021, section 3); every other metric is kept as is (``d = 1``, ``o = 0``).
    """
    return {m: ((-1.0, float(memory_gib)) if m == "memory" else (1.0, 0.0)) for m in METRICS}


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

    Edge cases, each named in ``result.metrics[m].rule`` (see :class:`Rule`):

    - a model without performance on a weighted dataset is **pending** (excluded, listed
      with the datasets it lacks);
    - a metric not applicable on any weighted dataset: ``not_applicable``, left out for all
      (never a reason to hold a model back);
    - a weighted metric some models lack (prediction files have no throughput, memory,
      robustness or fairness): ``missing_metric="per_model"`` (default) scores each such model
      on the metrics it has, its weights renormalised, while the others keep the metric and its
      AMRS comes from the models that have it (:data:`PER_MODEL_RULE`); ``"exclude_model"``
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
        stability=stability, missing_metric=missing_metric,
    )


def _num(value) -> float | None:
    return None if value is None or np.isnan(value) else float(value)


def _pairs_of(perf: np.ndarray, mask: np.ndarray, delta_cutoff: float) -> list[tuple[int, int, float]]:
    """The consecutive pairs ``(lower, higher, Δperf)`` (model indices) of the models in ``mask`` sorted
    by performance, kept when ``Δperf > delta_cutoff * max(perf)`` (steps 3–4, one replicate)."""
    index = np.flatnonzero(mask)
    if len(index) < 2:
        return []
    index = index[np.argsort(perf[index], kind="stable")]
    threshold = delta_cutoff * perf[index[-1]]
    return [(int(a), int(b), float(perf[b] - perf[a])) for a, b in zip(index[:-1], index[1:]) if perf[b] - perf[a] > threshold]


def amrs_stability(
    oriented: np.ndarray, *, has: np.ndarray, used: np.ndarray, metrics: Sequence[str], models: Sequence,
    reference: int, delta_cutoff: float = DELTA_CUTOFF, near_identical: float = NEAR_IDENTICAL_POINTS,
    contributions: np.ndarray | None = None, amrs: np.ndarray | None = None, dominant_share: float = DOMINANT_SHARE,
) -> Stability:
    """Judge the exchange rates of the delta metrics that entered the Dynascore (:class:`Stability`).

    ``oriented`` (M, K) and ``has`` (M, K) as in :func:`dynascore_array`; ``used`` (K,) the metrics
    that entered; ``contributions`` (M, K) and ``amrs`` (K,) as computed. Unstable when a used delta
    metric's AMRS rests on fewer than two pairs, on a pair whose performance differs by less than
    ``near_identical`` points, or when its part exceeds ``dominant_share`` × the best performance for
    every model that has it.
    """
    perf = np.nan_to_num(oriented[:, reference]) if len(models) else np.zeros(0)
    few: list[str] = []
    close: dict[tuple[int, int, float], list[str]] = {}
    for k, metric in enumerate(metrics):
        if k == reference or not used[k]:
            continue
        pairs = _pairs_of(perf, has[:, k] & has[:, reference], delta_cutoff)
        if len(pairs) < 2:
            few.append(metric)
        for pair in pairs:
            if pair[2] < near_identical:
                close.setdefault(pair, []).append(metric)
    distinct = len(_pairs_of(perf, np.ones(len(models), dtype=bool), delta_cutoff)) + (1 if len(models) else 0)
    dominant = []
    if contributions is not None and amrs is not None and len(models):
        best = float(np.max(perf))
        for k, metric in enumerate(metrics):
            if k == reference or not used[k] or not has[:, k].any():
                continue
            least = float(np.min(np.abs(contributions[has[:, k], k])))
            if best > 0 and least > dominant_share * best:
                dominant.append((metric, float(amrs[k]), least, best))
    return Stability(
        single_pair=tuple(few),
        close_pairs=tuple((models[a], models[b], gap, tuple(names)) for (a, b, gap), names in close.items()),
        distinct=distinct, dominant=tuple(dominant),
    )


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
    section 3). :func:`dynascore` (one replicate) and :func:`rank_ranges` (B resamples) both call
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


TIE_TOLERANCE = 1e-9


def competition_ranks(scores: np.ndarray, tolerance: float = TIE_TOLERANCE) -> tuple[np.ndarray, np.ndarray]:
    """Rank each row of ``scores`` (B, M), higher is better, with ties sharing their place.

    Returns ``(best, worst)``, both (B, M) ints in model order. ``best`` is the standard
    competition ranking ("1224": identical scores share the best place of their group, the next
    model skips the places they fill); ``worst`` is the last place of the group (the modified
    competition ranking, "1334"). A model alone in its group has ``best == worst``. Scores
    within ``tolerance`` of their neighbour in sorted order are one group (floating-point noise
    of the same arithmetic on identical inputs is far below it).
    """
    n_rep, n_models = scores.shape
    if n_models == 0:
        empty = np.zeros((n_rep, 0), dtype=int)
        return empty, empty
    order = np.argsort(-scores, axis=1, kind="stable")
    ordered = np.take_along_axis(scores, order, axis=1)
    starts = np.ones((n_rep, n_models), dtype=bool)
    starts[:, 1:] = (ordered[:, :-1] - ordered[:, 1:]) > tolerance
    positions = np.broadcast_to(np.arange(n_models), (n_rep, n_models))
    group_start = np.maximum.accumulate(np.where(starts, positions, 0), axis=1)
    ends = np.ones((n_rep, n_models), dtype=bool)
    ends[:, :-1] = starts[:, 1:]
    group_end = np.minimum.accumulate(np.where(ends, positions, n_models)[:, ::-1], axis=1)[:, ::-1]
    best = np.empty((n_rep, n_models), dtype=int)
    worst = np.empty((n_rep, n_models), dtype=int)
    np.put_along_axis(best, order, group_start + 1, axis=1)
    np.put_along_axis(worst, order, group_end + 1, axis=1)
    return best, worst


# --- Bootstrap: confidence intervals on performance and rank ranges -----------------------


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
            values = np.stack([_item_values(result) for _, result in present], axis=1)  # (n, M')
            out[:, [i for i, _ in present], j] = 100.0 * (counts @ values) / n
    return out


def _item_values(result: ItemResults) -> np.ndarray:
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
    return counts @ _item_values(result) / n


def percentile_interval(replicates: np.ndarray, *, level: float = 0.95, axis: int = 0) -> np.ndarray:
    """Return the percentile interval of ``replicates`` along ``axis``: shape (..., 2)."""
    tail = 100 * (1 - level) / 2
    lo, hi = np.nanpercentile(replicates, [tail, 100 - tail], axis=axis)
    return np.stack([lo, hi], axis=-1)


def performance_intervals(replicates: np.ndarray, dataset_weights: np.ndarray, *, level: float = 0.95) -> np.ndarray:
    """Return the (models, 2) interval of the dataset-weighted performance from (B, M, D) replicates."""
    weighted = np.einsum("bmd,d->bm", replicates, dataset_weights)
    return percentile_interval(weighted, level=level)


def replicate_dynascores(
    result: DynascoreResult,
    replicates: np.ndarray,
    *,
    replicate_models: Sequence,
    delta_cutoff: float = DELTA_CUTOFF,
) -> np.ndarray:
    """Return the Dynascore of every ranked model in every bootstrap replicate: shape (B, M).

    Columns follow ``result.ranked``. Each replicate is the Dynascore (:func:`dynascore_scores`)
    of the ranked models with performance replaced by its replicate: ``replicates`` (B, M', D)
    in percent for ``replicate_models``, datasets in the order of ``result.dataset_weights``.
    The other metrics keep their measured values; metrics left out for structural reasons
    (weight 0, not applicable, measured for no model) stay out, each model keeps the metrics it has,
    while AMRS, and so the ``amrs_undefined``
    and ``zero_variation`` rules, are decided per replicate exactly as :func:`dynascore` decides
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
        A[:, has, p] = np.einsum("bmd,d->bm", replicates[:, rows, :], weights)
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
    (:func:`competition_ranks`): two models with identical scores both occupy places 1–2, so
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
