"""A task's dataset releases and the owner's draft of their card text."""

from django.conf import settings
from django.db import models
from django.db.models import Q


class Release(models.Model):
    """One frozen version of a task's public datasets.

    ``version``: semantic version ``MAJOR.MINOR.PATCH`` (``releases.calculations.next_version``),
    empty until the job has compared the content with the previous published release. ``status``:
    ``queued`` → ``building`` → ``published`` or ``failed`` (``failure_reason``); ``progress`` 0..1
    while building. ``dataset_ids``: the datasets the owner picked (empty: every public dataset of
    every closed round). ``manifest``: ``{"files": [{"name", "size", "sha256", "rows", "round",
    "split", "format"}]}`` of the public files under ``storage_prefix``; ``sha256``: the release's
    content digest (sha256 of the sorted ``"<sha256>  <name>\\n"`` lines of its data files, as
    ``sha256sum`` writes them). ``hidden_manifest``: the same for the owner-only artefact of hidden
    sets (``hidden_prefix``), never served to anyone else. ``changelog``: against the previous
    published release, ``{"previous", "added", "removed", "relabelled"}`` each ``{"count", "uids"}``.
    ``stats``: the datasheet's figures read from the platform's records when built (not editable).
    ``card_text``: the owner's free text (motivation, intended uses, limitations) as written into the
    card. A published release's files are never changed.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        BUILDING = "building", "Building"
        PUBLISHED = "published", "Published"
        FAILED = "failed", "Failed"

    task = models.ForeignKey("tasks.Task", on_delete=models.CASCADE, related_name="releases")
    version = models.CharField(max_length=32, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    progress = models.FloatField(default=0.0)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    dataset_ids = models.JSONField(default=list, blank=True)
    license = models.CharField(max_length=500, blank=True)
    sha256 = models.CharField(max_length=64, blank=True)
    example_count = models.PositiveIntegerField(default=0)
    size = models.PositiveBigIntegerField(default=0, help_text="Bytes of the public files.")
    manifest = models.JSONField(default=dict, blank=True)
    hidden_manifest = models.JSONField(default=dict, blank=True)
    changelog = models.JSONField(default=dict, blank=True)
    stats = models.JSONField(default=dict, blank=True)
    card_text = models.JSONField(default=dict, blank=True)
    failure_reason = models.TextField(blank=True)
    job_id = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    published_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["task", "-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["task", "version"], condition=~Q(version=""), name="release_version_unique_per_task"),
        ]

    def __str__(self):
        return f"{self.task.code} {self.version or '(building)'}"

    @property
    def storage_prefix(self) -> str:
        """Where the public files live in Django's default storage."""
        return f"releases/{self.task.code}/{self.pk}/"

    @property
    def hidden_prefix(self) -> str:
        """Where the owner-only files of hidden sets live (never under ``storage_prefix``)."""
        return f"release-hidden/{self.task.code}/{self.pk}/"


class ReleaseCardText(models.Model):
    """The owner's draft of a task's dataset-card free text, copied into each release built after
    it is saved: ``motivation``, ``intended_uses`` and ``limitations`` (Markdown)."""

    task = models.OneToOneField("tasks.Task", on_delete=models.CASCADE, related_name="release_card_text")
    motivation = models.TextField(blank=True)
    intended_uses = models.TextField(blank=True)
    limitations = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"card text of {self.task_id}"
