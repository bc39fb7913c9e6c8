"""Benchmark of audio: ingest in clips per second, and the registry's audio classification against a
bare batched forward of the same model on the same clips.

Run: .venv/bin/python benchmarks/audio.py [--database-url URL] [--clips N] [--quick]

It prepares its own state: a temporary ``DYNABENCH_VAR_DIR`` (media under it), the database given
by ``--database-url`` (default PostgreSQL ``audio_test``; it is **flushed**), the ``spoken-commands``
audio classification task (``tasks/data/task_definitions/spoken-commands.json``) and its owner.

1. Ingest, one worker (this process; the clips of an upload are checked on
   ``tasks.data.audio.CHECK_THREADS`` threads): ``--clips`` 5-second clips (default 200), half WAV
   (44.1 kHz stereo, 16-bit) and half FLAC (48 kHz mono, 16-bit), each a different mix of tones,
   a sweep and noise, uploaded ``--per-upload`` files at a time (default 20, one form post's worth)
   through ``tasks.data.audio.ingest_audio``, the function the console page and the API call
   (read and check with libsndfile, re-encode as FLAC without metadata, a 16 kHz mono copy
   resampled, both stored, records and contexts). Reports clips/s (goal >= 50/s per worker).
2. Registry vs bare: a small wav2vec 2.0 classifier with random weights (7 convolutions of 128
   channels, wav2vec 2.0's strides, 4 transformer layers 192 wide) saved with its feature extractor.
   On the stored clips (their sha256s), the registry ``load_predictor(...).predict([{"clip": sha}],
   batch_size=B)`` vs the bare loop over the same model object: read each stored 16 kHz copy with
   soundfile, ``feature_extractor(batch, padding=True)``, ``model(**features).logits.argmax(-1)``
   under ``torch.inference_mode`` in batches of B, on ``--threads`` torch threads (default 1, as a
   web worker). Each batch runs through both in turn (the order alternating), so load on a shared
   machine falls on both alike; medians over repeats; the ratio is registry clips/s divided by bare
   clips/s (goal >= 0.9x).
"""

import argparse
import io
import os
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

SECONDS = 5.0


def clip_bytes(seed: int) -> tuple[str, bytes]:
    """``(name, bytes)`` of a 5-second clip: even seeds WAV 44.1 kHz stereo, odd seeds FLAC 48 kHz mono."""
    import numpy as np
    import soundfile

    rng = np.random.default_rng(seed)
    wav = seed % 2 == 0
    rate = 44100 if wav else 48000
    t = np.arange(int(SECONDS * rate)) / rate
    freqs = rng.uniform(120, 900, 3)
    x = sum(0.15 * np.sin(2 * np.pi * f * t) for f in freqs)
    x += 0.1 * np.sin(2 * np.pi * (200 * t + 300 * t**2 / SECONDS)) + 0.03 * rng.standard_normal(t.size)
    x = (x * np.hanning(t.size) ** 0.1).astype(np.float32)
    samples = np.stack([x, np.roll(x, 37)], axis=1) if wav else x
    out = io.BytesIO()
    soundfile.write(out, samples, rate, format="WAV" if wav else "FLAC", subtype="PCM_16")
    return f"clip{seed:04d}.{'wav' if wav else 'flac'}", out.getvalue()


def setup(args, var_dir: Path):
    from benchmarks._postgres import create_database

    create_database(args.database_url)
    os.environ.update({
        "DJANGO_SETTINGS_MODULE": "dynabench.settings", "DATABASE_URL": args.database_url, "REDIS_URL": args.redis_url,
        "DYNABENCH_VAR_DIR": str(var_dir), "MEDIA_ROOT": str(var_dir / "media"), "SECRET_KEY": secrets.token_urlsafe(40),
        "DEBUG": "0", "LOG_LEVEL": "WARNING", "CACHE_KEY_PREFIX": f"bench-audio-{secrets.token_hex(4)}",
    })
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("flush", interactive=False, verbosity=0)
    from tests.audio_support import audio_task

    owner = User.objects.create_user("bench-owner")
    return audio_task(owner), owner


def bench_ingest(task, owner, n: int, per_upload: int) -> float:
    """Return clips/s through ``ingest_audio``, ``per_upload`` files per call."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from tasks.data.audio import ingest_audio

    print(f"1. ingest, one worker: {n} clips of {SECONDS:g} s (WAV 44.1 kHz stereo / FLAC 48 kHz mono), "
          f"{per_upload} per upload ...", flush=True)
    clips = [clip_bytes(seed) for seed in range(n)]
    started = time.perf_counter()
    added = 0
    for start in range(0, n, per_upload):
        files = [SimpleUploadedFile(name, data) for name, data in clips[start:start + per_upload]]
        added += ingest_audio(task=task, acting_user=owner, files=files, round_number=1).added
    elapsed = time.perf_counter() - started
    assert added == n, f"{added} of {n} clips added"
    return n / elapsed


def build_classifier(path: Path, labels):
    """A small wav2vec 2.0 sequence classifier (random weights) with its feature extractor."""
    import torch
    from transformers import Wav2Vec2Config, Wav2Vec2FeatureExtractor, Wav2Vec2ForSequenceClassification

    torch.manual_seed(0)
    config = Wav2Vec2Config(
        hidden_size=192, num_hidden_layers=4, num_attention_heads=3, intermediate_size=768, conv_dim=(128,) * 7,
        feat_extract_norm="layer", do_stable_layer_norm=True, mask_time_prob=0.0, classifier_proj_size=64,
        num_labels=len(labels), id2label=dict(enumerate(labels)), label2id={label: i for i, label in enumerate(labels)},
    )
    Wav2Vec2ForSequenceClassification(config).save_pretrained(path, safe_serialization=True)
    Wav2Vec2FeatureExtractor(feature_size=1, sampling_rate=16000, padding_value=0.0, do_normalize=True,
                             return_attention_mask=True).save_pretrained(path)
    return path


def bench_registry(task, model_dir: Path, *, n: int, batch_size: int, repeats: int, threads: int):
    import soundfile
    import torch

    from tasks.data.audio_files import model_name
    from tasks.loop.artefacts import storage
    from tasks.loop.registry import load_predictor
    from tasks.models import ContextAudio

    hashes = list(ContextAudio.objects.filter(task=task).order_by("id").values_list("sha256", flat=True)[:n])
    paths = [storage().path(model_name(sha)) for sha in hashes]
    predictor = load_predictor(model_dir, task=task, batch_size=batch_size)
    model, extractor = predictor.model, predictor.feature_extractor
    inputs = [{"clip": sha} for sha in hashes]
    predictor.predict(inputs[:batch_size])  # warm up

    def registry(rows):
        return predictor.predict([inputs[i] for i in rows], batch_size=batch_size)

    def bare(rows):
        with torch.inference_mode():
            batch = [soundfile.read(paths[i], dtype="float32")[0] for i in rows]
            features = extractor(batch, sampling_rate=16000, padding=True, return_attention_mask=True, return_tensors="pt")
            return model(**features).logits.argmax(-1)

    torch.set_num_threads(threads)
    print(f"2. registry vs bare: {len(hashes)} stored clips, small wav2vec 2.0 classifier (7 convolutions x 128, "
          f"4 layers x 192), batch {batch_size}, {torch.get_num_threads()} torch thread(s), {repeats} repeats interleaved ...",
          flush=True)
    batches = [list(range(start, min(start + batch_size, len(hashes)))) for start in range(0, len(hashes), batch_size)]
    same = all([o["label"] for o in registry(rows)] == [predictor.labels[i] for i in bare(rows).tolist()] for rows in batches)
    calls = (("registry", registry), ("bare", bare))
    times = {name: [0.0] * repeats for name, _ in calls}
    for r in range(repeats):
        for k, rows in enumerate(batches):
            for name, call in (calls if (r + k) % 2 == 0 else calls[::-1]):  # alternate who goes first
                started = time.perf_counter()
                call(rows)
                times[name][r] += time.perf_counter() - started
    return {name: len(hashes) / statistics.median(values) for name, values in times.items()}, same


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/audio_test"))
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/10")
    parser.add_argument("--clips", type=int, default=200)
    parser.add_argument("--per-upload", type=int, default=20)
    parser.add_argument("--model-clips", type=int, default=64, help="stored clips the registry and the bare loop run on")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (web workers run one, WEB_TORCH_THREADS)")
    parser.add_argument("--quick", action="store_true", help="60 clips, 32 through the model, 2 repeats")
    args = parser.parse_args()
    if args.quick:
        args.clips, args.model_clips, args.repeats = 60, 32, 2
    with tempfile.TemporaryDirectory(prefix="bench-audio-") as tmp:
        var_dir = Path(tmp)
        task, owner = setup(args, var_dir)
        rate = bench_ingest(task, owner, args.clips, args.per_upload)
        print(f"   ingest:   {rate:7.1f} clips/s per worker   ratio to the goal of 50/s = {rate / 50:.2f} "
              f"({'met' if rate >= 50 else 'NOT met'})")
        model_dir = build_classifier(var_dir / "wav2vec2", task.labels)
        rates, same = bench_registry(task, model_dir, n=min(args.clips, args.model_clips), batch_size=args.batch_size,
                                     repeats=args.repeats, threads=args.threads)
        print(f"   registry: {rates['registry']:7.1f} clips/s")
        print(f"   bare:     {rates['bare']:7.1f} clips/s   registry/bare = {rates['registry'] / rates['bare']:.2f}x "
              f"(goal >= 0.9x: {'met' if rates['registry'] >= 0.9 * rates['bare'] else 'NOT met'})")
        print(f"   same labels as bare: {same}")


if __name__ == "__main__":
    main()
