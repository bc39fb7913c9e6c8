"""Tasks, rounds, contexts, ML model records and datasets: the shared core of the schema.

Counts (examples collected, fooled, verified fooled) are never stored on these rows:
they are derived by queries in ``*/selectors.py`` so that they cannot drift.
"""

import secrets

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q

from tasks.config import validate_task_config


class TaskKind(models.TextChoices):
    CLASSIFICATION = "classification", "Classification"
    EXTRACTIVE_QA = "extractive_qa", "Extractive question answering"


class Task(models.Model):
    """A task such as NLI or sentiment: its labels, input fields and rules live in ``config``.

    ``config`` is checked against ``tasks/config.py``'s JSON Schema on every save
    (``full_clean`` is called from ``save``); a broken config raises
    ``django.core.exceptions.ValidationError`` naming the field at fault.
    """

    code = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=32, choices=TaskKind.choices)
    config = models.JSONField(default=dict)
    instructions = models.TextField(blank=True, help_text="Markdown, rendered safely.")
    owners = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="owned_tasks")
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["code"]

    def __str__(self):
        return self.code

    def clean(self):
        errors = validate_task_config(self.config, kind=self.kind)
        if errors:
            raise ValidationError({"config": errors})

    def save(self, *args, **kwargs):
        self.full_clean(exclude=["owners"], validate_unique=False)
        super().save(*args, **kwargs)

    # Config accessors: one place that knows the config's shape and its defaults.
    @property
    def labels(self) -> list[str]:
        return list(self.config.get("labels", []))

    @property
    def validations_needed(self) -> int:
        return int(self.config.get("validations_needed", 3))

    def current_round(self):
        """Return the open round with the highest number, else the highest round, else None."""
        rounds = self.rounds.order_by("-number")
        return rounds.filter(status=Round.Status.OPEN).first() or rounds.first()

    def is_owner(self, user) -> bool:
        if not user.is_authenticated:
            return False
        return user.is_superuser or self.owners.filter(pk=user.pk).exists()


class Round(models.Model):
    """One round of collection for a task, with the target models in the loop."""

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        CLOSED = "closed", "Closed"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="rounds")
    number = models.PositiveIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    target_models = models.ManyToManyField("tasks.MLModel", blank=True, related_name="rounds_in_loop")
    secret = models.CharField(
        max_length=64, default=secrets.token_hex, editable=False,
        help_text="Per-round secret used to anonymise user ids in exports.",
    )
    start = models.DateTimeField(null=True, blank=True)
    end = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["task", "number"]
        constraints = [
            models.UniqueConstraint(fields=["task", "number"], name="round_number_unique_per_task"),
            models.CheckConstraint(condition=Q(number__gte=1), name="round_number_positive"),
        ]

    def __str__(self):
        return f"{self.task.code} round {self.number}"


class Context(models.Model):
    """What an annotator is shown: a passage (QA), a premise (NLI), a prompt sentence (sentiment).

    ``data`` holds the task's context fields, e.g. ``{"premise": "..."}``.
    ``times_used`` is bumped with ``F()`` in the same transaction as the example that used it.
    """

    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="contexts")
    uid = models.CharField(max_length=128)
    data = models.JSONField(default=dict)
    tag = models.CharField(max_length=64, blank=True, default="")
    times_used = models.PositiveIntegerField(default=0)
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["round", "id"]
        constraints = [models.UniqueConstraint(fields=["round", "uid"], name="context_uid_unique_per_round")]
        indexes = [models.Index(fields=["round", "active", "times_used"], name="context_least_used")]

    def __str__(self):
        return f"{self.round} context {self.uid}"


class MLModel(models.Model):
    """An ML model record: a Hugging Face directory (safetensors) or an uploaded predictions file."""

    class Kind(models.TextChoices):
        HF_DIRECTORY = "hf_directory", "Hugging Face directory (safetensors)"
        PREDICTIONS = "predictions", "Predictions file"

    class Status(models.TextChoices):
        UPLOADED = "uploaded", "Uploaded"
        TRAINING = "training", "Training"
        QUEUED = "queued", "Queued"
        EVALUATING = "evaluating", "Evaluating"
        EVALUATED = "evaluated", "Evaluated"
        FAILED = "failed", "Failed"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="models")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="ml_models"
    )
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True, help_text="Model card, Markdown.")
    kind = models.CharField(max_length=32, choices=Kind.choices, default=Kind.HF_DIRECTORY)
    path = models.CharField(max_length=1024, blank=True, help_text="Local directory or file of the artefact.")
    checksum = models.CharField(max_length=64, blank=True, help_text="sha256 of the artefact.")
    published = models.BooleanField(default=False)
    anonymous = models.BooleanField(default=False)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.UPLOADED)
    failure_reason = models.TextField(blank=True)
    progress = models.FloatField(default=0.0, help_text="0..1 progress of training or evaluation.")
    training_info = models.JSONField(
        default=dict, blank=True, help_text="For trained models: data sources, example counts, hyper-parameters."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["task", "published", "status"], name="mlmodel_leaderboard"),
            models.Index(fields=["owner", "created_at"], name="mlmodel_owner_daily"),
        ]

    def __str__(self):
        return f"{self.name} ({self.task.code})"


class Dataset(models.Model):
    """A named set of items of a task, optionally tied to a round, scored by evaluation runs.

    ``access``: ``scoring`` (counts towards Dynascore), ``standard`` (evaluated, not scored),
    ``hidden`` (labels never leave the server). ``weight`` is its weight within the Dynascore.
    """

    class Access(models.TextChoices):
        SCORING = "scoring", "Scoring"
        STANDARD = "standard", "Standard"
        HIDDEN = "hidden", "Hidden"

    class Split(models.TextChoices):
        NONE = "", "—"
        TRAIN = "train", "Train"
        DEV = "dev", "Dev"
        TEST = "test", "Test"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="datasets")
    round = models.ForeignKey(Round, on_delete=models.SET_NULL, null=True, blank=True, related_name="datasets")
    name = models.SlugField(max_length=128)
    description = models.TextField(blank=True)
    access = models.CharField(max_length=16, choices=Access.choices, default=Access.SCORING)
    split = models.CharField(max_length=8, choices=Split.choices, blank=True, default="")
    weight = models.FloatField(default=1.0)
    source = models.CharField(max_length=1024, blank=True, help_text="File it was imported from.")
    checksum = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["task", "round__number", "name"]
        constraints = [
            models.UniqueConstraint(fields=["task", "name"], name="dataset_name_unique_per_task"),
            models.CheckConstraint(condition=Q(weight__gte=0), name="dataset_weight_nonnegative"),
        ]

    def __str__(self):
        return f"{self.task.code}/{self.name}"


class DatasetItem(models.Model):
    """One item of a dataset: ``input`` holds the task's input fields, ``target`` the gold answer.

    ``target`` is ``{"label": "..."}`` for classification and
    ``{"answers": [{"text": "...", "answer_start": 12}, ...]}`` for extractive QA.
    """

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="items")
    uid = models.CharField(max_length=128)
    input = models.JSONField(default=dict)
    target = models.JSONField(default=dict)
    tag = models.CharField(max_length=64, blank=True, default="")
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["dataset", "id"]
        constraints = [models.UniqueConstraint(fields=["dataset", "uid"], name="item_uid_unique_per_dataset")]

    def __str__(self):
        return f"{self.dataset} {self.uid}"
