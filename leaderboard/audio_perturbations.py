"""Robustness and fairness of the audio kinds (``TaskKindSpec.perturbations = "audio"``).

Robustness follows Dynaboard (Ma et al., NeurIPS 2021, section 3.2) as for text: the model's answers
on perturbed inputs are scored with the task's perf metric against its own answers on the originals
(the kind's ``consistency``). Every clip gets two variants, pooled: white Gaussian noise at
``NOISE_SNR_DB`` (``add_noise``) and playback ``SPEED`` times faster (``change_speed``: shorter and
higher, as a tape played fast). Both are deterministic, the noise seeded by ``zlib.crc32`` of the
item's uid (never Python's salted ``hash``), so a rerun, or a shard of the dataset, gives the same
clips and the same score.

Fairness compares speaker groups instead of swapping words: the perf metric per group of the items
that name one (``speaker_group``), and ``fairness = 1 - (best group's - worst group's)``, clipped to
[0, 1] (1: every group served alike). The range is the same whether the metric is a rate of
successes or of errors (WER), so no orientation is needed, and higher is better as the Dynascore
expects of fairness. A dataset with fewer than two speaker groups cannot measure it: the count is 0,
so the leaderboard marks fairness *not applicable* there (absent, not zero).
"""

from __future__ import annotations

import math
import zlib

import numpy as np

from tasks.data.audio_files import MODEL_RATE, read_model_samples
from tasks.data.resample import resample
from tasks.metrics.tags import item_tags

NOISE_SNR_DB = 10.0
"""Signal-to-noise ratio of the noisy variant, in dB (10 dB: speech clearly above a steady hiss)."""
SPEED = 1.1
"""Playback speed of the sped-up variant: the clip lasts ``1 / SPEED`` as long, its pitch ``SPEED`` times higher."""
SPEAKER_KEY = "speaker"
"""The ``DatasetItem.metadata`` key of an item's speaker group (``import_dataset --meta speaker``)."""
SPEAKER_TAG = "speaker:"
"""The prefix of a tag naming an item's speaker group (``speaker:<group>``, on the item or its context)."""


def add_noise(samples: np.ndarray, *, seed: int, snr_db: float = NOISE_SNR_DB) -> np.ndarray:
    """Return ``samples`` (float32, shape ``(frames,)``) plus white Gaussian noise whose power is the
    clip's mean power over ``10 ** (snr_db / 10)``, exactly: the drawn noise (``numpy``'s
    ``default_rng(seed)``) is scaled to that power, so ``10·log10(P_signal / P_noise) = snr_db``. No
    clipping (models read floats). A silent or empty clip is returned unchanged (a copy)."""
    samples = np.asarray(samples, dtype=np.float32)
    power = float(np.mean(np.square(samples, dtype=np.float64))) if samples.size else 0.0
    if power == 0.0:
        return samples.copy()
    noise = np.random.default_rng(seed).standard_normal(samples.size)
    noise *= math.sqrt(power / 10 ** (snr_db / 10) / float(np.mean(np.square(noise))))
    return (samples + noise).astype(np.float32)


def change_speed(samples: np.ndarray, *, factor: float = SPEED, rate: int = MODEL_RATE) -> np.ndarray:
    """Return ``samples`` at ``rate`` Hz played ``factor`` times faster: read as if recorded at
    ``round(rate × factor)`` Hz and resampled to ``rate`` (``tasks.data.resample``), so the clip lasts
    ``1 / factor`` as long (``ceil(frames × rate / round(rate × factor))`` samples) and every frequency
    is ``factor`` times higher. Raises ``ValueError`` for a factor that makes no positive rate."""
    return resample(samples, int(round(rate * factor)), rate)


def speaker_group(item: dict) -> str | None:
    """The speaker group of a dataset item: its ``metadata["speaker"]`` when it is a non-empty value,
    else its first tag (sorted) of the form ``speaker:<group>`` (``tasks.metrics.tags.item_tags``);
    None when it names none."""
    value = (item.get("metadata") or {}).get(SPEAKER_KEY)
    if value is not None and str(value).strip():
        return str(value).strip()
    groups = sorted(t[len(SPEAKER_TAG):].strip() for t in item_tags(item) if t.startswith(SPEAKER_TAG))
    return next((g for g in groups if g), None)


def _groups(items: list[dict]) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = {}
    for i, item in enumerate(items):
        group = speaker_group(item)
        if group is not None:
            groups.setdefault(group, []).append(i)
    return groups


def group_scores(perf_metric: str, items: list[dict], scores) -> dict[str, float]:
    """``{speaker group: the perf metric of its items}`` from the kind's ``ItemScores`` (``scores.metrics(rows)``)."""
    return {group: float(scores.metrics(rows)[perf_metric]) for group, rows in sorted(_groups(items).items())}


class AudioPerturbations:
    """The ``audio`` provider of ``leaderboard/scoring.py`` (see the module docstring). The audio kinds
    feed the model one clip field (``config["model_inputs"][0]``): a clip's sha256, or 16 kHz samples."""

    def _samples(self, task, model_input: dict) -> tuple[str, np.ndarray]:
        field = task.config["model_inputs"][0]
        value = model_input.get(field)
        return field, (value if isinstance(value, np.ndarray) else read_model_samples(value))

    def robustness_inputs(self, task, item: dict, model_input: dict) -> list[dict]:
        """The noisy and the sped-up variant of the item's clip, as model inputs holding 16 kHz samples.
        Raises ``FileNotFoundError`` when the input names no stored clip."""
        field, samples = self._samples(task, model_input)
        seed = zlib.crc32(str(item["uid"]).encode("utf-8"))
        return [{**model_input, field: add_noise(samples, seed=seed)}, {**model_input, field: change_speed(samples)}]

    def fairness_inputs(self, task, item: dict, model_input: dict) -> list[dict]:
        """None: fairness compares speaker groups on the original clips, so no variant is run."""
        return []

    def counts(self, task, items: list[dict]) -> dict[str, int]:
        """Every item has robustness variants; fairness counts the items with a speaker group when the
        dataset has two groups or more (else 0: not applicable)."""
        groups = _groups(items)
        return {"robustness": len(items), "fairness": sum(map(len, groups.values())) if len(groups) >= 2 else 0}

    def fairness(self, task, items: list[dict], outputs: list[dict], fair: list, scores) -> float | None:
        """``1 - (max - min)`` of ``group_scores``, clipped to [0, 1]; None with fewer than two groups."""
        per_group = group_scores(task.config["perf_metric"], items, scores)
        if len(per_group) < 2:
            return None
        return float(min(1.0, max(0.0, 1.0 - (max(per_group.values()) - min(per_group.values())))))
