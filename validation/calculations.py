"""Pure functions of validation: consensus, splits, agreement, anonymised ids. No ORM here.

Every surface (the review queue, the owner queue, imports, ``reconcile_counters``, the
benchmark's recomputation) derives an example's state with ``derive_state``, so the rule
exists once.
"""

import hashlib
from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Sequence

import krippendorff
import numpy as np
from statsmodels.stats.inter_rater import fleiss_kappa as _statsmodels_fleiss_kappa

from annotation.models import ValidationState

CORRECT, INCORRECT, FLAGGED = "correct", "incorrect", "flagged"
VALIDATION_LABELS = (CORRECT, INCORRECT, FLAGGED)
OWNER = "owner"
SPLITS = ("train", "dev", "test")

_STATE_FOR_LABEL = {
    CORRECT: ValidationState.VERIFIED_CORRECT,
    INCORRECT: ValidationState.VERIFIED_INCORRECT,
    FLAGGED: ValidationState.FLAGGED,
}


def derive_state(labels_and_modes: Iterable[tuple[str, str]], needed: int) -> str:
    """Return the example's ``ValidationState`` value from its validations.

    ``labels_and_modes``: ``(label, mode)`` pairs in the order they were recorded, label in
    ``correct|incorrect|flagged``, mode ``user|owner``. ``needed``: the task's
    ``validations_needed`` (>= 1).

    Rule (DESIGN.md "vMER"; Kiela et al., "Dynabench", NAACL 2021, section 3): the latest
    owner-mode validation decides outright. Otherwise the first label whose user
    validations reach ``needed`` settles the example: ``correct`` -> verified correct,
    ``incorrect`` -> verified incorrect, ``flagged`` -> flagged. Else it stays pending.
    """
    if needed < 1:
        raise ValueError(f"needed must be at least 1, got {needed}")
    owner_label = None
    settled = None
    counts: Counter = Counter()
    for label, mode in labels_and_modes:
        if label not in _STATE_FOR_LABEL:
            raise ValueError(f"unknown validation label {label!r}")
        if mode == OWNER:
            owner_label = label
            continue
        counts[label] += 1
        if settled is None and counts[label] >= needed:
            settled = label
    decisive = owner_label or settled
    return _STATE_FOR_LABEL[decisive] if decisive else ValidationState.PENDING


def tally(labels: Iterable[str]) -> dict[str, int]:
    """Return the example's counter columns ``{validation_count, correct_count, incorrect_count,
    flagged_count}`` for its validation labels (all modes)."""
    counts = Counter(labels)
    return {
        "validation_count": sum(counts.values()),
        "correct_count": counts[CORRECT],
        "incorrect_count": counts[INCORRECT],
        "flagged_count": counts[FLAGGED],
    }


def split_sizes(n: int, ratios: dict[str, float]) -> dict[str, int]:
    """Return ``{train, dev, test}`` sizes summing to ``n`` for ``ratios`` (summing to 1),
    by the largest-remainder method (ties go to train, then dev, then test)."""
    exact = {s: n * float(ratios.get(s, 0.0)) for s in SPLITS}
    sizes = {s: int(exact[s]) for s in SPLITS}
    left = n - sum(sizes.values())
    for s in sorted(SPLITS, key=lambda s: (-(exact[s] - sizes[s]), SPLITS.index(s)))[:left]:
        sizes[s] += 1
    return sizes


def split_key(seed: int, example_id: int) -> str:
    """Return the sort key that places an example in the split order: sha256 of ``seed:id``."""
    return hashlib.sha256(f"{seed}:{example_id}".encode()).hexdigest()


def assign_splits(example_ids: Sequence[int], *, ratios: dict[str, float], seed: int) -> dict[int, str]:
    """Return ``{example_id: "train"|"dev"|"test"}``, deterministic for the same ids, ratios and seed.

    The examples are ordered by ``split_key(seed, id)`` (a hash, so independent of insertion
    order) and cut into consecutive blocks of ``split_sizes(len(ids), ratios)``.
    """
    ordered = sorted(set(example_ids), key=lambda i: split_key(seed, i))
    sizes = split_sizes(len(ordered), ratios)
    result, start = {}, 0
    for split in SPLITS:
        for example_id in ordered[start : start + sizes[split]]:
            result[example_id] = split
        start += sizes[split]
    return result


def anonymise(secret: str, user_id: int | None, *, length: int = 16) -> str | None:
    """Return ``sha256(secret + str(user_id))`` as hex, truncated to ``length`` characters."""
    if user_id is None:
        return None
    return hashlib.sha256(f"{secret}{user_id}".encode()).hexdigest()[:length]


@dataclass(frozen=True)
class Agreement:
    """Inter-rater agreement over one round's validations.

    ``fleiss_kappa``: Fleiss (1971) κ over the items that have ``raters_per_item`` ratings
    (each item's first ``raters_per_item`` ratings, since Fleiss' κ needs a constant number of
    raters). ``krippendorff_alpha``: Krippendorff's α, nominal, over every item with at least
    two ratings (it allows a varying number of raters). ``n_items``/``n_ratings``: items with
    at least two ratings and their ratings. ``reason``: why a figure is None, else None.
    """

    fleiss_kappa: float | None
    krippendorff_alpha: float | None
    n_items: int
    n_ratings: int
    raters_per_item: int | None = None
    fleiss_items: int = 0
    categories: tuple[str, ...] = ()
    reason: str | None = None


def agreement_from_ratings(ratings_per_item: Iterable[Sequence[str]], *, categories: Sequence[str] | None = None) -> Agreement:
    """Return ``Agreement`` for ``ratings_per_item`` (one list of category labels per item, in
    recorded order).

    Fleiss' κ: statsmodels ``fleiss_kappa`` on the items × categories count table
    (Fleiss, "Measuring nominal scale agreement among many raters", Psychological Bulletin
    1971). The number of raters per item is the most common count among items with at
    least two ratings (ties: the larger); items with more ratings contribute their first
    ones, items with fewer are left out. Krippendorff's α: the ``krippendorff`` package,
    nominal level, from the value counts of every item with at least two ratings
    (Krippendorff, "Content Analysis", 2004, ch. 11).

    Too little data gives None with a reason: fewer than two items with two or more
    ratings, or every rating in one category (agreement by chance is then 1 and both
    coefficients are undefined).
    """
    items = [list(r) for r in ratings_per_item if len(r) >= 2]
    cats = tuple(categories) if categories else tuple(sorted({c for r in items for c in r}))
    n_ratings = sum(len(r) for r in items)
    if len(items) < 2:
        return Agreement(None, None, len(items), n_ratings, categories=cats,
                         reason=f"needs at least 2 examples with 2 or more validations (has {len(items)})")
    used = {c for r in items for c in r}
    if len(used) < 2:
        return Agreement(None, None, len(items), n_ratings, categories=cats,
                         reason=f"every validation says '{next(iter(used))}': agreement is undefined")
    index = {c: i for i, c in enumerate(cats)}
    counts = np.zeros((len(items), len(cats)))
    for row, ratings in enumerate(items):
        for c in ratings:
            counts[row, index[c]] += 1
    alpha = float(krippendorff.alpha(value_counts=counts, level_of_measurement="nominal"))

    per_item = Counter(len(r) for r in items)
    k = max(per_item, key=lambda n: (per_item[n], n))
    fleiss_rows = [r[:k] for r in items if len(r) >= k]
    table = np.zeros((len(fleiss_rows), len(cats)))
    for row, ratings in enumerate(fleiss_rows):
        for c in ratings:
            table[row, index[c]] += 1
    reason = None
    kappa = None
    if len(fleiss_rows) < 2:
        reason = f"Fleiss' κ needs at least 2 examples with {k} validations"
    elif np.count_nonzero(table.sum(axis=0)) < 2:
        reason = "Fleiss' κ: every counted validation has the same label"
    else:
        kappa = float(_statsmodels_fleiss_kappa(table, method="fleiss"))
    return Agreement(kappa, alpha, len(items), n_ratings, raters_per_item=k,
                     fleiss_items=len(fleiss_rows), categories=cats, reason=reason)
