"""A user's notifications and notification preferences."""

from django.conf import settings
from django.db import models


class Notification(models.Model):
    """One message to one user: ``kind``, plain-text ``message`` (escaped when shown), a link on the
    platform, when it was read and when it was emailed. ``key`` names the event it reports
    (``model_evaluated:12``), unique per user, so a job run twice notifies once."""

    class Kind(models.TextChoices):
        EXAMPLE_VALIDATED = "example_validated", "Your example was validated"
        MODEL_EVALUATED = "model_evaluated", "Your model was evaluated"
        MODEL_FAILED = "model_failed", "Your model's evaluation failed"
        ROUND_OPENED = "round_opened", "A round of a task you work on opened"
        ROUND_CLOSED = "round_closed", "A round you worked on closed"
        PROPOSAL_DECIDED = "proposal_decided", "Your task proposal was decided"
        STUDY_COMPLETION_CODE = "study_completion_code", "A crowd study you joined has your completion code"
        BADGE_EARNED = "badge_earned", "You earned a badge"
        ENDPOINT_MISCONFIGURED = "endpoint_misconfigured", "An endpoint model refused its requests as misconfigured"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications")
    kind = models.CharField(max_length=32, choices=Kind.choices)
    key = models.CharField(max_length=128)
    message = models.TextField()
    url = models.CharField(max_length=512, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    read_at = models.DateTimeField(null=True, blank=True)
    emailed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["user", "key"], name="notification_once_per_event")]
        indexes = [models.Index(fields=["user", "read_at"], name="notification_unread")]

    def __str__(self):
        return f"{self.user_id}: {self.message[:60]}"


class NotificationPreference(models.Model):
    """What a user wants to hear about: ``email`` (also by email, or in-app only), ``digest`` (the
    emails gathered into one a day instead of one each) and ``muted`` (kinds not to be notified of
    at all). No row: everything, one email each."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notification_preference")
    email = models.BooleanField(default=True)
    digest = models.BooleanField(default=False)
    muted = models.JSONField(default=list, blank=True)

    def wants(self, kind: str) -> bool:
        return kind not in (self.muted or [])


class TaskBadges(models.Model):
    """A task's owners may turn badges off for it (no row: on)."""

    task = models.OneToOneField("tasks.Task", on_delete=models.CASCADE, primary_key=True, related_name="badge_setting")
    enabled = models.BooleanField(default=True)


class TaskProposal(models.Model):
    """A task proposed by a signed-in user, waiting for an admin's decision.

    ``definition`` is what ``tasks.data.seed.create_task`` takes (the uploaded definition file with the
    form's code, name, kind, instructions, labels and licence set in it), ``definition_text`` the
    file as uploaded (its problems are reported by line). Approval creates the task through
    ``create_task`` and makes the proposer its owner (``task``); "changes requested" sends it back
    with ``review_message`` for the proposer to revise (``revision`` counts the versions).
    Everything the proposer wrote is plain text shown escaped, except ``instructions`` (Markdown,
    rendered through nh3 as every task's instructions are).
    """

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting for review"
        CHANGES_REQUESTED = "changes_requested", "Changes requested"
        APPROVED = "approved", "Approved"
        REJECTED = "rejected", "Rejected"

    proposer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="task_proposals")
    code = models.SlugField(max_length=64)
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=32)
    instructions = models.TextField()
    license = models.CharField(max_length=500, blank=True)
    definition = models.JSONField(default=dict)
    definition_text = models.TextField(blank=True)
    dataset_file = models.FileField(upload_to="proposals/", blank=True)
    dataset_name = models.CharField(max_length=255, blank=True, help_text="The first dataset file's original name.")
    status = models.CharField(max_length=24, choices=Status.choices, default=Status.PENDING)
    review_message = models.TextField(blank=True)
    reviewed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    decided_at = models.DateTimeField(null=True, blank=True)
    revision = models.PositiveIntegerField(default=1)
    task = models.ForeignKey("tasks.Task", null=True, blank=True, on_delete=models.SET_NULL, related_name="proposals")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["status", "created_at"], name="proposal_queue")]

    def __str__(self):
        return f"{self.code} ({self.get_status_display()})"
