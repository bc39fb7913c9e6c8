"""One training run, stored on its MLModel record: the orchestrator every training entry point ends in.

``train_model_record``, in steps:

1. Verify the base encoder's checksum (``base_encoder``); load it with the task kind's fresh head
   (``task.spec.head_class``: ``AutoModelForSequenceClassification`` with ``id2label`` = the
   task's labels, or ``AutoModelForQuestionAnswering``), ``local_files_only``, safetensors only.
2. Tokenise (``task.spec.training_features``, in ``fine_tuning``): classification takes the
   task's ``model_inputs`` (one text or a pair); extractive QA uses SQuAD-style features
   (question + passage windows with a stride, start/end token positions; windows without the
   answer point at ``[CLS]``), as in Devlin et al. 2019, "BERT", section 4.2.
3. A plain PyTorch loop (``fine_tuning.fit``): AdamW, linear warm-up then linear decay,
   gradient clipping, shuffled mini-batches with dynamic padding, fixed seed.
4. Save a Hugging Face directory (safetensors, tokenizer, ``config.json`` with
   ``id2label``/``label2id``, ``training_info.json``, ``training_examples.jsonl``) into
   ``settings.MODELS_DIR/<task>/<name>``, replacing an earlier run's directory atomically.
5. Check the saved directory with the registry's rules
   (``tasks.loop.model_checks.check_model_directory``), store its ``directory_checksum``,
   ``training_info`` (with the weights' sha256) and ``status=uploaded`` on the MLModel;
   progress (0..1) is written while training, and a failure sets ``status=failed`` with a
   readable ``failure_reason``.

``train_new_model`` creates the record first; ``train_selection`` trains a data-centric selection.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from dynabench.errors import RuleError
from dynabench.job_stop import JobStopped
from tasks.loop.model_checks import check_model_directory, directory_checksum
from tasks.loop.training.base_encoder import WEIGHTS_FILE, BaseEncoder, default_encoder, file_sha256
from tasks.loop.training.error_codes import TrainingErrorCode
from tasks.loop.training.examples import TrainingExample, selection_examples
from tasks.loop.training.fine_tuning import train_directory
from tasks.loop.training.hyperparameters import Hyperparameters, default_hyperparameters
from tasks.loop.training.records import check_model_name, model_directory
from tasks.models import MLModel, Task
from tasks.signals import leaderboard_inputs_changed


def describe_sources(examples: list[TrainingExample], extra: dict[str, dict] | None = None) -> list[dict]:
    """Summarise ``examples`` by source: counts, label counts, rounds and (validated) example ids."""
    sources = []
    for source in ("seed", "file", "validated", "selection"):
        chosen = [ex for ex in examples if ex.source == source]
        if not chosen:
            continue
        entry = {"source": source, "count": len(chosen)}
        labels = Counter(ex.target["label"] for ex in chosen if "label" in ex.target)
        if labels:
            entry["label_counts"] = dict(sorted(labels.items()))
        if source == "validated":
            entry["per_round"] = {str(r): n for r, n in sorted(Counter(ex.round for ex in chosen).items())}
            entry["example_ids"] = [int(ex.uid.removeprefix("example-")) for ex in chosen]
        entry.update((extra or {}).get(source, {}))
        sources.append(entry)
    return sources


# Keys written when training is requested (validation.retraining.request_retraining; a data-centric
# submission's selection, leaderboard.services.submit_selection), kept by each run.
_REQUEST_KEYS = ("job_id", "requested_by", "requested_at", "validated_at_request", "selection")


class _ProgressWriter:
    """Write ``MLModel.progress`` at most every 2%, and at least every ``BEAT_S`` seconds while it
    advances (one UPDATE, no transaction held): ``updated_at`` is the training's heartbeat, which
    ``tasks/loop/recovery.py`` watches to fail trainings whose worker died."""

    BEAT_S = 5.0

    def __init__(self, ml_model: MLModel):
        self.pk, self.last, self.beat = ml_model.pk, -1.0, 0.0

    def __call__(self, fraction: float) -> None:
        fraction = round(min(max(fraction, 0.0), 1.0), 4)
        now = time.monotonic()
        if fraction - self.last >= 0.02 or fraction >= 1.0 or (fraction > self.last and now - self.beat >= self.BEAT_S):
            MLModel.objects.filter(pk=self.pk).update(progress=min(fraction, 0.99), updated_at=timezone.now())
            self.last, self.beat = fraction, now


def _replace_directory(staging: Path, final: Path) -> None:
    old = final.with_name(final.name + ".old")
    if old.exists():
        shutil.rmtree(old)
    if final.exists():
        final.rename(old)
    staging.rename(final)
    if old.exists():
        shutil.rmtree(old)


def train_model_record(
    ml_model: MLModel, examples: list[TrainingExample], *, data_sources: dict[str, dict] | None = None,
    hp: Hyperparameters | None = None, encoder: BaseEncoder | None = None,
) -> MLModel:
    """Train ``ml_model``'s task on ``examples`` and store the result on the record.

    The record's directory (``settings.MODELS_DIR/<task>/<name>``) is replaced, never
    duplicated, when the same record is trained again. ``data_sources`` adds details per
    source (file path, sha256, skipped rows) to ``training_info["data"]``. On any error the
    record gets ``status=failed`` and a readable ``failure_reason``, and the error is raised
    again for the caller (command or RQ job) to report; a stop of the worker
    (``dynabench.job_stop.JobStopped``) leaves it ``training`` at progress 0, for the job queued again.
    """
    task = ml_model.task
    hp = hp or default_hyperparameters(task)
    encoder = encoder or default_encoder()
    final = model_directory(task, ml_model.name)
    staging = final.with_name(f"{final.name}.training-{os.getpid()}")
    # The record says ``training`` while the run lasts (its progress is the heartbeat ``tasks/loop/recovery.py`` watches).
    MLModel.objects.filter(pk=ml_model.pk).update(
        status=MLModel.Status.TRAINING, progress=0.0, failure_reason="", path=str(final), kind=MLModel.Kind.HF_DIRECTORY,
        updated_at=timezone.now(),
    )
    started, started_at = time.monotonic(), timezone.now()
    try:
        if staging.exists():
            shutil.rmtree(staging)
        # Steps 1-3 (``fine_tuning.train_directory``): verify the encoder, tokenise, fit, save into the staging folder.
        figures = train_directory(task, examples, staging, encoder=encoder, hp=hp, on_progress=_ProgressWriter(ml_model))
        # Step 4: what the run used and did, written next to the weights.
        requested = MLModel.objects.filter(pk=ml_model.pk).values_list("training_info", flat=True).first() or {}
        info = {
            **{key: requested[key] for key in _REQUEST_KEYS if key in requested},
            "task": task.code,
            "kind": task.kind,
            "base_encoder": {"name": encoder.name, "sha256": encoder.sha256},
            "labels": task.labels if task.spec.has_labels else None,
            "examples": len(examples),
            "data": describe_sources(examples, data_sources),
            "examples_file": "training_examples.jsonl",
            "hyperparameters": asdict(hp),
            "figures": figures,
            "started_at": started_at.isoformat(),
            "duration_s": round(time.monotonic() - started, 2),
        }
        (staging / "training_info.json").write_text(json.dumps(info, indent=2), encoding="utf-8")
        with open(staging / "training_examples.jsonl", "w", encoding="utf-8") as fh:
            for ex in examples:
                fh.write(json.dumps({"uid": ex.uid, "source": ex.source, "round": ex.round}) + "\n")
        # Step 5: the registry's checks and the checksum, then the staging folder replaces the old directory.
        info["weights_sha256"] = file_sha256(staging / WEIGHTS_FILE)
        check_model_directory(staging, task=task)  # the registry's own rules, before anything is registered
        checksum = directory_checksum(staging)
        _replace_directory(staging, final)
    except JobStopped:
        # The worker is stopping (dynabench/job_stop.py): the run is not a failure; the job queues itself
        # again (``tasks.jobs.queue_again``) and the record waits for it as it waited for the first.
        shutil.rmtree(staging, ignore_errors=True)
        MLModel.objects.filter(pk=ml_model.pk).update(progress=0.0, updated_at=timezone.now())
        raise
    except Exception as exc:
        shutil.rmtree(staging, ignore_errors=True)
        reason = exc.message if isinstance(exc, RuleError) else f"{type(exc).__name__}: {exc}"
        MLModel.objects.filter(pk=ml_model.pk).update(status=MLModel.Status.FAILED, failure_reason=reason[:2000])
        ml_model.refresh_from_db()
        raise
    # Stored on the record.
    with transaction.atomic():
        MLModel.objects.filter(pk=ml_model.pk).update(
            status=MLModel.Status.UPLOADED, progress=1.0, checksum=checksum, training_info=info, failure_reason=""
        )
        ml_model.refresh_from_db()
        # A retrained model is scored on every dataset of its task (the leaderboard listens).
        leaderboard_inputs_changed.send(sender=MLModel, task=ml_model.task, models=[ml_model])
    ml_model.refresh_from_db()
    return ml_model


def train_new_model(
    *, task: Task, examples: list[TrainingExample], name: str, data_sources: dict[str, dict] | None = None,
    hp: Hyperparameters | None = None, encoder: BaseEncoder | None = None, owner=None, description: str = "",
) -> MLModel:
    """Create an MLModel record named ``name`` for ``task`` (status ``training``) and train it.

    Returns the record with ``status=uploaded``. Raises ``RuleError`` for a bad or taken
    name before anything is created; training errors leave the record ``failed`` and are re-raised.
    """
    check_model_name(task, name)
    if not examples:
        raise RuleError(TrainingErrorCode.NO_EXAMPLES, f"No training examples for task {task.code}.")
    encoder = encoder or default_encoder()
    counts = Counter(ex.source for ex in examples)
    ml_model = MLModel.objects.create(
        task=task, owner=owner, name=name, kind=MLModel.Kind.HF_DIRECTORY, status=MLModel.Status.TRAINING,
        path=str(model_directory(task, name)),
        description=description or (
            f"{encoder.name} fine-tuned for {task.name} on "
            + ", ".join(f"{n} {source} examples" for source, n in sorted(counts.items())) + "."
        ),
    )
    return train_model_record(ml_model, examples, data_sources=data_sources, hp=hp, encoder=encoder)


def train_selection(ml_model: MLModel, *, encoder: BaseEncoder | None = None) -> MLModel:
    """Train a data-centric submission: the task's fixed recipe on exactly the selection stored in
    ``ml_model.training_info["selection"]``, with the recipe's fixed seed.

    The recipe is the kind's ``training_defaults`` (the owner's ``data_centric.recipe`` and
    ``seed``) on the platform's base encoder (``default_encoder``); training is
    ``train_model_record``'s, so the same selection and seed give the same weights and scores.
    Returns the record (``status=uploaded``); errors leave it ``failed`` and are re-raised.
    """
    task = ml_model.task
    try:
        examples = selection_examples(task, list(ml_model.training_info.get("selection") or []))
    except RuleError as error:
        MLModel.objects.filter(pk=ml_model.pk).update(status=MLModel.Status.FAILED, failure_reason=error.message[:2000])
        raise
    sources = {"selection": {"pool": task.spec.training_pool(task.config), "items": len(examples)}}
    return train_model_record(ml_model, examples, data_sources=sources, hp=default_hyperparameters(task), encoder=encoder)
