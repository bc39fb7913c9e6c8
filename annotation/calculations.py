"""Pure arithmetic of AI help in writing examples (no ORM): the A/B arm, the edit distance from a
suggestion, bootstrap intervals of a mean, and the diversity of a set of texts."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np


def ab_arm(*, secret: str, user_id: int) -> str:
    """Return ``"assisted"`` or ``"control"`` for one worker in one round: the parity of the first byte
    of sha256(``secret``:``user_id``), where ``secret`` is the round's own (``Round.secret``). The same
    worker always lands in the same arm of a round, arms are about half each, and neither the worker
    nor the owner chooses it (a randomised split, as in Bartolo et al., NAACL 2022)."""
    digest = hashlib.sha256(f"{secret}:{user_id}".encode()).digest()
    return "assisted" if digest[0] % 2 == 0 else "control"


def edit_distance(a: str, b: str) -> int:
    """Return the Levenshtein distance (insertions, deletions, substitutions, each 1) between ``a`` and
    ``b``, in characters (Levenshtein, 1966; the Wagner-Fischer dynamic programme, O(len(a)·len(b)) time,
    O(len(b)) memory)."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def fields_distance(suggested: dict, submitted: dict, names: list[str]) -> int:
    """Return the sum over ``names`` of ``edit_distance`` between the suggested and the submitted text."""
    return sum(edit_distance(str(suggested.get(n, "") or ""), str(submitted.get(n, "") or "")) for n in names)


@dataclass(frozen=True)
class Interval:
    """A mean with its 95 % percentile bootstrap interval; ``n`` values (all None when ``n`` is 0)."""

    n: int
    mean: float | None
    low: float | None
    high: float | None


def mean_interval(values, *, n_resamples: int = 1000, seed: int = 0, level: float = 0.95) -> Interval:
    """Return the mean of ``values`` (numbers; None and NaN left out) with its percentile bootstrap
    interval: the values resampled with replacement ``n_resamples`` times, the ``(1 − level)/2`` and
    ``(1 + level)/2`` quantiles of the resampled means (Efron & Tibshirani, "An Introduction to the
    Bootstrap", 1993, ch. 13). A fixed ``seed`` makes a page show the same interval twice. A single
    value's interval is the value itself."""
    data = np.asarray([float(v) for v in values if v is not None and v == v], dtype=float)
    if data.size == 0:
        return Interval(0, None, None, None)
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(data.size, np.full(data.size, 1.0 / data.size), size=n_resamples)
    means = counts @ data / data.size
    tail = (1.0 - level) / 2
    return Interval(int(data.size), float(data.mean()), float(np.quantile(means, tail)), float(np.quantile(means, 1 - tail)))


def distinct_ngrams(texts: list[str], n: int) -> float | None:
    """Return distinct-n: distinct word n-grams over all word n-grams of ``texts`` (lower-cased,
    split on white space), in [0, 1]; None when the texts hold none (Li et al., "A Diversity-Promoting
    Objective Function for Neural Conversation Models", NAACL 2016)."""
    grams = [tuple(words[i:i + n]) for words in (t.lower().split() for t in texts) for i in range(len(words) - n + 1)]
    return len(set(grams)) / len(grams) if grams else None


def self_bleu(texts: list[str], *, limit: int = 200) -> float | None:
    """Return self-BLEU in [0, 100]: the mean sentence BLEU (sacreBLEU, exponential smoothing) of each text
    against all the others as references; lower is more diverse (Zhu et al., "Texygen", SIGIR 2018).
    At most the first ``limit`` texts are used (the cost grows with the square of their number); None
    for fewer than two texts."""
    from sacrebleu.metrics import BLEU

    texts = [t for t in texts if t and t.strip()][:limit]
    if len(texts) < 2:
        return None
    bleu = BLEU(effective_order=True)
    scores = [bleu.sentence_score(t, texts[:i] + texts[i + 1:]).score for i, t in enumerate(texts)]
    return float(np.mean(scores))
