"""Accuracy of the default target models on real Dynabench data, next to chance, in one run.

Run: /work/main/.venv/bin/python benchmarks/accuracy.py [--epochs 3] [--limit N]

Uses the database and models dir of the current settings (``DYNABENCH_VAR_DIR``,
``DATABASE_URL``, ``DYNABENCH_MODELS_DIR``); trains the four default models first when they
are missing (``manage.py ensure_default_models``). Every prediction goes through the model
registry (``tasks.loop.registry.get_predictor``).

1. The default sentiment model (seed set only) on DynaSent round 1 dev and round 2 dev.
2. The default hate-speech model on DynaHate v0.2.2 dev, per round (``round.base``).
3. The default NLI model on ANLI round 1 dev (``e/n/c`` read as entailment/neutral/contradiction).
4. A sentiment model trained on DynaSent round 1 dev with ``manage.py train_target_model
   sentiment --data .../dynasent-v1.1-round01-yelp-dev.jsonl --map text=sentence
   --map label=gold_label --uid text_id``, then its accuracy on round 2 dev next to the
   default model's. The model is kept (``minilm-dynasent-r1-dev``) and reused by later runs.

Each line: accuracy, macro-F1, the majority-class rate of the same rows ("chance") and
accuracy / chance. Data: ``/work/shared/data`` or ``../shared/data`` from the repo root.
"""

import argparse
import csv
import json
import os
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dynabench.settings")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from sklearn.metrics import accuracy_score, f1_score  # noqa: E402

from tasks.loop.training.default_models import DEFAULT_MODEL_NAME  # noqa: E402
from tasks.loop.training.records import model_files_intact  # noqa: E402
from tasks.kinds import normalise_label  # noqa: E402
from tasks.models import MLModel, Task  # noqa: E402
from tasks.loop.registry import get_predictor  # noqa: E402
from transformers.utils import logging as hf_logging  # noqa: E402

hf_logging.disable_progress_bar()

DATA = next(
    (p for p in (Path(os.environ.get("DYNABENCH_SHARED_DATA", "/nonexistent")), REPO.parent / "shared/data",
                 Path("/work/shared/data")) if p.is_dir()),
    None,
)
DYNASENT_R1 = "dynasent/dynasent-v1.1-round01-yelp-dev.jsonl"
DYNASENT_R2 = "dynasent/dynasent-v1.1-round02-dynabench-dev.jsonl"
DYNAHATE = "dynahate/dynahate_v0.2.2_dev.csv"
ANLI_R1 = "anli/ANLI_analysis_r1_dev.csv"
DYNASENT_MODEL = "minilm-dynasent-r1-dev"


def dynasent(name, limit):
    rows = [json.loads(line) for line in open(DATA / name, encoding="utf-8") if line.strip()]
    rows = [r for r in rows if r["gold_label"] in ("positive", "negative", "neutral")]
    return [{"text": r["sentence"]} for r in rows][:limit], [r["gold_label"] for r in rows][:limit]


def dynahate_by_round(limit):
    groups = defaultdict(lambda: ([], []))
    with open(DATA / DYNAHATE, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            inputs, gold = groups[row["round.base"]]
            if len(inputs) < (limit or 10**9):
                inputs.append({"text": row["text"]})
                gold.append(row["label"])
    return dict(sorted(groups.items()))


def anli_r1(task, limit):
    with open(DATA / ANLI_R1, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))[:limit]
    inputs = [{"premise": r["context"], "hypothesis": r["statement"]} for r in rows]
    return inputs, [normalise_label(task.config, r["gold_label"]) for r in rows]


def score(label, model, inputs, gold):
    started = time.perf_counter()
    predicted = [out["label"] for out in get_predictor(model).predict(inputs)]
    seconds = time.perf_counter() - started
    accuracy = accuracy_score(gold, predicted)
    chance = Counter(gold).most_common(1)[0][1] / len(gold)
    macro_f1 = f1_score(gold, predicted, average="macro")
    print(
        f"{label:<58} n={len(gold):>5}  accuracy {accuracy:.3f}  macro-F1 {macro_f1:.3f}  "
        f"chance {chance:.3f}  accuracy/chance {accuracy / chance:.2f}  ({len(gold) / seconds:.0f} ex/s)",
        flush=True,
    )
    return accuracy


def default_model(code):
    return MLModel.objects.get(task__code=code, name=DEFAULT_MODEL_NAME)


def dynasent_trained_model(task, epochs):
    model = MLModel.objects.filter(task=task, name=DYNASENT_MODEL).first()
    if model is not None and model.status == MLModel.Status.UPLOADED and model_files_intact(model):
        print(f"(reusing {DYNASENT_MODEL}, model {model.pk}, trained in {model.training_info['duration_s']:.0f}s; "
              "delete it to train again)")
        return model
    if model is not None:
        model.delete()
    started = time.perf_counter()
    call_command(
        "train_target_model", "sentiment", "--data", str(DATA / DYNASENT_R1), "--map", "text=sentence",
        "--map", "label=gold_label", "--uid", "text_id", "--epochs", str(epochs), "--name", DYNASENT_MODEL,
    )
    print(f"(wall {time.perf_counter() - started:.0f}s for the command above)")
    return MLModel.objects.get(task=task, name=DYNASENT_MODEL)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3, help="epochs for the DynaSent round 1 dev model (default 3)")
    parser.add_argument("--limit", type=int, help="use at most N rows of each dev set (a quick look)")
    args = parser.parse_args()
    if DATA is None:
        sys.exit("Shared data not found: set DYNABENCH_SHARED_DATA or put it at ../shared/data.")
    call_command("ensure_default_models", "--inline")  # prints its own one-line summary
    sentiment, nli = Task.objects.get(code="sentiment"), Task.objects.get(code="nli")

    print("\n== Default models (trained on the seed set only)")
    score("sentiment default / DynaSent R1 dev", default_model("sentiment"), *dynasent(DYNASENT_R1, args.limit))
    r2_default = score("sentiment default / DynaSent R2 dev", default_model("sentiment"), *dynasent(DYNASENT_R2, args.limit))
    for round_base, (inputs, gold) in dynahate_by_round(args.limit).items():
        score(f"hate-speech default / DynaHate dev round {round_base}", default_model("hate-speech"), inputs, gold)
    score("nli default / ANLI R1 dev", default_model("nli"), *anli_r1(nli, args.limit))

    print(f"\n== Sentiment model trained on DynaSent R1 dev ({args.epochs} epochs)")
    trained = dynasent_trained_model(sentiment, args.epochs)
    r2_trained = score("sentiment DynaSent-R1-dev-trained / DynaSent R2 dev", trained, *dynasent(DYNASENT_R2, args.limit))
    print(f"R2 dev accuracy, trained on R1 dev vs seed only: {r2_trained:.3f} / {r2_default:.3f} = {r2_trained / r2_default:.2f}x")


if __name__ == "__main__":
    main()
