"""The steps of scoring a model beyond the task kind's metrics: predicting in chunks, robustness
and fairness on perturbed inputs, and the per-item results stored on a run for bootstrap intervals.
Per-tag scores are ``tasks.metrics.tags``.

The metrics themselves (accuracy, macro-F1, SQuAD F1/EM) and the per-item scores are the task
kind's (``task.spec.score``, ``tasks/kinds/``). Robustness and fairness follow Dynaboard
(Ma et al., NeurIPS 2021): the performance metric of the model's predictions on perturbed
inputs measured against its own predictions on the originals, over the items that had a
perturbation (``leaderboard/perturbations.py``).
"""

from __future__ import annotations

import io
import json
import math
import time

import numpy as np

from leaderboard.bootstrap import ItemResults
from leaderboard.perturbations import fairness_variant, robustness_variant


def predict(predictor, inputs: list[dict], beat, start: float, span: float) -> tuple[list[dict], float]:
    """Predict ``inputs`` in large chunks (the registry batches and length-sorts inside); return outputs, seconds.

    ``beat(progress)`` is called after each chunk with a progress in ``[start, start + span]``.
    """
    outputs: list[dict] = []
    chunk = max(512, math.ceil(len(inputs) / 10))
    elapsed = 0.0
    for i in range(0, len(inputs), chunk):
        t0 = time.perf_counter()
        outputs.extend(predictor.predict(inputs[i:i + chunk]))
        elapsed += time.perf_counter() - t0
        beat(start + span * min(1.0, (i + chunk) / max(len(inputs), 1)))
    return outputs, elapsed


def consistency(task, original: list[dict], perturbed: list[dict]) -> float | None:
    """The perf metric of ``perturbed`` outputs measured against the ``original`` outputs (0..1); None when none."""
    if not perturbed:
        return None
    return task.spec.consistency(task.config, original, perturbed)


def perturbed_outputs(task, predictor, items, inputs, beat) -> tuple[list[dict | None], list[dict | None], int]:
    """The model's outputs on the robustness and the fairness variant of each item (None where an item
    has no such variant, ``leaderboard/perturbations.py``), plus the inferences run.

    Each variant depends on its item alone, so a shard of a dataset gets the same variants as the
    whole dataset.
    """
    fields = task.spec.perturbable_fields(task.config)
    variants: list[list[dict | None]] = []
    inferences = 0
    makers = (lambda f, k: (robustness_variant(f, key=k) or (None, None))[1], lambda f, k: fairness_variant(f, key=k))
    for index, make in enumerate(makers):
        which, batch = [], []
        for i, (item, inp) in enumerate(zip(items, inputs)):
            variant = make({f: inp.get(f, "") for f in fields}, item["uid"])
            if variant is not None:
                which.append(i)
                batch.append({**inp, **variant})
        perturbed, _ = predict(predictor, batch, beat, 0.6 + 0.2 * index, 0.2) if batch else ([], 0.0)
        inferences += len(batch)
        column: list[dict | None] = [None] * len(items)
        for i, output in zip(which, perturbed):
            column[i] = output
        variants.append(column)
    return variants[0], variants[1], inferences


PERTURBATION_METRICS = ("robustness", "fairness")


_COUNTED: dict[tuple, dict[str, int]] = {}
"""``perturbable_counts`` by (task kind, task config, dataset checksum), in this process: the most recent 64."""


def perturbable_counts(task, items: list[dict], *, dataset_checksum: str | None = None) -> dict[str, int]:
    """``{"robustness": n, "fairness": n}``: how many of ``items`` have such a variant
    (``leaderboard/perturbations.py``; no model involved, so a predictions file gets the same counts).

    A count of 0 makes the metric **not applicable** on the dataset (e.g. fairness on a set with no
    gendered word and no first name): it cannot be measured for any model, which the leaderboard
    keeps apart from "not measured yet" (``evaluation.rebuild_leaderboard``).

    The counts depend on the items (uid and input), the task's kind and its config only, so with
    ``dataset_checksum`` (``canonical_checksum`` of the items' uid, input, target and tag) they are
    computed once per dataset and reused for every other model scored on it in this process.
    """
    key = (task.kind, json.dumps(task.config, sort_keys=True, default=str), dataset_checksum) if dataset_checksum else None
    if key in _COUNTED:
        return dict(_COUNTED[key])
    counts = _count_perturbable(task, items)
    if key is not None:
        if len(_COUNTED) >= 64:
            _COUNTED.pop(next(iter(_COUNTED)))
        _COUNTED[key] = dict(counts)
    return counts


def _count_perturbable(task, items: list[dict]) -> dict[str, int]:
    fields = task.spec.perturbable_fields(task.config)
    counts = {"robustness": 0, "fairness": 0}
    for item in items:
        values = {f: task.spec.model_input(task.config, item["input"]).get(f, "") for f in fields}
        counts["robustness"] += robustness_variant(values, key=item["uid"]) is not None
        counts["fairness"] += fairness_variant(values, key=item["uid"]) is not None
    return counts


def consistency_scores(task, outputs, robust, fair) -> tuple[float | None, float | None]:
    """Robustness and fairness: the consistency of the variants' outputs with the originals', over the
    items that have a variant (None when none has)."""
    scores = []
    for column in (robust, fair):
        which = [i for i, output in enumerate(column) if output is not None]
        scores.append(consistency(task, [outputs[i] for i in which], [column[i] for i in which]))
    return scores[0], scores[1]


def perturbation_scores(task, predictor, items, inputs, outputs, beat) -> tuple[float | None, float | None, int]:
    """Robustness and fairness (Dynaboard consistency) over items that have a perturbation; plus the inferences run."""
    robust, fair, inferences = perturbed_outputs(task, predictor, items, inputs, beat)
    robustness, fairness = consistency_scores(task, outputs, robust, fair)
    return robustness, fairness, inferences


def serialise(array: np.ndarray) -> bytes:
    """``np.save`` bytes of ``array`` (no pickle), as stored on ``EvaluationRun.item_results``."""
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def load_item_results(data) -> ItemResults | None:
    """Return the ``ItemResults`` stored on a run (``EvaluationRun.item_results``), or None.

    The stored array is the task spec's ``ItemScores.item_results``: 2 × n label codes (gold,
    predicted) for label predictions, or n per-item values (SQuAD F1).
    """
    if not data:
        return None
    array = np.load(io.BytesIO(bytes(data)), allow_pickle=False)
    if array.ndim == 2:
        return ItemResults(gold=array[0].astype(int), predicted=array[1].astype(int))
    return ItemResults(values=array.astype(float))
