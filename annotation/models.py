"""Examples written by annotators against the model in the loop."""

from django.conf import settings
from django.db import models


class ValidationState(models.TextChoices):
    PENDING = "pending", "Pending"
    VERIFIED_CORRECT = "verified_correct", "Verified correct"
    VERIFIED_INCORRECT = "verified_incorrect", "Verified incorrect"
    FLAGGED = "flagged", "Flagged"


class Example(models.Model):
    """An example written by an annotator for a context, with the model's answer to it.

    - ``input``: every model input field, context fields included, e.g.
      ``{"premise": "...", "hypothesis": "..."}``.
    - ``target``: the annotator's answer, ``{"label": "..."}`` or
      ``{"answers": [{"text": "...", "answer_start": 17}]}``.
    - ``model_output``: the model's full answer, ``{"label", "probs"}`` or
      ``{"answer", "start", "end", "score"}``; ``model_wrong`` is decided on the server.
    - ``validation_state`` and the ``*_count`` columns are derived from the example's
      validations and written in the same transaction as each validation
      (``validation/services.py``); ``manage.py reconcile_counters`` rechecks them.
    - ``leased_to``/``leased_until``: the review queue's lease, so two validators are never
      handed the same example at the same time.
    """

    round = models.ForeignKey("tasks.Round", on_delete=models.CASCADE, related_name="examples")
    context = models.ForeignKey("tasks.Context", on_delete=models.CASCADE, related_name="examples")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="examples")
    input = models.JSONField(default=dict)
    target = models.JSONField(default=dict)
    model = models.ForeignKey(
        "tasks.MLModel", on_delete=models.SET_NULL, null=True, blank=True, related_name="examples"
    )
    model_output = models.JSONField(default=dict)
    model_wrong = models.BooleanField()
    metadata = models.JSONField(default=dict, blank=True, help_text="Explanations, flag reason.")
    tag = models.CharField(max_length=64, blank=True, default="")
    retracted = models.BooleanField(default=False)
    flagged = models.BooleanField(default=False, help_text="Flagged by its author.")
    split = models.CharField(max_length=8, blank=True, default="", help_text="train/dev/test once the round is closed.")
    time_spent = models.FloatField(null=True, blank=True, help_text="Seconds from context shown to submit.")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    validation_state = models.CharField(
        max_length=24, choices=ValidationState.choices, default=ValidationState.PENDING
    )
    validation_count = models.PositiveIntegerField(default=0)
    correct_count = models.PositiveIntegerField(default=0)
    incorrect_count = models.PositiveIntegerField(default=0)
    flagged_count = models.PositiveIntegerField(default=0)
    leased_to = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    leased_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            # The review queue: fooling first, fewest validations, oldest.
            models.Index(
                fields=["round", "validation_state", "model_wrong", "validation_count", "created_at"],
                name="example_review_queue",
            ),
            models.Index(fields=["author", "created_at"], name="example_author_daily"),
            models.Index(fields=["round", "author"], name="example_round_author"),
        ]

    def __str__(self):
        return f"example {self.pk} ({self.round})"
