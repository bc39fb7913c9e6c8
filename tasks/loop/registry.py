"""The model registry: from an ML model record to a loaded predictor, cached per process.

Usage::

    from tasks.loop.registry import get_predictor
    predictor = get_predictor(ml_model)            # MLModel of kind hf_directory
    predictor.predict([{"text": "The soup was cold."}])  # an endpoint model: tasks/loop/endpoints/
    # classification -> [{"label": "negative", "probs": {"positive": .1, "negative": .8, "neutral": .1}}]
    # extractive_qa  -> [{"answer": "1843", "start": 41, "end": 45, "score": .83}]
    # generation     -> [{"translation": "La soupe était froide."}]

Inputs are dicts keyed by the task's ``config["model_inputs"]``: one text (``text``), a text
pair (``premise``, ``hypothesis``), or ``question`` + ``passage`` for extractive QA. QA
``start``/``end`` are character offsets into the passage (``passage[start:end] == answer``).

Loading. Only local Hugging Face directories that pass ``tasks.loop.model_checks.check_model_directory``
(safetensors, no pickle, no custom code, labels matching the task) are loaded, with
``local_files_only=True``, ``use_safetensors=True`` and ``trust_remote_code=False``; a load
that leaves any weight missing (a randomly initialised head) is refused too. Refusals raise
``RuleError`` with a message saying what to fix. A relative ``MLModel.path`` is read under
``settings.MODELS_DIR``. A model whose artefact is published to the storage is read from there,
through this process's local cache by checksum (``tasks/loop/artefacts.py``), so a worker on another
machine loads the same bytes.

Cache. Predictors are kept per process, keyed by ``(model pk, path, checksum)`` so that a
changed artefact reloads, evicted least-recently-used once there are more than
``settings.DYNABENCH_REGISTRY_MAX_MODELS`` (default 4) or their parameters and buffers take
more than ``settings.DYNABENCH_REGISTRY_MAX_GIB`` (default 4 GiB). The model just loaded is
never evicted, even if it alone exceeds the memory bound. A lock per key makes concurrent
callers wait for one load; prediction itself runs concurrently (tokenisation is serialised
per predictor, because a fast tokenizer's truncation state is not thread-safe). A forked
child starts with an empty cache and fresh locks (run gunicorn without ``--preload`` so that
each worker warms up its own models, see ``tasks/apps.py``).

Inference. ``model.eval()`` under ``torch.inference_mode()``, on CUDA when available, else
CPU (torch's default thread count). Inputs are tokenised in one call, sorted by token
length, cut into batches of ``batch_size`` rows (default ``DEFAULT_BATCH_SIZE``, measured by
``benchmarks/inference.py``) and at most ``MAX_BATCH_TOKENS`` padded tokens (which bounds the
memory of a batch of long inputs), padded per batch only to that batch's longest input, and
put back in the caller's order. Classification truncates long inputs to the model's maximum
length (``longest_first`` for pairs). Extractive QA cuts questions to ``MAX_QUESTION_TOKENS``
and slides windows of at most ``QA_MAX_LENGTH`` tokens with a stride of ``QA_STRIDE`` over
the passage; see ``ExtractiveQAPredictor``.
"""

from __future__ import annotations  # torch is imported where it is used: see _torch()

import logging
import os
import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np
from django.conf import settings

from dynabench.errors import RuleError
from tasks.loop import artefacts
from tasks.loop.model_checks import ModelCheckCode, check_model_directory

logger = logging.getLogger(__name__)

DEFAULT_BATCH_SIZE = 64
MAX_BATCH_TOKENS = 8192
QA_MAX_LENGTH = 384
QA_STRIDE = 128
MAX_QUESTION_TOKENS = 64
MAX_ANSWER_TOKENS = 30


def _torch():
    """Return the ``torch`` module, imported on first use.

    Not at module level: every Django process imports this module through the URL configuration
    (web workers, each ``manage.py`` command), and torch's import took 9-25 s wall on 2 loaded
    cores, so a fresh ``make run`` answered its home page that much later. A process imports it
    when it first loads a model.
    """
    import torch

    return torch


def _device() -> torch.device:
    torch = _torch()
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Predictor:
    """A loaded model and tokenizer for one task; call ``predict``.

    Attributes: ``kind`` (``classification`` | ``extractive_qa``), ``model_inputs`` (the
    input field names, in order), ``device``, ``batch_size``, ``max_length`` (tokens),
    ``nbytes`` (bytes of parameters and buffers).
    """

    kind = ""

    def __init__(self, *, model, tokenizer, model_inputs, device, batch_size=None):
        self.model = model
        self.tokenizer = tokenizer
        self.model_inputs = list(model_inputs)
        self.device = device
        self.batch_size = int(batch_size or DEFAULT_BATCH_SIZE)
        self.max_length = _max_length(model.config, tokenizer)
        self.nbytes = sum(t.numel() * t.element_size() for t in (*model.parameters(), *model.buffers()))
        # Padding is only safe with an attention mask, so it is always passed.
        self._input_names = ["input_ids", "attention_mask"] + (
            ["token_type_ids"] if "token_type_ids" in tokenizer.model_input_names else []
        )
        self._pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        self._pad_type_id = getattr(tokenizer, "pad_token_type_id", 0) or 0
        self._left_pad = tokenizer.padding_side == "left"
        # Fast tokenizers keep truncation settings as mutable state: one caller at a time.
        self._tokenizer_lock = threading.Lock()

    def predict(self, inputs: list[dict], *, batch_size: int | None = None) -> list[dict]:
        """Return one output dict per input dict, in the same order (see the module docstring)."""
        raise NotImplementedError

    @classmethod
    def for_task(cls, task, hf_config: dict, **common) -> "Predictor":
        """Return a predictor of this class for ``task`` from a checked model's ``config.json`` and
        the common arguments (``model``, ``tokenizer``, ``model_inputs``, ``device``, ``batch_size``)."""
        return cls(**common)

    def _fields(self, inputs) -> list[list[str]]:
        """Return, for each model input field, the list of its values; refuse malformed inputs."""
        if isinstance(inputs, dict) or not hasattr(inputs, "__iter__"):
            raise RuleError(ModelCheckCode.BAD_INPUT, "predict() takes a list of input dicts.")
        columns = [[] for _ in self.model_inputs]
        for n, item in enumerate(inputs):
            if not isinstance(item, dict):
                raise RuleError(ModelCheckCode.BAD_INPUT, f"Input {n} is not a dict of {self.model_inputs}.")
            for column, name in zip(columns, self.model_inputs):
                value = item.get(name)
                if not isinstance(value, str):
                    raise RuleError(
                        ModelCheckCode.BAD_INPUT, f"Input {n} needs the text field '{name}' (fields: {self.model_inputs}).",
                        field=name,
                    )
                column.append(value)
        return columns

    def _batches(self, lengths: list[int], batch_size: int | None):
        """Yield lists of row indices: rows sorted by length, cut into batches of at most
        ``batch_size`` rows and ``MAX_BATCH_TOKENS`` padded tokens (a single row may exceed it)."""
        size = max(1, int(batch_size or self.batch_size))
        batch = []
        for row in sorted(range(len(lengths)), key=lengths.__getitem__):
            if batch and (len(batch) == size or (len(batch) + 1) * lengths[row] > MAX_BATCH_TOKENS):
                yield batch
                batch = []
            batch.append(row)
        if batch:
            yield batch

    def _tensors(self, encoding, rows: list[int]) -> dict[str, torch.Tensor]:
        """Pad the rows ``rows`` of an unpadded encoding to their longest and return model tensors."""
        torch = _torch()
        ids = [encoding["input_ids"][r] for r in rows]
        lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
        width = int(lengths.max())
        positions = np.arange(width)
        mask = (positions >= (width - lengths)[:, None]) if self._left_pad else (positions < lengths[:, None])
        out = {}
        for name in self._input_names:
            if name == "attention_mask":
                out[name] = torch.from_numpy(mask.astype(np.int64))
                continue
            if name not in encoding:
                continue
            fill = self._pad_id if name == "input_ids" else self._pad_type_id
            array = np.full((len(rows), width), fill, dtype=np.int64)
            array[mask] = np.fromiter(
                (v for r in rows for v in encoding[name][r]), dtype=np.int64, count=int(lengths.sum())
            )
            out[name] = torch.from_numpy(array)
        if self.device.type != "cpu":
            out = {k: v.to(self.device, non_blocking=True) for k, v in out.items()}
        return out


def _max_length(config, tokenizer) -> int:
    """Return the longest input in tokens the model takes: the tokenizer's and the positions' limit."""
    limits = [int(tokenizer.model_max_length)] if 0 < (tokenizer.model_max_length or 0) < 100_000 else []
    positions = getattr(config, "max_position_embeddings", None)
    if positions:
        # RoBERTa-style models reserve padding_idx + 1 positions.
        offset = (config.pad_token_id or 0) + 1 if config.model_type in {"roberta", "xlm-roberta", "camembert"} else 0
        limits.append(int(positions) - offset)
    return min(limits) if limits else 512


class ClassificationPredictor(Predictor):
    """Sequence classification over one text or a text pair.

    ``labels`` lists the task label of each model output index; ``predict`` returns
    ``{"label": str, "probs": {task label: softmax probability}}`` per input, ``probs`` in
    the task's label order.
    """

    kind = "classification"

    @classmethod
    def for_task(cls, task, hf_config: dict, **common) -> "ClassificationPredictor":
        """Map the model's outputs to the task's labels (``task.spec.check_model_config``)."""
        return cls(labels=task.spec.check_model_config(hf_config, task), task_labels=task.labels, **common)

    def __init__(self, *, labels: list[str], task_labels: list[str], **kwargs):
        super().__init__(**kwargs)
        self.labels = list(labels)
        # Model index of each task label, so probs come out in the task's label order.
        self._task_order = [self.labels.index(label) for label in task_labels]
        self.task_labels = list(task_labels)

    def predict(self, inputs, *, batch_size=None):
        columns = self._fields(inputs)
        n = len(columns[0])
        if n == 0:
            return []
        with self._tokenizer_lock:
            encoding = self.tokenizer(
                *columns, truncation=True, max_length=self.max_length, padding=False,
                return_attention_mask=False,
            )
        lengths = [len(ids) for ids in encoding["input_ids"]]
        probs = np.empty((n, len(self.labels)), dtype=np.float32)
        with _torch().inference_mode():
            for rows in self._batches(lengths, batch_size):
                logits = self.model(**self._tensors(encoding, rows)).logits
                probs[rows] = logits.float().softmax(-1).cpu().numpy()
        probs = probs[:, self._task_order]
        best = probs.argmax(1).tolist()
        labels = self.task_labels
        return [
            {"label": labels[b], "probs": dict(zip(labels, row))}
            for b, row in zip(best, probs.tolist())
        ]


class ExtractiveQAPredictor(Predictor):
    """Extractive question answering: the best span of the passage for the question.

    Long passages are read in windows of ``qa_max_length`` tokens (at most the model's
    maximum) that overlap by ``stride`` tokens (``return_overflowing_tokens``), each window
    holding the question (cut to ``max_question_tokens``) and part of the passage. In every
    window, start and end probabilities are the softmax of the start and end logits over
    that window's passage tokens; a span's score is p(start) · p(end), with start ≤ end and
    at most ``max_answer_tokens`` tokens; the best span over all windows wins (the scoring
    of the BERT SQuAD baseline, Devlin et al. 2019, §4.2, and of transformers'
    question-answering pipeline). Output per input:
    ``{"answer": passage[start:end], "start": int, "end": int, "score": float in [0, 1]}``,
    character offsets into the passage; an empty passage gives ``answer=""`` and score 0.
    """

    kind = "extractive_qa"

    def __init__(self, *, max_answer_tokens=MAX_ANSWER_TOKENS, **kwargs):
        super().__init__(**kwargs)
        self.qa_max_length = min(QA_MAX_LENGTH, self.max_length)
        self.stride = min(QA_STRIDE, self.qa_max_length // 4)
        self.max_question_tokens = min(MAX_QUESTION_TOKENS, self.qa_max_length // 2)
        self.max_answer_tokens = max_answer_tokens

    def _cut_questions(self, questions: list[str]) -> list[str]:
        """Return the questions, each cut at its ``max_question_tokens``-th token."""
        encoding = self.tokenizer(questions, add_special_tokens=False, return_offsets_mapping=True)
        cut = []
        for question, offsets in zip(questions, encoding["offset_mapping"]):
            if len(offsets) > self.max_question_tokens:
                question = question[: offsets[self.max_question_tokens - 1][1]]
            cut.append(question)
        return cut

    def predict(self, inputs, *, batch_size=None):
        questions, passages = self._fields(inputs)
        n = len(questions)
        if n == 0:
            return []
        with self._tokenizer_lock:
            questions = self._cut_questions(questions)
            encoding = self.tokenizer(
                questions, passages, truncation="only_second", max_length=self.qa_max_length,
                stride=self.stride, return_overflowing_tokens=True, return_offsets_mapping=True,
                padding=False, return_attention_mask=False,
            )
            passage_tokens = [
                np.array([s == 1 for s in encoding.sequence_ids(f)], dtype=bool)
                for f in range(len(encoding["input_ids"]))
            ]
        sample_of = encoding["overflow_to_sample_mapping"]
        best = [(0.0, 0, 0)] * n  # (score, start char, end char) per input
        with _torch().inference_mode():
            for rows in self._batches([len(ids) for ids in encoding["input_ids"]], batch_size):
                output = self.model(**self._tensors(encoding, rows))
                spans = self._best_spans(output.start_logits, output.end_logits, rows, passage_tokens)
                for f, (score, i, j) in zip(rows, spans):
                    sample = sample_of[f]
                    if i >= 0 and score > best[sample][0]:
                        offsets = encoding["offset_mapping"][f]
                        best[sample] = (score, offsets[i][0], offsets[j][1])
        return [
            {"answer": passage[start:end], "start": start, "end": end, "score": score}
            for passage, (score, start, end) in zip(passages, best)
        ]

    def _best_spans(self, start_logits, end_logits, rows, passage_tokens) -> list[tuple[float, int, int]]:
        """Return (score, start token, end token) of the best span of each window; (0, -1, -1) if none."""
        torch = _torch()
        width = start_logits.shape[1]
        mask = np.zeros((len(rows), width), dtype=bool)
        for k, f in enumerate(rows):
            tokens = passage_tokens[f]
            if self._left_pad:
                mask[k, width - len(tokens) :] = tokens
            else:
                mask[k, : len(tokens)] = tokens
        mask = torch.from_numpy(mask).to(start_logits.device)
        neg = torch.finfo(torch.float32).min
        p_start = start_logits.float().masked_fill(~mask, neg).softmax(-1).masked_fill(~mask, 0.0)
        p_end = end_logits.float().masked_fill(~mask, neg).softmax(-1).masked_fill(~mask, 0.0)
        band = torch.ones(width, width, dtype=torch.bool, device=mask.device)
        band = band.triu().tril(self.max_answer_tokens - 1)  # start <= end < start + max_answer_tokens
        scores = (p_start[:, :, None] * p_end[:, None, :]).masked_fill(~band, 0.0).flatten(1)
        top, where = scores.max(1)
        has_passage = mask.any(1)
        return [
            (float(s), w // width, w % width) if ok else (0.0, -1, -1)
            for s, w, ok in zip(top.tolist(), where.tolist(), has_passage.tolist())
        ]


DEFAULT_MAX_NEW_TOKENS = 128


class GenerationPredictor(Predictor):
    """Sequence-to-sequence generation (translation) with ``model.generate``.

    Sources are truncated to the model's maximum length, batched by length like the other
    predictors, and decoded greedily (one beam, no sampling: the output is deterministic) for
    at most ``max_new_tokens`` tokens (the task's ``max_new_tokens``, default 128). Output per
    input: ``{"translation": text}`` (special tokens removed).
    """

    kind = "generation"

    @classmethod
    def for_task(cls, task, hf_config: dict, **common) -> "GenerationPredictor":
        """Take ``max_new_tokens`` from the task's config."""
        return cls(max_new_tokens=int(task.config.get("max_new_tokens", DEFAULT_MAX_NEW_TOKENS)), **common)

    def __init__(self, *, max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS, **kwargs):
        super().__init__(**kwargs)
        self.max_new_tokens = int(max_new_tokens)
        self._input_names = ["input_ids", "attention_mask"]

    def predict(self, inputs, *, batch_size=None):
        (sources,) = self._fields(inputs)
        if not sources:
            return []
        with self._tokenizer_lock:
            encoding = self.tokenizer(
                sources, truncation=True, max_length=self.max_length, padding=False, return_attention_mask=False,
            )
        lengths = [len(ids) for ids in encoding["input_ids"]]
        out: list[str] = [""] * len(sources)
        with _torch().inference_mode():
            for rows in self._batches(lengths, batch_size):
                generated = self.model.generate(
                    **self._tensors(encoding, rows), max_new_tokens=self.max_new_tokens, num_beams=1, do_sample=False,
                )
                texts = self.tokenizer.batch_decode(generated, skip_special_tokens=True)
                for row, text in zip(rows, texts):
                    out[row] = text.strip()
        return [{"translation": text} for text in out]


def _resolve(path) -> Path:
    path = Path(path)
    return path if path.is_absolute() else Path(settings.MODELS_DIR) / path


def load_predictor(path, *, task, batch_size: int | None = None) -> Predictor:
    """Check and load the model directory ``path`` for ``task``; return a new, uncached Predictor.

    For directories not (yet) registered: submission checks, training. Raises ``RuleError``
    (codes in ``tasks.loop.model_checks.ModelCheckCode``) when the directory is refused or fails to load.
    """
    from django.utils.module_loading import import_string

    torch = _torch()
    path = _resolve(path)
    config = check_model_directory(path, task=task)
    auto = task.spec.head_class()
    device = _device()
    try:
        tokenizer = task.spec.load_processor(path)
        model, info = auto.from_pretrained(
            path, local_files_only=True, use_safetensors=True, trust_remote_code=False,
            dtype=torch.float32, output_loading_info=True,
        )
    except (OSError, ValueError, KeyError, TypeError, RuntimeError, ImportError) as error:
        raise RuleError(
            ModelCheckCode.LOAD_FAILED, f"The model directory could not be loaded: {error}", field="model"
        ) from error
    broken = sorted(info.get("missing_keys", ())) + sorted(str(k) for k in info.get("mismatched_keys", ()))
    if broken:
        raise RuleError(
            ModelCheckCode.WRONG_ARCHITECTURE,
            f"The weights do not fit the declared architecture ({', '.join(broken[:5])} missing or of the wrong "
            "shape); a head would be left random. Save the trained model with save_pretrained().",
            field="model",
        )
    model.to(device).eval()
    common = {"model": model, "tokenizer": tokenizer, "model_inputs": task.config["model_inputs"], "device": device,
              "batch_size": batch_size}
    return import_string(task.spec.predictor_class).for_task(task, config, **common)


# ---- the per-process cache ---------------------------------------------------------------

_cache: "OrderedDict[tuple, Predictor]" = OrderedDict()
_cache_lock = threading.Lock()
_key_locks: dict[tuple, threading.Lock] = {}
_loads = 0


def _reset_after_fork() -> None:
    """In a forked child: fresh locks (a parent thread may have held one) and an empty cache."""
    global _cache_lock, _loads
    _cache_lock = threading.Lock()
    _cache.clear()
    _key_locks.clear()
    _loads = 0


os.register_at_fork(after_in_child=_reset_after_fork)


def _key(model) -> tuple:
    return (model.pk, str(_resolve(model.path)), model.checksum or "")


def get_predictor(model) -> Predictor:
    """Return the cached Predictor of the MLModel ``model`` (kind ``hf_directory``), loading it once;
    for a model of kind ``endpoint``, an ``EndpointPredictor`` that calls its API
    (``tasks/loop/endpoints/``; same ``predict`` contract, outputs carry an ``endpoint`` record).

    Raises ``RuleError`` when the record is a predictions file, or when the directory
    is refused or fails to load (see ``load_predictor``).
    """
    if model.is_endpoint:
        from tasks.loop.endpoints.predictor import predictor_for

        return predictor_for(model)
    if not model.runs_in_registry:
        raise RuleError(
            ModelCheckCode.WRONG_KIND, f"Model '{model.name}' is a {model.get_kind_display()}; only "
            "Hugging Face directories run in the registry.", field="model",
        )
    if not model.path:
        raise RuleError(ModelCheckCode.NOT_A_DIRECTORY, f"Model '{model.name}' has no path.", field="model")
    key = _key(model)
    with _cache_lock:
        predictor = _cache.get(key)
        if predictor is not None:
            _cache.move_to_end(key)
            return predictor
        key_lock = _key_locks.setdefault(key, threading.Lock())
    with key_lock:
        with _cache_lock:
            predictor = _cache.get(key)
            if predictor is not None:
                _cache.move_to_end(key)
                return predictor
        try:
            predictor = load_predictor(artefacts.local_path(model), task=model.task)
        except BaseException:
            with _cache_lock:
                _key_locks.pop(key, None)
            raise
        _store(key, predictor)
    return predictor


def _store(key: tuple, predictor: Predictor) -> None:
    global _loads
    max_models = max(1, int(getattr(settings, "DYNABENCH_REGISTRY_MAX_MODELS", 4)))
    max_bytes = float(getattr(settings, "DYNABENCH_REGISTRY_MAX_GIB", 4.0)) * 2**30
    with _cache_lock:
        _loads += 1
        for old in [k for k in _cache if k[0] == key[0] and k != key]:  # a changed artefact replaces the old one
            del _cache[old]
            _key_locks.pop(old, None)
        _cache[key] = predictor
        while len(_cache) > 1 and (
            len(_cache) > max_models or sum(p.nbytes for p in _cache.values()) > max_bytes
        ):
            evicted, _ = _cache.popitem(last=False)
            _key_locks.pop(evicted, None)
            logger.info("model registry: evicted model %s (%s)", evicted[0], evicted[1])
    logger.info("model registry: loaded model %s from %s (%.1f MiB)", key[0], key[1], predictor.nbytes / 2**20)


def cache_info() -> dict:
    """Return ``{"models": [(pk, path, checksum), ...] oldest first, "nbytes": int, "loads": int}``."""
    with _cache_lock:
        return {"models": list(_cache), "nbytes": sum(p.nbytes for p in _cache.values()), "loads": _loads}


def prepare_to_fork() -> None:
    """Do once, in a process that forks work horses (``leaderboard.worker.ReapingWorker``), the
    set-up every model load repeats in a fresh process: transformers builds its table of checkpoint
    conversions (about a thousand regular expressions, 0.2 s) on the first ``from_pretrained``.
    Forked horses inherit it. Loads no model and starts no thread; a transformers without that
    table is left alone."""
    try:
        from transformers.conversion_mapping import get_checkpoint_conversion_mapping
    except ImportError:
        return
    get_checkpoint_conversion_mapping("bert")


def clear_cache() -> None:
    """Drop every cached predictor (models in use by running predictions stay alive until they finish)."""
    global _loads
    with _cache_lock:
        _cache.clear()
        _key_locks.clear()
        _loads = 0


def warm_up(models) -> str:
    """Load each MLModel of ``models`` of kind ``hf_directory`` into the cache and run one forward on
    a context of its open round (``_first_forward``); return a one-line summary.

    The first forward of a process pays for what loading does not (torch's first kernels and
    buffers, the tokenizer's first call), so after the warm-up the first example is as fast as
    later ones. A refused or broken model is logged and skipped, so one bad record never stops the
    process.
    """
    loaded, failed = 0, 0
    for model in models:
        if not model.runs_in_registry:
            continue
        try:
            predictor = get_predictor(model)
            loaded += 1
        except RuleError as error:
            failed += 1
            logger.warning("model registry: could not warm up model %s: %s", model.pk, error.message)
            continue
        _first_forward(model, predictor)
    return f"Warmed up {loaded} model(s), {failed} failed."


def _first_forward(model, predictor) -> None:
    """One forward of ``predictor`` on a context of ``model``'s open round, its annotator fields filled
    with a placeholder; nothing when the round has no context or the kind builds no input from it."""
    from tasks.models import Context, Round

    context = Context.objects.filter(round__target_models=model, round__status=Round.Status.OPEN).first()
    if context is None:
        return
    task = model.task
    written = {field["name"]: "warm up" for field in task.config.get("input_fields", [])}
    try:
        predictor.predict([task.spec.model_input(task.config, {**context.data, **written})])
    except Exception as error:  # noqa: BLE001 - a warm-up is an optimisation, never a failure
        logger.info("model registry: no first forward for model %s (%s)", model.pk, type(error).__name__)


def models_in_the_loop():
    """Return the queryset of Hugging Face MLModels in the loop of an open round."""
    from tasks.models import MLModel, Round

    return (
        MLModel.objects.filter(kind=MLModel.Kind.HF_DIRECTORY, rounds_in_loop__status=Round.Status.OPEN)
        .select_related("task")
        .distinct()
    )
