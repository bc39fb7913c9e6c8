"""A round's near-duplicate rule: what the create page shows before submitting, and the check
``create_example`` makes (every surface: the HTMX page, the REST API, the sandbox's callers).

Two examples are near-duplicates when the cosine similarity of their embeddings
(``annotation/diversity/encoder.py``) is at least the round's ``threshold`` (``RoundSimilarity``,
0.9 by default). In ``warn`` mode the create page says "close to N examples in this round (M of
yours)" and lists the annotator's own closest examples (never anyone else's text); in ``refuse``
mode ``check_near_duplicate`` refuses the example (``RuleError`` ``near_duplicate``, a 400 on the
API). Neighbours come from the task's index (``annotation/diversity/index.py``), ``NEIGHBOURS`` at
a time, so N is at most ``NEIGHBOURS`` (``Closeness.capped`` says so).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np
from django.core.cache import cache
from django.db import transaction

from annotation.diversity import embeddings, encoder as encoders, index
from annotation.diversity_models import RoundSimilarity, SimilarityMode
from annotation.error_codes import AnnotationErrorCode as Code
from annotation.models import Example
from dynabench.errors import NotAllowed, RuleError

NEIGHBOURS = 100
"""Nearest neighbours read from the task's index per check."""
OWN_SHOWN = 3
"""The annotator's own closest examples shown on the create page."""


RULE_CACHE_S = 300


def _rule_key(round_id: int) -> str:
    return f"diversity:rule:{round_id}"


def round_rule(round) -> RoundSimilarity:
    """Return the round's rule, or an unsaved default (``off`` at ``RoundSimilarity.DEFAULT_THRESHOLD``).

    Read through the cache (``RULE_CACHE_S``; ``set_round_rule`` replaces the entry), so the create page
    and the submission pay no database statement for it (``annotation/tests/test_submit_statement_budget.py``)."""
    cached = cache.get(_rule_key(round.pk))
    if cached is None:
        rule = RoundSimilarity.objects.filter(round=round).first() or RoundSimilarity(round=round)
        cache.set(_rule_key(round.pk), (rule.threshold, rule.mode), RULE_CACHE_S)
        return rule
    threshold, mode = cached
    return RoundSimilarity(round=round, threshold=threshold, mode=mode)


def set_round_rule(*, round, acting_user, threshold: float, mode: str) -> RoundSimilarity:
    """Set ``round``'s near-duplicate ``threshold`` (cosine, 0 < t ≤ 1) and ``mode`` (off / warn / refuse).

    Turning a check on queues the embedding of the task's examples not embedded yet
    (``embeddings.queue_embedding``), so the round's earlier examples count. Raises ``NotAllowed``
    ``not_task_owner`` unless ``acting_user`` owns the task, ``RuleError`` ``invalid_similarity_rule``.
    """
    if not round.task.is_owner(acting_user):
        raise NotAllowed("not_task_owner", f"only owners of {round.task.code} may set the near-duplicate rule")
    try:
        threshold = float(threshold)
    except (TypeError, ValueError):
        threshold = float("nan")
    if not 0 < threshold <= 1:
        raise RuleError(Code.INVALID_SIMILARITY_RULE, "The threshold is a cosine similarity above 0 and at most 1.", field="threshold")
    if mode not in SimilarityMode.values:
        raise RuleError(Code.INVALID_SIMILARITY_RULE, f"The mode is one of {', '.join(SimilarityMode.values)}.", field="mode")
    rule, _ = RoundSimilarity.objects.update_or_create(round=round, defaults={"threshold": threshold, "mode": mode})
    transaction.on_commit(lambda: cache.delete(_rule_key(round.pk)))
    cache.delete(_rule_key(round.pk))
    if mode != SimilarityMode.OFF:
        embeddings.queue_embedding(round.task_id)
    return rule


@dataclass
class Closeness:
    """How close a text is to a round's examples: ``in_round`` examples (not retracted) at or above
    ``threshold``, ``mine`` of them the annotator's; ``own_closest`` the annotator's closest examples
    as ``(example_id, text, cosine)`` (at most ``OWN_SHOWN``, most similar first, any similarity);
    ``capped`` when every neighbour read was that close (there may be more); ``vector`` the text's embedding."""

    threshold: float
    in_round: int = 0
    mine: int = 0
    own_closest: list = field(default_factory=list)
    capped: bool = False
    vector: np.ndarray | None = None


VECTOR_CACHE_S = 600
"""Seconds a text's embedding stays in the cache: the create page's readout embeds the draft while the
annotator types, and the submission of the same text reads the vector back instead of running the
encoder again, so the check adds an index query, not a forward pass, to the submission."""


def text_vector(encoder, text: str) -> np.ndarray:
    """``encoder``'s embedding of ``text`` (float32, shape ``(dim,)``), from the cache when the same
    encoder (by weights' sha256) embedded the same text in the last ``VECTOR_CACHE_S`` seconds."""
    key = f"diversity:vector:{encoder.sha256[:16]}:{hashlib.sha256(text.encode()).hexdigest()}"
    cached = cache.get(key)
    if cached is not None:
        return np.frombuffer(cached, dtype="<f4").copy()
    vector = encoder.embed([text])[0]
    cache.set(key, vector.astype("<f4").tobytes(), VECTOR_CACHE_S)
    return vector


def closeness(*, round, user, text: str, threshold: float | None = None) -> Closeness:
    """Embed ``text`` and compare it with the round's examples (``Closeness``). ``threshold`` defaults to
    the round's rule. The annotator sees counts and their own texts only."""
    if threshold is None:
        threshold = round_rule(round).threshold
    encoder = encoders.get_encoder()
    vector = text_vector(encoder, text)
    found = index.task_index(round.task_id, encoder_sha256=encoder.sha256).search(vector, k=NEIGHBOURS)
    if not found:
        return Closeness(threshold=threshold, vector=vector)
    similarity = dict(found)
    rows = (Example.objects.filter(pk__in=similarity, round=round, retracted=False)
            .select_related("round__task").only("pk", "author_id", "input", "round__task__kind", "round__task__config"))
    result = Closeness(threshold=threshold, vector=vector, capped=len(found) == NEIGHBOURS and found[-1][1] >= threshold)
    own = []
    for example in rows:
        close = similarity[example.pk] >= threshold
        result.in_round += close
        if example.author_id == user.pk:
            result.mine += close
            own.append((example.pk, embeddings.written_text(example), similarity[example.pk]))
    result.own_closest = sorted(own, key=lambda row: -row[2])[:OWN_SHOWN]
    return result


def check_near_duplicate(*, round, user, task, example_input: dict) -> np.ndarray | None:
    """Step of ``create_example``: under a rule that is not ``off``, embed the annotator's text and,
    in ``refuse`` mode, refuse it when an example of the round is within the threshold.

    Returns the text's embedding (float32, shape ``(dim,)``; stored with the example) or None (rule
    off, or no written text). Raises ``RuleError`` ``near_duplicate`` naming the first input field.
    """
    rule = round_rule(round)
    if rule.mode == SimilarityMode.OFF:
        return None
    text = task.spec.written_text(task.config, example_input)
    if not text:
        return None
    close = closeness(round=round, user=user, text=text, threshold=rule.threshold)
    if rule.mode == SimilarityMode.REFUSE and close.in_round:
        field_name = next((f["name"] for f in task.config.get("input_fields", [])), None)
        more = "+" if close.capped else ""
        raise RuleError(
            Code.NEAR_DUPLICATE,
            f"Your example is a near-copy of {close.in_round}{more} example(s) already in this round "
            f"({close.mine} of yours): cosine similarity at or above {rule.threshold:.2f}. Write something new.",
            field=field_name,
        )
    return close.vector
