"""The arena leaderboard of a task whose examples are people's judgments of generative models
(``tasks/kinds/open_ended.py``): read from validated judgments, ranked by ``leaderboard/arena.py``.

One selector, ``arena_board(task)``, for the page (``/tasks/<code>/arena/``) and the API
(``GET /api/v1/tasks/<code>/arena``):

- **Ratings.** Every *validated* pairwise judgment (``validation.selectors.validated_examples``:
  confirmed by the validators' consensus or an owner, not retracted; overturned ones are left
  out) is one battle, read through the kind's ``spec.battle``: A wins, B wins, or a tie ("both
  bad" is a tie, ``leaderboard/arena.py``'s platform rule). ``rank_arena`` fits Davidson's
  tie model and gives Elo-scale ratings with 95% bootstrap intervals, rank ranges, the
  win-rate matrix and battles per model.
- **Generative vMER** per model: of the examples in which the model answered
  (``spec.answering_models``; retracted ones left out), the share whose judgment marked it
  failing (``spec.judged_failures``) *and* was validated; overall and per failure category of
  the task's rubric. A failure the annotator claimed but validators have not confirmed does not
  count, as for every vMER.
- **Agreement per rubric item**: Fleiss' κ and Krippendorff's α of the validators' verdicts
  (``validation.calculations.agreement_from_ratings``) over the judgments of each failure
  category, of "holds" (no failure claimed) and of pairwise preferences.

The board is cached (Django cache) under the task's validation and example counts, so a page view
after no change recomputes nothing.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from django.core.cache import cache
from django.db.models import Count, Max, Q

from annotation.models import Example, ValidationState
from dynabench.errors import RuleError
from leaderboard.arena import A_WINS, B_WINS, TIE, rank_arena
from tasks.kinds.open_ended import categories
from tasks.models import MLModel
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
    ``models``), ``nu`` (the fitted tie parameter), ``battles`` (validated pairwise judgments),
    ``pending`` (pairwise judgments not validated yet), ``failures`` (per model: answered,
    validated failures, vMER, ``by_category`` {category label: rate}), ``categories`` (labels in
    rubric order), ``agreement`` ({rubric item: ``Agreement``})."""

    rows: list
    models: list
    win_rate: list
    nu: float
    battles: int
    pending: int
    resamples: int
    failures: list
    categories: list
    agreement: dict


def _name(model: MLModel) -> str:
    return f"Anonymous model {model.pk}" if model.anonymous else model.name


def _key(task) -> str:
    stamp = Validation.objects.filter(example__round__task=task).aggregate(n=Count("id"), last=Max("id"), at=Max("created_at"))
    examples = Example.objects.filter(round__task=task).aggregate(n=Count("id"), last=Max("id"), kept=Count("id", filter=~_RETRACTED),
                                                                  at=Max("created_at"))
    parts = [stamp["n"], stamp["last"], stamp["at"], examples["n"], examples["last"], examples["kept"], examples["at"]]
    return f"arena-board:{task.pk}:{task.version}:" + ":".join(str(p) for p in parts).replace(" ", "T")




def arena_board(task, *, resamples: int = RESAMPLES) -> ArenaBoard:
    """The task's ``ArenaBoard`` (module docstring), cached until its validations or examples change.
    Raises ``RuleError`` ``no_arena`` (404) for a task whose kind collects no judgments."""
    if not task.spec.conversational:
        raise RuleError("no_arena", f"{task.name} collects no judgments of generative answers, so it has no arena.", status_code=404)
    key = f"{_key(task)}:{resamples}"
    board = cache.get(key)
    if board is None:
        board = _compute(task, resamples=resamples)
        cache.set(key, board, timeout=24 * 3600)
    return board


def _compute(task, *, resamples: int) -> ArenaBoard:
    spec, config = task.spec, task.config
    cats = categories(config)
    validated = validated_examples(task=task)
    validated_ids = {v.example.pk for v in validated}
    battles = [b for v in validated if (b := spec.battle(config, v.target, v.example.model_output)) is not None]
    answered, failed = defaultdict(int), defaultdict(lambda: defaultdict(int))
    pending = 0
    for example in Example.objects.filter(round__task=task, retracted=False).only("id", "target", "model_output", "validation_state"):
        for model_id in spec.answering_models(config, example.model_output):
            answered[model_id] += 1
        if example.pk in validated_ids:
            for model_id, category in spec.judged_failures(config, example.target, example.model_output):
                failed[model_id][category] += 1
        elif example.validation_state == ValidationState.PENDING and spec.battle(config, example.target, example.model_output):
            pending += 1
    ids = sorted(set(answered) | {m for b in battles for m in b[:2]})
    models = {m.pk: m for m in MLModel.objects.filter(pk__in=ids)}
    ids = [i for i in ids if i in models]
    index = {model_id: k for k, model_id in enumerate(ids)}
    named = [{"id": i, "name": _name(models[i])} for i in ids]
    kept = [b for b in battles if b[0] in index and b[1] in index]
    result = rank_arena(
        np.array([index[b[0]] for b in kept], dtype=int), np.array([index[b[1]] for b in kept], dtype=int),
        np.array([OUTCOMES[b[2]] for b in kept], dtype=int), models=named, resamples=resamples if kept else 0,
    )
    win_rate = [[None if np.isnan(x) else round(float(x), 4) for x in row] for row in result.win_rate]
    failures = []
    for model_id in ids:
        n = answered.get(model_id, 0)
        total = sum(failed[model_id].values())
        failures.append({
            "model": named[index[model_id]], "answered": n, "validated_failures": total,
            "vmer": total / n if n else None,
            "by_category": {label: (failed[model_id].get(name, 0) / n if n else None) for name, label in cats.items()},
        })
    return ArenaBoard(rows=result.rows, models=named, win_rate=win_rate, nu=result.nu, battles=result.battles, pending=pending,
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
