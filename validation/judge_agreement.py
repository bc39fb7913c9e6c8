"""How well a rater (an AI validator or a person) agrees with a reference: pure arithmetic, no ORM.

``rater_agreement(pairs, labels)`` takes ``(rater's label, reference label)`` pairs and returns the
share that agree (accuracy), Cohen's κ (Cohen, "A coefficient of agreement for nominal scales",
Educational and Psychological Measurement 20(1), 1960; the point estimate is scikit-learn's
``cohen_kappa_score``) overall and per label (that label against all others), each with a 95 %
percentile bootstrap interval over the pairs (Efron and Tibshirani, *An Introduction to the Bootstrap*,
1993, ch. 13), and the confusion matrix (rows: the reference; columns: the rater).

κ = (p_o − p_e) / (1 − p_e), where p_o is the share of pairs that agree and p_e the agreement expected by
chance from the two raters' label shares. It is undefined (None) when p_e = 1 (both raters always give
the same single label); resamples where it is undefined are left out of the interval.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np

#: Bootstrap resamples per interval.
RESAMPLES = 1000
#: Pairs needed before an interval is given (fewer: None).
MIN_PAIRS_FOR_INTERVAL = 5


@dataclasses.dataclass(frozen=True)
class Estimate:
    """A figure with its 95 % percentile bootstrap interval (``low``/``high`` None when too few pairs)."""

    value: float | None
    low: float | None
    high: float | None

    def as_dict(self) -> dict:
        return {"value": self.value, "low": self.low, "high": self.high}


def _kappa_from_counts(counts: np.ndarray) -> np.ndarray:
    """Cohen's κ of each confusion matrix in ``counts`` (shape ``(..., k, k)``); NaN where undefined."""
    n = counts.sum(axis=(-1, -2))
    with np.errstate(invalid="ignore", divide="ignore"):
        p_o = np.trace(counts, axis1=-2, axis2=-1) / n
        p_e = (counts.sum(axis=-1) * counts.sum(axis=-2)).sum(axis=-1) / (n * n)
        kappa = (p_o - p_e) / (1 - p_e)
    return np.where(np.isclose(p_e, 1.0), np.nan, kappa)


def _interval(samples: np.ndarray) -> tuple[float | None, float | None]:
    samples = samples[~np.isnan(samples)]
    if samples.size == 0:
        return None, None
    low, high = np.percentile(samples, [2.5, 97.5])
    return float(low), float(high)


def rater_agreement(pairs: Sequence[tuple[str, str]], labels: Sequence[str], *, seed: int = 0,
                    resamples: int = RESAMPLES) -> dict:
    """Agreement of a rater with a reference over ``pairs`` (``(rater label, reference label)``, each one
    of ``labels``; pairs with another label are left out).

    Returns ``{"n", "accuracy": Estimate-dict, "kappa": Estimate-dict, "per_label": {label: {"n"
    (reference count), "kappa": Estimate-dict}}, "confusion": {"labels", "matrix"}}`` where ``matrix[i][j]``
    counts pairs whose reference is ``labels[i]`` and rater's label ``labels[j]``. Figures are None when
    there are no pairs (or κ is undefined); ``confusion["rows"]`` pairs each reference label with its row; intervals need ``MIN_PAIRS_FOR_INTERVAL`` pairs. The
    bootstrap draws ``resamples`` resamples of the pairs with a ``numpy`` generator seeded by ``seed``.
    """
    from sklearn.metrics import cohen_kappa_score

    labels = list(labels)
    index = {label: i for i, label in enumerate(labels)}
    kept = [(index[r], index[g]) for r, g in pairs if r in index and g in index]
    k, n = len(labels), len(kept)
    matrix = np.zeros((k, k), dtype=int)
    for r, g in kept:
        matrix[g, r] += 1
    empty = {"value": None, "low": None, "high": None}
    if n == 0:
        return {"n": 0, "accuracy": empty, "kappa": empty,
                "per_label": {label: {"n": 0, "kappa": empty} for label in labels},
                "confusion": _confusion(labels, matrix)}
    rater = np.array([r for r, _ in kept])
    ref = np.array([g for _, g in kept])
    kappa = cohen_kappa_score(ref, rater, labels=list(range(k))) if len(set(ref) | set(rater)) > 1 else float("nan")
    codes = ref * k + rater
    draws = np.random.default_rng(seed).integers(0, n, size=(resamples, n)) if n >= MIN_PAIRS_FOR_INTERVAL else None
    boot = None
    if draws is not None:
        resampled = codes[draws]
        boot = np.stack([np.bincount(row, minlength=k * k) for row in resampled]).reshape(resamples, k, k)

    def estimate(value, samples) -> dict:
        value = None if value is None or np.isnan(value) else float(value)
        low, high = _interval(samples) if samples is not None else (None, None)
        return Estimate(value, low, high).as_dict()

    accuracy_samples = np.trace(boot, axis1=1, axis2=2) / n if boot is not None else None
    per_label = {}
    for i, label in enumerate(labels):
        binary = _binary(matrix, i)
        samples = _kappa_from_counts(_binary(boot, i)) if boot is not None else None
        per_label[label] = {"n": int(matrix[i].sum()), "kappa": estimate(float(_kappa_from_counts(binary)), samples)}
    return {
        "n": n,
        "accuracy": estimate(float(np.trace(matrix)) / n, accuracy_samples),
        "kappa": estimate(kappa, _kappa_from_counts(boot) if boot is not None else None),
        "per_label": per_label,
        "confusion": _confusion(labels, matrix),
    }


def _confusion(labels: list[str], matrix: np.ndarray) -> dict:
    """``{"labels", "matrix", "rows": [{"label", "counts"}]}`` (rows: the reference's labels)."""
    rows = matrix.tolist()
    return {"labels": labels, "matrix": rows, "rows": [{"label": label, "counts": row} for label, row in zip(labels, rows)]}


def _binary(matrix: np.ndarray, i: int) -> np.ndarray:
    """The 2×2 matrix of label ``i`` against all others (rows: reference; columns: rater) of each
    confusion matrix in ``matrix`` (shape ``(..., k, k)`` → ``(..., 2, 2)``)."""
    both = matrix[..., i, i]
    ref_only = matrix[..., i, :].sum(axis=-1) - both
    rater_only = matrix[..., :, i].sum(axis=-1) - both
    neither = matrix.sum(axis=(-1, -2)) - both - ref_only - rater_only
    return np.stack([np.stack([both, ref_only], axis=-1), np.stack([rater_only, neither], axis=-1)], axis=-2)


def leave_one_out_reference(votes: Sequence[tuple[int, str]], rater: int) -> str | None:
    """The reference a person's vote is measured against: the label most of the *other* counted votes
    on the example gave (``votes``: ``(validator id, label)``); None when there are none or the top
    labels tie. Their own vote is left out so that a person is not measured against themselves."""
    counts: dict[str, int] = {}
    for who, label in votes:
        if who != rater:
            counts[label] = counts.get(label, 0) + 1
    if not counts:
        return None
    ranked = sorted(counts.values(), reverse=True)
    if len(ranked) > 1 and ranked[0] == ranked[1]:
        return None
    return max(counts, key=counts.get)


def expected_kappa(prevalence: Sequence[float], confusion: Sequence[Sequence[float]]) -> float:
    """The population κ of a rater who, on an item whose reference is label ``i`` (share
    ``prevalence[i]``), answers label ``j`` with probability ``confusion[i][j]``: κ of the joint
    distribution ``prevalence[i] · confusion[i][j]`` (used to script a judge of known κ)."""
    joint = np.asarray(prevalence, dtype=float)[:, None] * np.asarray(confusion, dtype=float)
    return float(_kappa_from_counts(joint))


def policy_arm(*, secret: str, example_id: int) -> str:
    """``"policy"`` or ``"control"`` for one example of a round with the judge's A/B split on: the parity
    of the first byte of sha256(``secret``:judge:``example_id``), ``secret`` the round's own
    (``Round.secret``). Stable (the same example always lands in the same arm), about half each, and chosen
    by no one."""
    import hashlib

    digest = hashlib.sha256(f"{secret}:judge:{example_id}".encode()).digest()
    return "policy" if digest[0] % 2 == 0 else "control"
