"""The training settings (``Hyperparameters``): a task kind's defaults, and how many torch threads
a training uses."""

from __future__ import annotations

import os
from dataclasses import dataclass

from django.conf import settings

from tasks.models import Task


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
