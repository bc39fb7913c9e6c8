"""Pure functions of validation: consensus, splits, agreement, anonymised ids. No ORM here.

Every surface (the review queue, the owner queue, imports, ``reconcile_counters``, the
benchmark's recomputation) derives an example's state with ``derive_state``, so the rule
exists once.
"""

import hashlib
from collections import Counter
from decimal import ROUND_HALF_UP, Decimal
from dataclasses import dataclass
from typing import Iterable, Sequence

import krippendorff
import numpy as np

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


@dataclass(frozen=True)
class ConsensusPolicy:
    """How many votes settle an example (the task's adaptive validation budget).

    ``needed``: votes of one label that settle it (``validations_needed``, default 3).
    ``early_agreement``: when the first this-many counted votes all agree, they settle it at
    once (``validation_early_agreement``; None: off). ``max_votes``: the budget; an example
    that reaches it unsettled stops collecting votes and waits for an owner
    (``validation_max_votes``, default ``2 * needed - 1``: "3 of 5" as Dynabench ran it,
    Kiela et al. 2021, section 3).
    """

    needed: int = 3
    early_agreement: int | None = None
    max_votes: int = 5

    @classmethod
    def from_config(cls, config: dict) -> "ConsensusPolicy":
        """Read the policy from a task config (``tasks/kinds/config.py`` checks the keys and ranges)."""
        needed = int(config.get("validations_needed", 3))
        early = config.get("validation_early_agreement")
        return cls(
            needed=needed,
            early_agreement=int(early) if early else None,
            max_votes=int(config.get("validation_max_votes") or 2 * needed - 1),
        )


def derive_state(labels_and_modes: Iterable[tuple[str, str]], needed: "int | ConsensusPolicy") -> str:
    """Return the example's ``ValidationState`` value from its counted validations.

    ``labels_and_modes``: ``(label, mode)`` pairs of the validations that count toward
    consensus (``Validation.counts``), in the order they were recorded, label in
    ``correct|incorrect|flagged``, mode ``user|owner``. ``needed``: a ``ConsensusPolicy``,
    or the task's ``validations_needed`` (>= 1) alone.

    Rule (DESIGN.md "vMER"; Kiela et al., "Dynabench", NAACL 2021, section 3): the latest
    owner-mode validation decides outright. Otherwise, with early agreement on, the first
    ``early_agreement`` user validations settle the example when they all carry the same
    label; else the first label whose user validations reach ``needed`` settles it:
    ``correct`` -> verified correct, ``incorrect`` -> verified incorrect, ``flagged`` ->
    flagged. Else it stays pending.
    """
    policy = needed if isinstance(needed, ConsensusPolicy) else ConsensusPolicy(needed=needed, max_votes=max(1, 2 * needed - 1))
    if policy.needed < 1:
        raise ValueError(f"needed must be at least 1, got {policy.needed}")
    owner_label = None
    settled = None
    counts: Counter = Counter()
    first: list[str] = []
    for label, mode in labels_and_modes:
        if label not in _STATE_FOR_LABEL:
            raise ValueError(f"unknown validation label {label!r}")
        if mode == OWNER:
            owner_label = label
            continue
        counts[label] += 1
        first.append(label)
        if settled is None and counts[label] >= policy.needed:
            settled = label
        if (settled is None and policy.early_agreement and len(first) == policy.early_agreement
                and len(set(first)) == 1):
            settled = label
    decisive = owner_label or settled
    return _STATE_FOR_LABEL[decisive] if decisive else ValidationState.PENDING


def saved_votes(*, settled: int, votes_used: int, max_votes: int) -> dict[str, float | int]:
    """Return the validator work the adaptive budget saved.

    ``settled``: examples settled; ``votes_used``: the counted votes they took (each capped at
    ``max_votes``); a fixed budget would have collected ``max_votes`` on each. Returns
    ``{"settled", "votes_used", "votes_fixed", "votes_saved", "share_saved"}``
    (``share_saved`` in 0..1; 0 when nothing settled).
    """
    fixed = max_votes * settled
    return {
        "settled": settled,
        "votes_used": votes_used,
        "votes_fixed": fixed,
        "votes_saved": fixed - votes_used,
        "share_saved": (fixed - votes_used) / fixed if fixed else 0.0,
    }


CENT = Decimal("0.01")


def worker_pay(*, examples: int, validations: int, fooling: int, per_example: Decimal, per_validation: Decimal,
               bonus_per_fooling: Decimal) -> tuple[Decimal, Decimal]:
    """Return ``(base, bonus)`` a worker earned, each rounded half-up to the cent.

    ``base = examples × per_example + validations × per_validation`` (accepted examples and
    accepted validations); ``bonus = fooling × bonus_per_fooling`` (validated examples that
    fooled the model). Amounts are ``Decimal`` in the round's currency.
    """
    base = Decimal(examples) * Decimal(per_example) + Decimal(validations) * Decimal(per_validation)
    bonus = Decimal(fooling) * Decimal(bonus_per_fooling)
    return base.quantize(CENT, ROUND_HALF_UP), bonus.quantize(CENT, ROUND_HALF_UP)


def transfer_pay(*, earning: int, amount: Decimal) -> Decimal:
    """Return the transfer bonus of a worker: ``earning × amount``, rounded half-up to the cent.
    ``earning``: their validated examples that fooled at least the round's ``k`` other models
    (``validation.transfer_selectors.transfer_earners``); ``amount``: the round's bonus per such example."""
    return (Decimal(earning) * Decimal(amount)).quantize(CENT, ROUND_HALF_UP)


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


def small_split_plan(sizes: dict[str, int], *, min_items: int) -> dict[str, str]:
    """Return where the scoring splits go when those below ``min_items`` items are merged, as
    ``{split: split it joins}``: ``{}`` when neither dev nor test is below it; ``{"dev": "test"}``
    when dev and test together reach it (one test set instead of two small ones); else
    ``{"dev": "train", "test": "train"}`` (too few for any scoring set: everything is training data)."""
    if all(sizes[s] >= min_items for s in ("dev", "test")):
        return {}
    if sizes["dev"] + sizes["test"] >= min_items:
        return {"dev": "test"}
    return {"dev": "train", "test": "train"}


def merged_sizes(sizes: dict[str, int], plan: dict[str, str]) -> dict[str, int]:
    """Return ``sizes`` after the merges of ``plan`` (``small_split_plan``)."""
    merged = dict(sizes)
    for split, into in plan.items():
        merged[into] += merged[split]
        merged[split] = 0
    return merged


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
        # Imported here: statsmodels pulls in pandas and scipy.stats, 5 s of import on loaded cores,
        # which every Django process (web, worker, each manage.py command) paid at start-up.
        from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

        kappa = float(statsmodels_fleiss_kappa(table, method="fleiss"))
    return Agreement(kappa, alpha, len(items), n_ratings, raters_per_item=k,
                     fleiss_items=len(fleiss_rows), categories=cats, reason=reason)


def shares_entry(a: "frozenset[str] | set[str]", b: "frozenset[str] | set[str]") -> bool:
    """True when two workers' entry keys (hashed client addresses of their study entries)
    overlap: for consensus they are one worker. Empty sets (accounts that are not crowd
    accounts) never overlap."""
    return bool(a and b and set(a) & set(b))


@dataclass(frozen=True)
class CollusionFlag:
    """Two validators who agree with each other far more often than with anyone else.

    ``a``/``b``: validator ids (``a < b``); ``shared``: examples both voted on;
    ``pair_agreement``: share of those with the same label (0..1); ``baseline``: the higher of
    the two validators' agreement with gold and with other validators (0..1);
    ``comparisons``: how many comparisons the baseline rests on.
    """

    a: int
    b: int
    shared: int
    pair_agreement: float
    baseline: float
    comparisons: int


def collusion_flags(
    votes: Iterable[tuple[int, int, str]],
    gold_checks: Iterable[tuple[int, bool]] = (),
    *,
    min_shared: int = 5,
    min_pair_agreement: float = 0.9,
    margin: float = 0.3,
) -> list[CollusionFlag]:
    """Return the pairs of validators who agree with each other far more than with gold or others.

    ``votes``: ``(example_id, validator_id, label)`` of counted-or-not user votes (not gold
    checks); ``gold_checks``: ``(validator_id, right)`` per gold check answered.

    For each pair with at least ``min_shared`` examples in common: ``pair_agreement`` = share
    of those examples where their labels match. Each validator's baseline is the higher of
    their gold accuracy and their agreement with validators other than the partner on the same
    examples (each where defined), so a validator who matches gold is never flagged for
    agreeing with another who does. Flagged when ``pair_agreement >= min_pair_agreement`` and
    ``pair_agreement - max(baseline_a, baseline_b) >= margin``: the pair agrees far more with
    each other than either does with gold or with others. A
    validator with no comparison outside the pair has baseline 0 (nothing vouches for them).
    Sorted by the gap, largest first. Pure: no ORM.

    Rationale: honest validators agree with each other about as often as each agrees with gold
    and with the crowd; a pair that matches each other 90%+ while matching everyone else 60%
    or less labels by arrangement, not by the example (the pattern issue 28 describes).
    """
    by_example: dict[int, dict[int, str]] = {}
    for example_id, validator_id, label in votes:
        by_example.setdefault(example_id, {})[validator_id] = label
    pair_same: Counter = Counter()
    pair_total: Counter = Counter()
    # agree[(v, partner_excluded)] is built from per-validator, per-other comparisons.
    with_other_same: Counter = Counter()
    with_other_total: Counter = Counter()
    for labels in by_example.values():
        voters = sorted(labels)
        for i, a in enumerate(voters):
            for b in voters[i + 1:]:
                same = labels[a] == labels[b]
                pair_total[(a, b)] += 1
                pair_same[(a, b)] += same
                with_other_total[(a, b)] += 1
                with_other_total[(b, a)] += 1
                with_other_same[(a, b)] += same
                with_other_same[(b, a)] += same
    gold_right: Counter = Counter()
    gold_total: Counter = Counter()
    for validator_id, right in gold_checks:
        gold_total[validator_id] += 1
        gold_right[validator_id] += bool(right)
    totals_by_validator: Counter = Counter()
    same_by_validator: Counter = Counter()
    for (v, _other), n in with_other_total.items():
        totals_by_validator[v] += n
        same_by_validator[v] += with_other_same[(v, _other)]

    def baseline(v: int, partner: int) -> tuple[float, int]:
        others_total = totals_by_validator[v] - with_other_total[(v, partner)]
        others_same = same_by_validator[v] - with_other_same[(v, partner)]
        rates = [same / total for same, total in ((others_same, others_total), (gold_right[v], gold_total[v])) if total]
        return (max(rates) if rates else 0.0), others_total + gold_total[v]

    flags = []
    for (a, b), shared in pair_total.items():
        if shared < min_shared:
            continue
        agreement = pair_same[(a, b)] / shared
        (base_a, n_a), (base_b, n_b) = baseline(a, b), baseline(b, a)
        base = max(base_a, base_b)
        if agreement >= min_pair_agreement and agreement - base >= margin:
            flags.append(CollusionFlag(a=a, b=b, shared=shared, pair_agreement=agreement, baseline=base, comparisons=n_a + n_b))
    return sorted(flags, key=lambda f: (-(f.pair_agreement - f.baseline), f.a, f.b))
