"""The training core: fine-tune a base encoder with the task kind's fresh head on tokenised
examples (a plain PyTorch loop: AdamW, linear warm-up then decay, clipped gradients, seeded
shuffled mini-batches) and save the Hugging Face directory. Knows nothing of records."""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Callable

from dynabench import job_stop
from dynabench.errors import RuleError
from tasks.loop.training.base_encoder import BaseEncoder, verify_base_encoder
from tasks.loop.training.error_codes import TrainingErrorCode
from tasks.loop.training.examples import TrainingExample
from tasks.loop.training.hyperparameters import Hyperparameters, training_threads
from tasks.models import Task

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
            if job_stop.requested():  # the worker is stopping: give way between two batches (dynabench/job_stop.py)
                raise job_stop.JobStopped(f"training stopped at step {step} of {total}")
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
