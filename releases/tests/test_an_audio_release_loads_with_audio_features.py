"""A release of an audio task carries every clip its items name once, as ``audio/<sha256>.flac`` with
its sha256, and its Parquet files load with ``datasets`` as ``Audio`` features whose bytes are those
clips (read here with soundfile: ``datasets`` decodes audio only with torchcodec installed)."""

import hashlib
import io

import datasets
import soundfile

from releases.tests.support import download_folder, released
from tasks.data.audio import ingest_audio
from tasks.models import ContextAudio, Dataset, DatasetItem, Round
from tests.audio_support import audio_task, clip_file


def test_each_clip_is_in_the_release_once_and_loads_as_audio(db, owner, private_media, tmp_path):
    task = audio_task(owner, "spoken-commands")
    ingest_audio(task=task, acting_user=owner, round_number=1,
                 files=[clip_file("low.wav", freq=220), clip_file("high.wav", freq=880, seconds=0.5)])
    low, high = sorted(ContextAudio.objects.filter(task=task), key=lambda clip: clip.duration_s, reverse=True)
    Round.objects.filter(task=task, number=1).update(status=Round.Status.CLOSED)
    dataset = Dataset.objects.create(task=task, round=Round.objects.get(task=task, number=1), name="r1-dev", split="dev",
                                     access="standard", label_visibility="public")
    for uid, clip, label in (("a1", low, "yes"), ("a2", high, "no"), ("a3", low, "stop")):
        DatasetItem.objects.create(dataset=dataset, uid=uid, input={"clip": clip.sha256}, target={"label": label})

    release = released(task, owner)
    folder = download_folder(release, tmp_path / "release")

    assert release.status == "published", release.failure_reason
    clips = [f for f in release.manifest["files"] if f["name"].startswith("audio/")]
    assert sorted(f["name"] for f in clips) == sorted(f"audio/{c.sha256}.flac" for c in (low, high))
    for entry in clips:
        assert hashlib.sha256((folder / entry["name"]).read_bytes()).hexdigest() == entry["sha256"]

    loaded = datasets.load_dataset("parquet", data_files={"dev": str(folder / "data" / "round1-dev.parquet")},
                                   cache_dir=str(tmp_path / "hf-cache"))["dev"]
    assert isinstance(loaded.features["clip"], datasets.Audio)
    assert loaded.features["label"].names[:3] == ["yes", "no", "up"]
    raw = loaded.cast_column("clip", datasets.Audio(decode=False))
    durations = [soundfile.info(io.BytesIO(row["clip"]["bytes"])).duration for row in raw]
    assert durations == [low.duration_s, high.duration_s, low.duration_s]
    assert [hashlib.sha256(row["clip"]["bytes"]).hexdigest() for row in raw] == [low.sha256, high.sha256, low.sha256]
