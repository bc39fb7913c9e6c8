"""Benchmark of the transfer job: ``.venv/bin/python benchmarks/transfer.py``.

A round of 10,000 validated sentiment examples (DynaSent round-1 sentences when the shared data is on
this machine, else generated sentences) and 10 local models (tiny 2-layer BERTs built on the fly,
``tests/tiny_models.py``). Measured side by side in one run:

- **bare**: the batched forward of the same 10 models over the same 10,000 model inputs
  (``get_predictor(model).predict(...)`` in the job's chunks of ``LOCAL_CHUNK`` inputs, every model
  loaded first and kept loaded), nothing stored: the cost of one evaluation of these models on this round;
- **job**: ``validation.jobs.measure_transfer`` on the round (reads the validated examples and their
  final labels, runs every model, stores 100,000 answers and 10,000 rates).

Printed: examples × models per second of each, and their ratio (job / bare; goal: the job stays
within one evaluation's cost, a ratio near 1 and above 0.5). Runs on a scratch SQLite file, with its
own embedded Redis and media folder under a temporary folder. Options: ``--examples N`` (10000),
``--models N`` (10).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRATCH = Path(tempfile.mkdtemp(prefix="bench-transfer-"))
sys.path.insert(0, str(ROOT))
os.environ.pop("REDIS_URL", None)
os.environ.update({
    "DJANGO_SETTINGS_MODULE": "dynabench.settings", "DATABASE_URL": f"sqlite:///{SCRATCH / 'db.sqlite3'}",
    "DYNABENCH_VAR_DIR": str(SCRATCH / "var"), "MEDIA_ROOT": str(SCRATCH / "media"),
    "DYNABENCH_MODELS_DIR": str(SCRATCH / "models"),
})

import django  # noqa: E402

django.setup()

from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402

DYNASENT = Path(os.environ.get("DYNABENCH_SHARED_DATA", ROOT.parent / "shared" / "data")) / "dynasent"


def _sentences(n: int, labels: list[str]) -> list[tuple[str, str]]:
    """``n`` (sentence, label) pairs: DynaSent round 1 (dev and test, repeated as needed) if present, else generated."""
    rows = []
    for name in ("dynasent-v1.1-round01-yelp-dev.jsonl", "dynasent-v1.1-round01-yelp-test.jsonl"):
        path = DYNASENT / name
        if path.is_file():
            for line in path.open(encoding="utf-8"):
                row = json.loads(line)
                if row["gold_label"] in labels:
                    rows.append((row["sentence"], row["gold_label"]))
    if not rows:
        rows = [(f"the food was great and the staff were friendly number {i}", labels[i % len(labels)]) for i in range(1000)]
    return [rows[i % len(rows)] for i in range(n)]


def _world(n_examples: int, n_models: int):
    from annotation.models import Example, ValidationState
    from tasks.data.seed import seed_default_tasks
    from tasks.models import MLModel
    from tests.tiny_models import build_tiny_classifier

    task = {t.code: t for t in seed_default_tasks()}["sentiment"]
    owner = User.objects.create_superuser("bench-owner", "o@example.org", "pw")
    models = [
        MLModel.objects.create(task=task, owner=owner, name=f"tiny-{i}", status=MLModel.Status.EVALUATED,
                               path=str(build_tiny_classifier(SCRATCH / "tiny" / f"m{i}", task.labels, seed=i)))
        for i in range(n_models)
    ]
    round1 = task.rounds.get(number=1)
    context = round1.contexts.first()
    Example.objects.bulk_create([
        Example(round=round1, context=context, author=owner, input={**context.data, "text": text}, target={"label": label},
                model_output={}, model_wrong=True, validation_state=ValidationState.VERIFIED_CORRECT)
        for text, label in _sentences(n_examples, task.labels)
    ], batch_size=2000)
    return task, round1, models


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=10_000)
    parser.add_argument("--models", type=int, default=10)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    from django.conf import settings

    settings.DYNABENCH_REGISTRY_MAX_MODELS = max(args.models, 4)  # every model stays loaded on both sides
    from annotation.models import Example, TransferRate, TransferResult
    from tasks.loop.registry import get_predictor
    from validation.jobs import measure_transfer
    from validation.transfer import LOCAL_CHUNK

    task, round1, models = _world(args.examples, args.models)
    inputs = [task.spec.model_input(task.config, e) for e in Example.objects.filter(round=round1).order_by("pk").values_list("input", flat=True)]
    for model in models:  # both sides run loaded models: loading is not what is compared
        get_predictor(model).predict(inputs[:8])
    pairs = len(inputs) * len(models)

    started = time.perf_counter()
    for model in models:  # in the job's chunks (one registry call each), as an evaluation also calls it piecewise
        predictor = get_predictor(model)
        for start in range(0, len(inputs), LOCAL_CHUNK):
            predictor.predict(inputs[start : start + LOCAL_CHUNK])
    bare_s = time.perf_counter() - started

    started = time.perf_counter()
    summary = measure_transfer(round1.pk)
    job_s = time.perf_counter() - started

    assert TransferResult.objects.count() == pairs and TransferRate.objects.count() == len(inputs), summary
    print(f"round: {len(inputs)} validated examples x {len(models)} local models = {pairs} answers")
    print(f"job:   {summary}")
    print(f"bare batched forward: {bare_s:7.1f} s, {pairs / bare_s:9.0f} examples x models per second")
    print(f"transfer job:         {job_s:7.1f} s, {pairs / job_s:9.0f} examples x models per second")
    print(f"ratio (job / bare throughput): {bare_s / job_s:.2f}")


if __name__ == "__main__":
    main()
