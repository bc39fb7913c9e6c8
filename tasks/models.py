"""Tasks, rounds, contexts, ML model records and datasets: the shared core of the schema.

Counts (examples collected, fooled, verified fooled) are never stored on these rows:
they are derived by queries in ``*/selectors.py`` so that they cannot drift.
"""

import secrets

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q

from tasks.kinds.config import validate_task_config
from tasks.kinds import TaskKindSpec, get_spec, kind_choices

TaskKind = models.TextChoices("TaskKind", [(name.upper(), (name, label)) for name, label in kind_choices()])
"""The registered task kinds (``tasks/kinds/``) as Django choices, e.g. ``TaskKind.CLASSIFICATION``."""


class Task(models.Model):
    """A task such as NLI or sentiment: its labels, input fields and rules live in ``config``.

    ``config`` is checked against ``tasks/kinds/config.py``'s JSON Schema on every save
    (``full_clean`` is called from ``save``); a broken config raises
    ``django.core.exceptions.ValidationError`` naming the field at fault.
    """

    code = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=32, choices=TaskKind.choices)
    config = models.JSONField(default=dict)
    instructions = models.TextField(blank=True, help_text="Markdown, rendered safely.")
    content_warning = models.TextField(
        blank=True, help_text="Shown before a person's first example of this task (e.g. for offensive data); empty: none."
    )
    version = models.PositiveIntegerField(
        default=1, help_text="Bumped by every settings change; a save made from an older version is refused."
    )
    owners = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="owned_tasks")
    active = models.BooleanField(default=True)
    collecting = models.BooleanField(
        default=True,
        help_text="Off: an evaluation-only benchmark (no create or validation pages; only datasets, "
        "submissions and the leaderboard).",
    )
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

    @property
    def spec(self) -> TaskKindSpec:
        """What this task's kind means (fields, target, model-wrong rule, metrics, display): ``tasks/kinds/``."""
        return get_spec(self.kind)

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
    """One round of collection for a task, with the target models in the loop.

    ``loop_rule`` picks which of several target models answers each new example
    (``annotation.loop_choice.model_in_loop``): ``round_robin`` (the model with the fewest
    examples in this round so far) or ``least_fooled`` (the model with the lowest fooling
    rate in this round so far).
    """

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        CLOSED = "closed", "Closed"

    class LoopRule(models.TextChoices):
        ROUND_ROBIN = "round_robin", "Round-robin (each model in turn)"
        LEAST_FOOLED = "least_fooled", "Least fooled so far"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="rounds")
    number = models.PositiveIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    target_models = models.ManyToManyField("tasks.MLModel", blank=True, related_name="rounds_in_loop")
    loop_rule = models.CharField(max_length=16, choices=LoopRule.choices, default=LoopRule.ROUND_ROBIN)
    secret = models.CharField(
        max_length=64, default=secrets.token_hex, editable=False,
        help_text="Per-round secret used to anonymise user ids in exports.",
    )
    start = models.DateTimeField(null=True, blank=True)
    end = models.DateTimeField(null=True, blank=True)
    endpoint_call_budget = models.PositiveIntegerField(
        null=True, blank=True,
        help_text="Most calls to endpoint models in this round (blank: no limit); reserved and counted in RoundSpend.",
    )
    endpoint_token_budget = models.PositiveBigIntegerField(
        null=True, blank=True,
        help_text="Most tokens (prompt + completion, as the endpoint reports them) endpoint models may use in this round.",
    )
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

    def clean(self):
        """Refuse ``data`` whose keys are not the task's context fields, or a field left empty."""
        if self.round_id is None:
            return
        names = [f["name"] for f in self.round.task.config.get("context_fields", [])]
        if not isinstance(self.data, dict):
            raise ValidationError({"data": f"must be a JSON object with the fields {', '.join(names)}"})
        unknown = sorted(set(self.data) - set(names))
        missing = [n for n in names if not isinstance(self.data.get(n), str) or not self.data[n].strip()]
        problems = []
        if unknown:
            problems.append(f"unknown field(s) {', '.join(unknown)}")
        if missing:
            problems.append(f"missing or empty text for {', '.join(missing)}")
        if problems:
            raise ValidationError(
                {"data": f"{'; '.join(problems)}: task {self.round.task.code} takes {', '.join(names)}"}
            )


class MLModel(models.Model):
    """An ML model record: a Hugging Face directory (safetensors) or an uploaded predictions file.

    ``status``: ``unpacking`` (an uploaded archive waits for its unpacking job), ``training``,
    ``uploaded``, ``queued``/``evaluating`` (runs pending), ``evaluated``, or ``failed`` with
    ``failure_reason``.
    """

    class Kind(models.TextChoices):
        HF_DIRECTORY = "hf_directory", "Hugging Face directory (safetensors)"
        PREDICTIONS = "predictions", "Predictions file"
        ENDPOINT = "endpoint", "Endpoint (OpenAI-compatible API)"

    class Status(models.TextChoices):
        UPLOADED = "uploaded", "Uploaded"
        UNPACKING = "unpacking", "Unpacking"
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
    # An uploaded archive waits in the storage (status ``unpacking``) until the job
    # ``leaderboard.jobs.unpack_model`` unpacks it: where it is, the unpacked bytes it declares
    # (counted against the owner's storage quota meanwhile), the RQ job and how many jobs started.
    archive = models.CharField(max_length=1024, blank=True, help_text="Storage name of the archive waiting to be unpacked.")
    archive_kept_bytes = models.BigIntegerField(default=0, help_text="Unpacked bytes of the files the archive keeps.")
    unpack_job_id = models.CharField(max_length=100, blank=True, help_text="The RQ job unpacking the archive.")
    unpack_attempts = models.PositiveSmallIntegerField(default=0, help_text="Unpacking jobs started so far.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["task", "published", "status"], name="mlmodel_leaderboard"),
            models.Index(fields=["owner", "created_at"], name="mlmodel_owner_daily"),
        ]

    @property
    def is_predictions(self) -> bool:
        """True for an uploaded predictions file (scored as given, never run)."""
        return self.Kind(self.kind) is self.Kind.PREDICTIONS

    @property
    def runs_in_registry(self) -> bool:
        """True for a Hugging Face directory, the only artefact the model registry loads and runs."""
        return self.Kind(self.kind) is self.Kind.HF_DIRECTORY

    @property
    def is_endpoint(self) -> bool:
        """True for a connection to an OpenAI-compatible API (its ``endpoint`` row, ``tasks/loop/endpoints/``)."""
        return self.Kind(self.kind) is self.Kind.ENDPOINT

    @property
    def answers(self) -> bool:
        """True when the registry can answer with this model: a directory it loads or an endpoint it calls."""
        return self.runs_in_registry or self.is_endpoint

    #: One rule for every model a person adds to a task, whatever its kind (an uploaded archive, a
    #: predictions file, an endpoint, a registered directory, a selection): it is published unless they
    #: untick it, so it joins the public boards (leaderboard, arena) once evaluated. The forms, the API
    #: and the services take this default; the column's own default (False) serves records the platform
    #: writes itself, which say what they want.
    PUBLISHED_BY_DEFAULT = True

    def __str__(self):
        return f"{self.name} ({self.task.code})"


class Dataset(models.Model):
    """A named set of items of a task, optionally tied to a round, scored by evaluation runs.

    ``access``: ``scoring`` (evaluated, counts towards Dynascore with ``weight``) or
    ``standard`` (evaluated, not scored). ``label_visibility``: ``public`` (targets may be
    downloaded) or ``hidden`` (targets never leave the server except to the task's owners and
    admins: ``tasks.selectors.can_see_labels``). Test splits and scoring datasets are hidden
    unless an owner publishes their labels (``tasks.services.publish_labels``, recorded in
    ``labels_published_by``/``labels_published_at``); see ``default_label_visibility``.

    Provenance: ``item_count``, ``checksum`` (sha256 of the canonical content, see
    ``tasks.services.dataset_content_checksum``), ``version`` (bumped whenever the content
    changes), ``source`` (round and split, or the imported file) with ``source_checksum`` (the
    file's sha256), ``created_at`` and ``content_changed_at``.
    """

    class Access(models.TextChoices):
        SCORING = "scoring", "Scoring"
        STANDARD = "standard", "Standard"

    class LabelVisibility(models.TextChoices):
        PUBLIC = "public", "Public"
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
    label_visibility = models.CharField(
        max_length=8, choices=LabelVisibility.choices, default=LabelVisibility.HIDDEN,
        help_text="Hidden: targets never leave the server except to the task's owners and admins.",
    )
    labels_published_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
        help_text="The owner who made a hidden set's labels public.",
    )
    labels_published_at = models.DateTimeField(null=True, blank=True)
    split = models.CharField(max_length=8, choices=Split.choices, blank=True, default="")
    weight = models.FloatField(default=1.0)
    source = models.CharField(max_length=1024, blank=True, help_text="Round and split, or the file it was imported from.")
    source_checksum = models.CharField(max_length=64, blank=True, help_text="sha256 of the imported file.")
    checksum = models.CharField(max_length=64, blank=True, help_text="sha256 of the canonical content.")
    item_count = models.PositiveIntegerField(default=0)
    version = models.PositiveIntegerField(default=1, help_text="Bumped each time the content changes.")
    created_at = models.DateTimeField(auto_now_add=True)
    content_changed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["task", "round__number", "name"]
        constraints = [
            models.UniqueConstraint(fields=["task", "name"], name="dataset_name_unique_per_task"),
            models.CheckConstraint(condition=Q(weight__gte=0), name="dataset_weight_nonnegative"),
        ]

    def __str__(self):
        return f"{self.task.code}/{self.name}"

    @property
    def labels_hidden(self) -> bool:
        """True when the targets stay on the server for everyone but the task's owners and admins."""
        return self.label_visibility == self.LabelVisibility.HIDDEN


def default_label_visibility(*, split: str, access: str) -> str:
    """The label visibility a new dataset gets: ``hidden`` for a test split or a scoring
    dataset (labels that would let anyone score perfectly), ``public`` otherwise (train, and
    dev or unsplit sets that do not count toward the Dynascore)."""
    if split == Dataset.Split.TEST or access == Dataset.Access.SCORING:
        return Dataset.LabelVisibility.HIDDEN
    return Dataset.LabelVisibility.PUBLIC


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


class TaskRole(models.Model):
    """A role granted on one task: ``annotator`` (writes examples) or ``validator`` (validates them).

    A task's owners are ``Task.owners``; the site-wide groups of ``dynabench.roles`` still count
    on every task. Grants and revocations go through ``tasks.access`` (``grant_role`` and
    ``revoke_role``), which every surface calls.
    """

    class Role(models.TextChoices):
        ANNOTATOR = "annotator", "Annotator"
        VALIDATOR = "validator", "Validator"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="role_grants")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="task_roles")
    role = models.CharField(max_length=16, choices=Role.choices)
    granted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["task", "user", "role"]
        constraints = [models.UniqueConstraint(fields=["task", "user", "role"], name="task_role_unique")]

    def __str__(self):
        return f"{self.user} {self.role} on {self.task.code}"


class TaskBan(models.Model):
    """A user banned from one task: they write and validate nothing there, and their pending
    examples leave the review queue (``validation.queue.review_queue``)."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="bans")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="task_bans")
    reason = models.CharField(max_length=500, blank=True)
    banned_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["task", "-created_at"]
        constraints = [models.UniqueConstraint(fields=["task", "user"], name="task_ban_unique")]

    def __str__(self):
        return f"{self.user} banned from {self.task.code}"


class Upload(models.Model):
    """A contexts or dataset file an owner uploaded through the console, and what became of it.

    Stages: ``mapping`` (stored, waiting for the column-to-field mapping), ``queued`` (an RQ
    job will import it), ``running``, ``done`` (``result`` holds the summary), ``failed``
    (``errors`` holds at most the first 20 line-numbered problems, ``error_count`` them all).
    The import itself is ``tasks.data.importers`` (all-or-nothing); ``tasks.data.uploads`` runs it.
    """

    class Target(models.TextChoices):
        CONTEXTS = "contexts", "Contexts of a round"
        DATASET = "dataset", "Dataset"

    class Status(models.TextChoices):
        MAPPING = "mapping", "Waiting for the column mapping"
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Importing"
        DONE = "done", "Done"
        FAILED = "failed", "Refused"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="uploads")
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    target = models.CharField(max_length=16, choices=Target.choices)
    file = models.FileField(upload_to="uploads/%Y/%m/")
    original_name = models.CharField(max_length=255)
    format = models.CharField(max_length=8)
    size = models.PositiveBigIntegerField(default=0, help_text="Bytes.")
    rows = models.PositiveIntegerField(default=0, help_text="Records counted when the file was stored.")
    columns = models.JSONField(default=list, blank=True, help_text="Column names (CSV header, or JSON keys and dotted paths).")
    options = models.JSONField(default=dict, blank=True, help_text="Round number, or dataset name/split/access.")
    mapping = models.JSONField(default=dict, blank=True, help_text="{task field: column}, uid and tag columns.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.MAPPING)
    result = models.JSONField(default=dict, blank=True)
    errors = models.JSONField(default=list, blank=True)
    error_count = models.PositiveIntegerField(default=0)
    job_id = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"upload {self.pk} of {self.original_name} to {self.task.code}"


class Endpoint(models.Model):
    """The connection of an ``MLModel`` of kind ``endpoint``: an OpenAI-compatible API.

    ``base_url`` ends before ``/v1`` or includes it (``http://host:8000`` or
    ``http://host:8000/v1``); ``api`` picks ``/v1/chat/completions`` (messages),
    ``/v1/completions`` (one prompt) or ``/v1/audio/transcriptions`` (a clip, multipart: the
    speech recognition kind's). ``params``: the parameters sent with every call (``temperature``,
    ``top_p``, ``max_tokens``, ``seed``, ``stop``; for transcriptions ``language``, ``prompt``,
    ``temperature``). ``prompt``:
    overrides of the task kind's prompt template (``system``, ``user``; ``$field``
    placeholders, ``TaskKindSpec.endpoint_prompt``). The API key is either encrypted in
    ``api_key_encrypted`` (Fernet under a key derived from ``SECRET_KEY``) or read from the
    environment variable ``api_key_env`` (its name must start with
    ``settings.DYNABENCH_ENDPOINT_KEY_ENV_PREFIX``); it is never shown back (no serializer,
    page, admin field, export or log line carries it). ``consents``: the purposes its submitter lets the
    task's owners call it for (``tasks/loop/gate.py`` refuses any other).
    Rules: ``tasks/loop/endpoints/``.
    """

    class Api(models.TextChoices):
        CHAT = "chat", "/v1/chat/completions"
        COMPLETIONS = "completions", "/v1/completions"
        TRANSCRIPTIONS = "transcriptions", "/v1/audio/transcriptions"

    model = models.OneToOneField(MLModel, on_delete=models.CASCADE, related_name="endpoint")
    base_url = models.URLField(max_length=500)
    api = models.CharField(max_length=16, choices=Api.choices, default=Api.CHAT)
    model_name = models.CharField(max_length=200, help_text="The `model` field sent to the API.")
    params = models.JSONField(default=dict, blank=True, help_text="temperature, top_p, max_tokens, seed, stop "
                                                                "(transcriptions: language, prompt, temperature).")
    prompt = models.JSONField(default=dict, blank=True, help_text="Overrides of the kind's template: system, user.")
    api_key_encrypted = models.TextField(blank=True, editable=False)
    api_key_env = models.CharField(max_length=100, blank=True, help_text="Environment variable holding the key.")
    timeout_s = models.FloatField(default=30.0, help_text="Seconds one call may take (connect and read).")
    max_retries = models.PositiveSmallIntegerField(default=3, help_text="Retries after a 429, a 5xx or a lost connection.")
    max_concurrency = models.PositiveSmallIntegerField(default=4, help_text="Calls in flight at once, per process.")
    consents = models.JSONField(
        default=list, blank=True,
        help_text="The purposes besides evaluation its submitter lets the task's owners use it for (tasks.loop.gate_models.Purpose: "
                  "loop, assist, generate, transfer, judge). Only the submitter gives or revokes them.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"{self.model_name} at {self.base_url}"

    @property
    def loop_allowed(self) -> bool:
        """Whether the submitter consented to annotation loops (``"loop"`` in ``consents``)."""
        return "loop" in (self.consents or [])

    def __repr__(self):
        return f"<Endpoint {self.pk}: {self.model_name} at {self.base_url}>"


class EndpointResponse(models.Model):
    """One answer of an endpoint, cached by the request it answered (``key``: sha256 of the model
    name, the API, the parameters and the messages), so a resumed evaluation never asks twice."""

    model = models.ForeignKey(MLModel, on_delete=models.CASCADE, related_name="endpoint_responses")
    key = models.CharField(max_length=64)
    text = models.TextField(blank=True)
    raw = models.JSONField(default=dict, help_text="The answer's choice (text, finish reason) and usage, as sent.")
    latency_ms = models.FloatField(default=0.0, help_text="Wall time of the call that answered, retries included.")
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["model", "key"], name="endpoint_response_unique")]


class ContextImage(models.Model):
    """An image a task's owner uploaded (``tasks.data.images``): checked, stripped of metadata, stored
    under its content hash (``images/<sha256>.<ext>`` and ``images/thumbs/<sha256>.jpg`` in the
    default storage). A context's image field holds the ``sha256``. ``original_name`` is the
    uploaded file's name, shown to the task's owners only (it may carry a label)."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="images")
    sha256 = models.CharField(max_length=64, help_text="sha256 of the cleaned bytes; the stored name.")
    ext = models.CharField(max_length=8, help_text="png, jpg, webp or gif.")
    width = models.PositiveIntegerField()
    height = models.PositiveIntegerField()
    size = models.PositiveBigIntegerField(help_text="Bytes of the cleaned image.")
    original_name = models.CharField(max_length=255, blank=True)
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["task", "sha256"], name="context_image_unique_per_task")]
        indexes = [models.Index(fields=["sha256"], name="context_image_sha256")]

    def __str__(self):
        return f"{self.task.code} image {self.sha256[:12]}"


class ContextAudio(models.Model):
    """An audio clip a task's owner uploaded (``tasks.data.audio``): checked, decoded, stored without
    metadata under its content hash: ``audio/<sha256>.flac`` (the clip as uploaded, channels and rate
    kept, 16-bit FLAC) and ``audio/16k/<sha256>.flac`` (16 kHz mono, what speech models read). A
    context's audio field holds the ``sha256``; ``original_name`` is shown to the task's owners only."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="audio_clips")
    sha256 = models.CharField(max_length=64, help_text="sha256 of the stored FLAC; the stored name.")
    source_format = models.CharField(max_length=8, help_text="WAV, FLAC, OGG or MP3, as uploaded.")
    sample_rate = models.PositiveIntegerField(help_text="Hz, as uploaded.")
    channels = models.PositiveSmallIntegerField()
    duration_s = models.FloatField(help_text="Seconds.")
    size = models.PositiveBigIntegerField(help_text="Bytes of the stored FLAC.")
    original_name = models.CharField(max_length=255, blank=True)
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["task", "sha256"], name="context_audio_unique_per_task")]
        indexes = [models.Index(fields=["sha256"], name="context_audio_sha256")]

    def __str__(self):
        return f"{self.task.code} clip {self.sha256[:12]}"


from tasks.loop.gate_models import ModelCall, Purpose, RoundSpend  # noqa: E402,F401  (models of their own module)
