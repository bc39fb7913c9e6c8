"""The steps of scoring a model beyond the task kind's metrics: predicting in chunks, robustness
and fairness on perturbed inputs, and the per-item results stored on a run for bootstrap intervals.
Per-tag scores are ``tasks.metrics.tags``.

The metrics themselves (accuracy, macro-F1, SQuAD F1/EM) and the per-item scores are the task
kind's (``task.spec.score``, ``tasks/kinds/``). Robustness and fairness follow Dynaboard
(Ma et al., NeurIPS 2021): the performance metric of the model's predictions on perturbed
inputs measured against its own predictions on the originals, over the items that had a
perturbation. What a perturbation is belongs to the task kind, which names its provider
(``TaskKindSpec.perturbations``): ``text`` (``leaderboard/perturbations.py``: typos and the like;
fairness by gendered-word and name swaps) or ``audio`` (``leaderboard/audio_perturbations.py``:
noise and speed; fairness across speaker groups).
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import time

import numpy as np

from leaderboard.audio_perturbations import AudioPerturbations
from leaderboard.bootstrap import ItemResults
from leaderboard.perturbations import TextPerturbations, variant_consistency


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


PERTURBATIONS = {"text": TextPerturbations(), "audio": AudioPerturbations()}
"""The providers of robustness and fairness, by the name a task kind gives (``TaskKindSpec.perturbations``).
Each answers ``robustness_inputs`` and ``fairness_inputs`` (one item's variants as model inputs),
``counts`` (items with variants, no model involved) and ``fairness`` (the score)."""

VARIANT_BLOCK = 512
"""Items whose variants are made and predicted together (bounds the memory of decoded audio variants)."""


def perturbations(task):
    """The task kind's provider of robustness and fairness (``PERTURBATIONS``)."""
    return PERTURBATIONS[task.spec.perturbations]


def perturbed_outputs(task, predictor, items, inputs, beat) -> tuple[list[list[dict] | None], list[list[dict] | None], int]:
    """The model's outputs on the robustness and the fairness variants of each item (a list per item,
    None where an item has none: ``perturbations(task)``), plus the inferences run.

    Variants are made and predicted ``VARIANT_BLOCK`` items at a time. Each variant depends on its
    item alone, so a shard of a dataset gets the same variants as the whole dataset.
    """
    provider = perturbations(task)
    makers = (provider.robustness_inputs, provider.fairness_inputs)
    columns: list[list[list[dict] | None]] = []
    inferences = 0
    for index, make in enumerate(makers):
        column: list[list[dict] | None] = [None] * len(items)
        for start in range(0, len(items), VARIANT_BLOCK):
            which, batch = [], []
            for i in range(start, min(len(items), start + VARIANT_BLOCK)):
                for variant in make(task, items[i], inputs[i]):
                    which.append(i)
                    batch.append(variant)
            share = 0.2 * start / max(len(items), 1)
            span = 0.2 * min(VARIANT_BLOCK, len(items) - start) / max(len(items), 1)
            perturbed, _ = predict(predictor, batch, beat, 0.6 + 0.2 * index + share, span) if batch else ([], 0.0)
            inferences += len(batch)
            for i, output in zip(which, perturbed):
                column[i] = (column[i] or []) + [output]
        columns.append(column)
    return columns[0], columns[1], inferences


PERTURBATION_METRICS = ("robustness", "fairness")


_COUNTED: dict[tuple, dict[str, int]] = {}
"""``perturbable_counts`` by (task kind, task config, dataset checksum), in this process: the most recent 64."""


def perturbable_counts(task, items: list[dict], *, dataset_checksum: str | None = None) -> dict[str, int]:
    """``{"robustness": n, "fairness": n}``: how many of ``items`` have such a variant, or for audio
    fairness a speaker group (``perturbations(task).counts``; no model involved, so a predictions file
    gets the same counts).

    A count of 0 makes the metric **not applicable** on the dataset (e.g. fairness on a set with no
    gendered word and no first name, or clips without speaker groups): it cannot be measured for any
    model, which the leaderboard keeps apart from "not measured yet" (``evaluation.rebuild_leaderboard``).

    The counts depend on the items (uid and input; for audio fairness, tags and metadata), the task's
    kind and its config only, so with ``dataset_checksum`` (``canonical_checksum`` of the items' uid,
    input, target and tag) they are computed once per dataset and reused for every other model scored
    on it in this process. The checksum leaves the items' metadata out, so the key adds a digest of it:
    the same items with speaker groups added are counted again.
    """
    key = None
    if dataset_checksum:
        metadata = json.dumps([item.get("metadata") for item in items], sort_keys=True, default=str)
        key = (task.kind, json.dumps(task.config, sort_keys=True, default=str), dataset_checksum,
               hashlib.sha256(metadata.encode()).hexdigest())
    if key in _COUNTED:
        return dict(_COUNTED[key])
    counts = _count_perturbable(task, items)
    if key is not None:
        if len(_COUNTED) >= 64:
            _COUNTED.pop(next(iter(_COUNTED)))
        _COUNTED[key] = dict(counts)
    return counts


def _count_perturbable(task, items: list[dict]) -> dict[str, int]:
    return perturbations(task).counts(task, items)


def robustness_and_fairness(task, items, outputs, robust, fair, scores) -> tuple[float | None, float | None]:
    """Robustness (the consistency of the robustness variants' outputs with the originals',
    ``variant_consistency``) and fairness (the provider's: consistency for text, speaker groups for
    audio, from the kind's ``ItemScores`` ``scores``); None where not measurable."""
    return variant_consistency(task, outputs, robust), perturbations(task).fairness(task, items, outputs, fair, scores)


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
