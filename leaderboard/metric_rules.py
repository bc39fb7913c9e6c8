"""The metrics of the leaderboard and the rule that decides how each one enters the Dynascore.

Decides: which metrics there are and their default weights (performance 4, the others 1, at most
``MAX_WEIGHT``), which rule applies to a metric (:class:`Rule`: the reference, converted by its
AMRS, or left out and why, in the words of ``RULE_TEXT``), and what happens to a model without a
weighted metric (``missing_metric``: scored on the metrics it has, :data:`PER_MODEL_RULE`, or held
back as pending). Sources as in :mod:`leaderboard.dynascore` (Ma et al., "Dynaboard", NeurIPS 2021,
section 3; ``mlcommons/dynabench`` ``api/models/score.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

PERFORMANCE = "performance"
METRICS = ("performance", "throughput", "memory", "robustness", "fairness")
DEFAULT_METRIC_WEIGHTS = {"performance": 4.0, "throughput": 1.0, "memory": 1.0, "robustness": 1.0, "fairness": 1.0}
MAX_WEIGHT = 5.0

MISSING_PER_MODEL = "per_model"
MISSING_EXCLUDE_MODEL = "exclude_model"
MISSING_METRIC_CHOICES = (MISSING_PER_MODEL, MISSING_EXCLUDE_MODEL)
MISSING_LEGACY = {"drop_metric": MISSING_PER_MODEL}
"""Earlier names of a missing-metric choice, still read from old links and saved forks: ``drop_metric``
left a metric out for *every* model as soon as one ranked model lacked it; the per-model rule replaced it."""


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
    Rule.NOT_APPLICABLE: "not applicable: no item of a weighted dataset has such a perturbation (for audio fairness: no two speaker groups), so it cannot be measured for any model; left out, other weights renormalised",
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
