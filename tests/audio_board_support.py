"""For the tests of the audio leaderboard's robustness and fairness: stored clips of several lengths,
a scoring dataset of them (optionally with speaker groups), a tiny classifier that answers the same
label whatever it hears, and the variants computed by hand from their definition (not by
``leaderboard.audio_perturbations``)."""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np

from tests.audio_support import COMMANDS, build_tiny_audio_classifier, clip_file


def stored_clips(task, owner, n: int = 6) -> list[str]:
    """Ingest ``n`` tones of different pitches and lengths into round 1 of ``task``; return their sha256s."""
    from tasks.data.audio import ingest_audio
    from tasks.models import Context

    files = [clip_file(f"c{i}.wav", freq=200 + 90 * i, seconds=0.3 + 0.1 * i) for i in range(n)]
    ingest_audio(task=task, acting_user=owner, files=files, round_number=1)
    return list(Context.objects.filter(round__task=task).order_by("id").values_list("uid", flat=True))


def clip_dataset(task, name: str, clips: list[str], targets: list[dict], *, metadata: list[dict] | None = None,
                 tags: list[str] | None = None):
    """A scoring dataset of round 1 whose item ``i`` (uid ``u<i>``) holds ``clips[i]``, ``targets[i]``,
    ``metadata[i]`` and ``tags[i]``."""
    from tasks.models import Dataset, DatasetItem

    dataset = Dataset.objects.create(task=task, name=name, access="scoring", round=task.rounds.get(number=1))
    DatasetItem.objects.bulk_create([
        DatasetItem(dataset=dataset, uid=f"u{i}", input={"clip": clip}, target=target,
                    metadata=(metadata or [{}] * len(clips))[i], tag=(tags or [""] * len(clips))[i])
        for i, (clip, target) in enumerate(zip(clips, targets))
    ])
    return dataset


def build_constant_classifier(path: Path, label: str, labels=COMMANDS) -> Path:
    """A tiny audio classifier whose head ignores what it hears (zero weights) and whose bias picks ``label``."""
    import torch
    from transformers import Wav2Vec2ForSequenceClassification

    build_tiny_audio_classifier(path, list(labels))
    model = Wav2Vec2ForSequenceClassification.from_pretrained(path)
    with torch.no_grad():
        model.classifier.weight.zero_()
        model.classifier.bias.copy_(torch.nn.functional.one_hot(torch.tensor(list(labels).index(label)), len(labels)) * 5.0)
    model.save_pretrained(path, safe_serialization=True)
    return Path(path)


def noisy_by_hand(samples: np.ndarray, uid: str, snr_db: float = 10.0) -> np.ndarray:
    """White Gaussian noise (``default_rng(crc32(uid))``) scaled to the clip's power over ``10^(snr/10)``, added."""
    noise = np.random.default_rng(zlib.crc32(uid.encode())).standard_normal(samples.size)
    noise *= np.sqrt(np.mean(samples.astype(np.float64) ** 2) / 10 ** (snr_db / 10) / np.mean(noise**2))
    return (samples + noise).astype(np.float32)


def faster_by_hand(samples: np.ndarray, factor: float = 1.1) -> np.ndarray:
    """The clip read as recorded at ``16000 × factor`` Hz, resampled to 16 kHz."""
    from tasks.data.resample import resample

    return resample(samples, int(round(16000 * factor)), 16000)
