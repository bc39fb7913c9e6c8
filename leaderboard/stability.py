"""Whether the exchange rates (AMRS) the Dynascore used can be trusted, and if not, why.

Decides: a used delta metric's exchange rate is unstable when it rests on fewer than two model pairs,
on a pair whose performance differs by less than ``NEAR_IDENTICAL_POINTS``, or when it makes the
metric's part exceed ``DOMINANT_SHARE`` times the best performance for every model (:class:`Stability`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from leaderboard.exchange_rates import DELTA_CUTOFF

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

    ``oriented`` (M, K) and ``has`` (M, K) as in :func:`leaderboard.dynascore.dynascore_array`; ``used`` (K,) the metrics
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
