"""The models every default task gets from its seed data (``DEFAULT_MODELS``): which examples each
learns from, whether its record exists and is intact or needs training, and whether it goes in
the loop of round 1."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

from tasks.data.seed_split import SEED_SPLIT_SALT, seed_data_path
from tasks.loop.training.base_encoder import BaseEncoder
from tasks.loop.training.examples import TrainingExample, seed_examples, seed_rows
from tasks.loop.training.hyperparameters import default_hyperparameters
from tasks.loop.training.records import check_model_name, model_directory, model_files_intact
from tasks.loop.training.runs import train_model_record
from tasks.models import MLModel, Round, Task


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
