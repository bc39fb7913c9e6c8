"""The arena leaderboard of a task whose examples are people's judgments of generative models
(``tasks/kinds/open_ended.py``): read from validated judgments, ranked by ``leaderboard/arena.py``.

One selector, ``arena_board(task)``, for the page (``/tasks/<code>/arena/``) and the API
(``GET /api/v1/tasks/<code>/arena``):

- **Ratings.** Every *validated* pairwise judgment (``validation.selectors.validated_examples``:
  confirmed by the validators' consensus or an owner, not retracted; overturned ones are left
  out) is one battle, read through the kind's ``spec.battle``: A wins, B wins, or a tie ("both
  bad" is a tie, ``leaderboard/arena.py``'s platform rule). ``rank_arena`` fits Bradley-Terry
  on the decisive battles (ties are counted and resampled but move no rating,
  ``leaderboard/arena.py``) and gives Elo-scale ratings with 95% bootstrap intervals, rank
  ranges, the win-rate matrix, battles per model and the share of ties.
- **Generative vMER** per model: of the judged examples (conversations and comparisons) in
  which the model answered (``spec.answering_models``; retracted ones left out), the share whose
  judgment marked it failing (``spec.judged_failures``) *and* was validated; overall and per
  failure category of the task's rubric. The judgment is of the whole example, so the example
  is the unit; beside it, ``answered`` counts the answers the model gave (``spec.answer_counts``:
  one per model in a comparison, one per assistant turn in a conversation). A failure the annotator claimed but validators have not confirmed does not
  count, as for every vMER.
- **Agreement per rubric item**: Fleiss' κ and Krippendorff's α of the validators' verdicts
  (``validation.calculations.agreement_from_ratings``) over the judgments of each failure
  category, of "holds" (no failure claimed) and of pairwise preferences.

**Built by a job, read from the cache.** The bootstrap takes seconds, so no request computes the
board: ``rebuild_arena_board(task_id)`` (the RQ job ``leaderboard.jobs.rebuild_arena_board`` on the
``default`` queue, as the Dynascore leaderboard's ``recompute_leaderboard``) computes it and keeps
it in the Django cache with the stamp of its inputs (the task's version and its validations' and
examples' counts, last ids and times) and when it was computed. The job is enqueued when a judgment
settles (``tasks.signals.example_settled``, ``leaderboard/apps.py``) and by a read that finds the
stamp changed (a vote that settled nothing, a new or retracted judgment) or no board at all.
``cached_arena_board(task)`` is the read: the board as of its computation (or none yet), and
whether a newer one is being computed.

**Published models only.** A model that is not published is on no public board, the arena included,
by the Dynascore leaderboard's rule (``leaderboard.selectors.published_models``): the board ranks
the task's published models on the battles between them, and counts judgments and failures for
them alone (``public_names``, an anonymous model as "Anonymous model <id>"). The published models'
names are part of the board's stamp, so publishing, unpublishing or renaming one queues a rebuild,
and a board built before that change is not shown meanwhile if it names a model it no longer may.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from django.core.cache import cache
from django.db.models import Count, Max, Q
from django.utils import timezone

from annotation.models import Example, ValidationState
from dynabench.errors import RuleError
from leaderboard.arena import A_WINS, B_WINS, TIE, rank_arena
from leaderboard.queueing import enqueue_arena_board
from leaderboard.selectors import published_models
from tasks.kinds.open_ended import categories
from tasks.models import Task
from validation.calculations import agreement_from_ratings
from validation.models import Validation
from validation.selectors import validated_examples

RESAMPLES = 100
_RETRACTED = Q(retracted=True)
OUTCOMES = {"a": A_WINS, "b": B_WINS, "tie": TIE}


@dataclass(frozen=True)
class ArenaBoard:
    """What the arena page and API show: ``rows`` (``leaderboard.arena.ArenaRow`` with ``model``
    an ``{"id", "name"}`` dict, best first), ``win_rate`` (``[[share or None]]`` in the order of
    ``models``), ``tie_share`` (the share of battles that were ties or "both bad"), ``battles``
    (validated pairwise judgments), ``pending`` (pairwise judgments not validated yet),
    ``failures`` (per model: ``judged`` examples it answered in, ``answered`` answers it gave,
    validated failures, vMER = failures / judged, ``by_category`` {category label: rate}), ``categories`` (labels in
    rubric order), ``agreement`` ({rubric item: ``Agreement``})."""

    rows: list
    models: list
    win_rate: list
    tie_share: float
    battles: int
    pending: int
    resamples: int
    failures: list
    categories: list
    agreement: dict


def public_names(task) -> dict[int, str]:
    """``{model id: name}`` of the task's models that a public board may show: its published models
    (``leaderboard.selectors.published_models``), an anonymous one as "Anonymous model <id>". One query."""
    return {pk: f"Anonymous model {pk}" if m["anonymous"] else m["name"] for pk, m in published_models(task).items()}


@dataclass(frozen=True)
class CachedArena:
    """What a read of the arena finds: ``board`` (``ArenaBoard``, or ``None`` before the first
    build), ``computed_at`` (when that board was computed, aware ``datetime`` or ``None``) and
    ``computing`` (the judgments changed since, or there is no board yet: a rebuild is queued)."""

    board: ArenaBoard | None
    computed_at: datetime | None
    computing: bool


def judgments_stamp(task, *, names: dict[int, str] | None = None) -> str:
    """The inputs of the task's board in one string: it changes whenever a validation or an example
    is added, removed or retracted, the task's settings change, or a model is published, unpublished,
    renamed or made anonymous (``names``: ``public_names(task)`` when the caller has it)."""
    stamp = Validation.objects.filter(example__round__task=task).aggregate(n=Count("id"), last=Max("id"), at=Max("created_at"))
    examples = Example.objects.filter(round__task=task).aggregate(n=Count("id"), last=Max("id"), kept=Count("id", filter=~_RETRACTED),
                                                                  at=Max("created_at"))
    names = public_names(task) if names is None else names
    published = hashlib.sha1(json.dumps(sorted(names.items())).encode()).hexdigest()[:16]
    parts = [task.version, stamp["n"], stamp["last"], stamp["at"], examples["n"], examples["last"], examples["kept"], examples["at"],
             published]
    return ":".join(str(p) for p in parts).replace(" ", "T")


def _cache_key(task_id: int) -> str:
    return f"arena-board:v2:{task_id}"  # v2: boards fitted on decisive battles, with answers counted


def _check_arena(task) -> None:
    if not task.spec.conversational:
        raise RuleError("no_arena", f"{task.name} collects no judgments of generative answers, so it has no arena.", status_code=404)


def cached_arena_board(task) -> CachedArena:
    """The task's arena board as the last ``rebuild_arena_board`` left it (module docstring); when
    its inputs changed since, or there is none yet, a rebuild is enqueued (once: a queued one is
    not queued again) and ``computing`` is true. Raises ``RuleError`` ``no_arena`` (404) for a
    task whose kind collects no judgments. A previous board that names a model no longer published
    (or under another name) is not returned: ``board`` is then ``None`` until the rebuild. Reads three
    aggregates, the published models and one cache entry; computes nothing."""
    _check_arena(task)
    names = public_names(task)
    entry = cache.get(_cache_key(task.pk))
    if entry is not None and entry["stamp"] == judgments_stamp(task, names=names):
        return CachedArena(board=entry["board"], computed_at=entry["computed_at"], computing=False)
    enqueue_arena_board(task.pk)
    if entry is None or any(names.get(m["id"]) != m["name"] for m in entry["board"].models):
        # No board yet, or one that names a model no longer published (or under its old name): none until the rebuild.
        return CachedArena(board=None, computed_at=None, computing=True)
    return CachedArena(board=entry["board"], computed_at=entry["computed_at"], computing=True)


def rebuild_arena_board(task_id: int, *, resamples: int = RESAMPLES) -> str:
    """Compute the task's ``ArenaBoard`` and keep it in the cache with the stamp of the inputs it
    read (taken before reading them: a judgment added meanwhile makes the next read queue another
    build). The job ``leaderboard.jobs.rebuild_arena_board``; idempotent. Returns a summary."""
    task = Task.objects.filter(pk=task_id).first()
    if task is None or not task.spec.conversational:
        return f"task {task_id}: no arena to build"
    stamp = judgments_stamp(task)
    board = compute_arena_board(task, resamples=resamples)
    cache.set(_cache_key(task.pk), {"stamp": stamp, "board": board, "computed_at": timezone.now()}, timeout=None)
    return f"arena of {task.code}: {board.battles} battles, {len(board.models)} models"


def on_example_settled(sender, example_id, **kwargs) -> None:
    """Receiver of ``tasks.signals.example_settled`` (sent once the validation commits): a settled
    judgment of a task with an arena queues the board's rebuild."""
    task = Task.objects.filter(rounds__examples__pk=example_id).first()
    if task is not None and task.spec.conversational:
        enqueue_arena_board(task.pk)


def compute_arena_board(task, *, resamples: int = RESAMPLES) -> ArenaBoard:
    """The task's ``ArenaBoard`` (module docstring), computed now (seconds: the bootstrap refits
    ``resamples`` times): its published models, ranked on the battles between them. Only the job
    calls it; pages and the API read ``cached_arena_board``."""
    spec, config = task.spec, task.config
    cats = categories(config)
    validated = validated_examples(task=task)
    validated_ids = {v.example.pk for v in validated}
    battles = [b for v in validated if (b := spec.battle(config, v.target, v.example.model_output)) is not None]
    judged, answered, failed = defaultdict(int), defaultdict(int), defaultdict(lambda: defaultdict(int))
    pending = 0
    for example in Example.objects.filter(round__task=task, retracted=False).only("id", "target", "model_output", "validation_state"):
        for model_id in spec.answering_models(config, example.model_output):
            judged[model_id] += 1
        for model_id, n in spec.answer_counts(config, example.model_output).items():
            answered[model_id] += n
        if example.pk in validated_ids:
            for model_id, category in spec.judged_failures(config, example.target, example.model_output):
                failed[model_id][category] += 1
        elif example.validation_state == ValidationState.PENDING and spec.battle(config, example.target, example.model_output):
            pending += 1
    names = public_names(task)  # published models only: the others are on no public board
    ids = [i for i in sorted(set(judged) | set(answered) | {m for b in battles for m in b[:2]}) if i in names]
    index = {model_id: k for k, model_id in enumerate(ids)}
    named = [{"id": i, "name": names[i]} for i in ids]
    kept = [b for b in battles if b[0] in index and b[1] in index]
    result = rank_arena(
        np.array([index[b[0]] for b in kept], dtype=int), np.array([index[b[1]] for b in kept], dtype=int),
        np.array([OUTCOMES[b[2]] for b in kept], dtype=int), models=named, resamples=resamples if kept else 0,
    )
    win_rate = [[None if np.isnan(x) else round(float(x), 4) for x in row] for row in result.win_rate]
    failures = []
    for model_id in ids:
        n = judged.get(model_id, 0)
        total = sum(failed[model_id].values())
        failures.append({
            "model": named[index[model_id]], "judged": n, "answered": answered.get(model_id, 0), "validated_failures": total,
            "vmer": total / n if n else None,
            "by_category": {label: (failed[model_id].get(name, 0) / n if n else None) for name, label in cats.items()},
        })
    return ArenaBoard(rows=result.rows, models=named, win_rate=win_rate, tie_share=result.tie_share, battles=result.battles, pending=pending,
                      resamples=result.resamples, failures=failures, categories=list(cats.values()),
                      agreement=rubric_agreement(task))


def rubric_agreement(task) -> dict:
    """``{rubric item: Agreement}`` of the validators' verdicts (user mode, counted votes) on the
    judgments of each failure category, of "holds" and of pairwise preferences (a judgment with a
    failure counts under its category)."""
    cats = categories(task.config)
    rows = (Validation.objects.filter(example__round__task=task, example__retracted=False, mode=Validation.Mode.USER, counts=True)
            .order_by("example_id", "id").values_list("example_id", "label", "example__target"))
    per_item: dict[str, dict[int, list]] = defaultdict(lambda: defaultdict(list))
    for example_id, label, target in rows:
        target = target or {}
        if target.get("category"):
            item = cats.get(target["category"], target["category"])
        elif "preference" in target:
            item = "Pairwise preference"
        else:
            item = "Holds (no failure)"
        per_item[item][example_id].append(label)
    order = [*cats.values(), "Holds (no failure)", "Pairwise preference"]
    return {item: agreement_from_ratings(per_item[item].values(), categories=("correct", "incorrect", "flagged"))
            for item in order if item in per_item}
