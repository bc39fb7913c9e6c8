"""The records of conversations not judged yet (``annotation/chat_drafts.py``): the draft and each turn
the server accepted."""

from django.conf import settings
from django.db import models


class ChatDraft(models.Model):
    """A conversation or side-by-side comparison not judged yet, kept on the server: its ``state`` (the
    context, the models, which the page never sees, each turn with its answers, the submission key).
    The page holds only a sealed reference to it. Judging it deletes it; a draft untouched for
    ``annotation.chat_drafts.DRAFT_MAX_AGE_S`` has expired and is removed."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    task = models.ForeignKey("tasks.Task", on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=64, unique=True, help_text="The conversation's submission key.")
    state = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["updated_at"], name="chatdraft_updated")]


class ChatTurn(models.Model):
    """One turn the server accepted: stored with its prompt before any model is asked, then ``done``
    with the answers or ``failed`` with the reason and the part of each answer that came."""

    class Status(models.TextChoices):
        RUNNING = "running", "The models are answering"
        DONE = "done", "Answered"
        FAILED = "failed", "Failed"

    draft = models.ForeignKey(ChatDraft, on_delete=models.CASCADE, related_name="turns")
    number = models.PositiveSmallIntegerField(help_text="0 for the first turn of the conversation.")
    prompt = models.TextField()
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.RUNNING)
    answers = models.JSONField(default=list, blank=True, help_text="Per side: the answer's record, or the text that came.")
    reason = models.TextField(blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["draft", "pk"]
